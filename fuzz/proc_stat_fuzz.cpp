// Fuzzes ParseProcStat (/proc/stat): no crash, and every parsed CpuTimes has busy <= total.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto stat = runmon::ParseProcStat(runmon::fuzz::AsText(data, size));
  if (!stat) {
    FUZZ_CHECK(!stat.error().empty());
    return 0;
  }
  FUZZ_CHECK(stat->all.busy <= stat->all.total);
  FUZZ_CHECK(stat->per_cpu.size() <= 65536);
  for (const auto& cpu : stat->per_cpu) {
    if (cpu) FUZZ_CHECK(cpu->busy <= cpu->total);
  }
  return 0;
}
