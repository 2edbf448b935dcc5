// Fuzzes ParseProcPidCgroup (/proc/PID/cgroup): no crash; paths are absolute, controller names non-empty.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto entries = runmon::ParseProcPidCgroup(runmon::fuzz::AsText(data, size));
  if (!entries) {
    FUZZ_CHECK(!entries.error().empty());
    return 0;
  }
  for (const auto& entry : *entries) {
    FUZZ_CHECK(entry.hierarchy_id >= 0);
    FUZZ_CHECK(!entry.path.empty() && entry.path.front() == '/');
    FUZZ_CHECK(entry.path.find('\n') == std::string::npos);
    for (const auto& controller : entry.controllers) {
      FUZZ_CHECK(!controller.empty());
      FUZZ_CHECK(controller.find(',') == std::string::npos && controller.find(':') == std::string::npos);
    }
  }
  return 0;
}
