// Fuzzes ParsePidStat (/proc/PID/stat, comm with spaces and parentheses): no crash, sane fields.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto stat = runmon::ParsePidStat(runmon::fuzz::AsText(data, size));
  if (!stat) {
    FUZZ_CHECK(!stat.error().empty());
    return 0;
  }
  FUZZ_CHECK(stat->pid > 0);
  FUZZ_CHECK(stat->num_threads >= 0);
  FUZZ_CHECK(!runmon::fuzz::HasSpace(std::string_view(&stat->state, 1)));
  return 0;
}
