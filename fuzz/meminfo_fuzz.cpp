// Fuzzes ParseMeminfo (/proc/meminfo) and Meminfo::Available: no crash, MemTotal > 0, and the
// MemFree + Buffers + Cached estimate does not wrap around.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto info = runmon::ParseMeminfo(runmon::fuzz::AsText(data, size));
  if (!info) {
    FUZZ_CHECK(!info.error().empty());
    return 0;
  }
  FUZZ_CHECK(info->total_bytes > 0);
  const auto available = info->Available();
  if (info->available_bytes) {
    FUZZ_CHECK(available == info->available_bytes);
  } else if (available) {
    FUZZ_CHECK(info->free_bytes && info->buffers_bytes && info->cached_bytes);
    FUZZ_CHECK(*available >= *info->free_bytes);
    FUZZ_CHECK(*available >= *info->buffers_bytes);
    FUZZ_CHECK(*available >= *info->cached_bytes);
  }
  return 0;
}
