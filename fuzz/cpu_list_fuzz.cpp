// Fuzzes ParseCpuListCount ("0-3,8,10-11"): no crash; an accepted list counts 1..2^20 CPUs.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto count = runmon::ParseCpuListCount(runmon::fuzz::AsText(data, size));
  if (!count) {
    FUZZ_CHECK(!count.error().empty());
    return 0;
  }
  FUZZ_CHECK(*count >= 1);
  FUZZ_CHECK(*count <= (1u << 20));
  return 0;
}
