// Fuzzes ParsePidStatmResidentPages (/proc/PID/statm): no crash; an accepted text has a second field.
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
  return 0;
}
