// Fuzzes ParsePidSchedstatRuntimeNs (/proc/PID/schedstat): no crash; an accepted text has three fields.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  const auto runtime = runmon::ParsePidSchedstatRuntimeNs(text);
  if (!runtime) {
    FUZZ_CHECK(!runtime.error().empty());
    return 0;
  }
  FUZZ_CHECK(text.size() >= 5);  // "a b c"
  return 0;
}
