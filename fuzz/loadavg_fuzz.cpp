// Fuzzes ParseLoadavgLastPid (/proc/loadavg): no crash; an accepted PID is in range.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  const auto pid = runmon::ParseLoadavgLastPid(text);
  if (!pid) {
    FUZZ_CHECK(!pid.error().empty());
    return 0;
  }
  FUZZ_CHECK(*pid >= 0 && *pid <= INT32_MAX);
  return 0;
}
