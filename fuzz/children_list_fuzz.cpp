// Fuzzes ParseChildrenList (/proc/PID/task/TID/children): no crash; every PID is in 1..INT32_MAX.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto pids = runmon::ParseChildrenList(runmon::fuzz::AsText(data, size));
  if (!pids) {
    FUZZ_CHECK(!pids.error().empty());
    return 0;
  }
  FUZZ_CHECK(pids->size() <= size / 2 + 1);  // each PID needs a digit and a separator
  for (long pid : *pids) FUZZ_CHECK(pid > 0 && pid <= INT32_MAX);
  return 0;
}
