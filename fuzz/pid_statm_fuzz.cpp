// Fuzzes ParsePidStatmResidentPages (/proc/PID/statm): no crash; an accepted text has a second field; and
// PagesToBytes on the pages found: a product is given only when it fits (no wrap-around).
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  const auto pages = runmon::ParsePidStatmResidentPages(text);
  if (!pages) {
    FUZZ_CHECK(!pages.error().empty());
    return 0;
  }
  // At least "a b": two fields and one separator.
  FUZZ_CHECK(text.size() >= 3);
  for (const uint64_t page_bytes : {uint64_t{4096}, uint64_t{65536}, uint64_t{1} << 40}) {
    if (const auto bytes = runmon::PagesToBytes(*pages, page_bytes)) {
      FUZZ_CHECK(*bytes / page_bytes == *pages);
    } else {
      FUZZ_CHECK(*pages > UINT64_MAX / page_bytes);
    }
  }
  return 0;
}
