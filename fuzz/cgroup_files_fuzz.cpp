// Fuzzes the cgroup value files: ParseCgroupCpuMax, ParseCgroupMemoryLimit and FindKeyedValue.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);

  if (const auto cpus = runmon::ParseCgroupCpuMax(text); cpus && *cpus) {
    FUZZ_CHECK(std::isfinite(**cpus) && **cpus > 0);
  }
  if (const auto limit = runmon::ParseCgroupMemoryLimit(text); limit && *limit) {
    FUZZ_CHECK(**limit > 0 && **limit < (uint64_t{1} << 62));
  }
  // The keys runmon reads, and the input's own first word (so the fuzzer can reach the match path).
  for (std::string_view key : {"usage_usec", "nr_throttled", "throttled_usec", "oom_kill", "oom", "max",
                               "under_oom", ""}) {
    (void)runmon::FindKeyedValue(text, key);
  }
  const size_t end = text.find_first_of(" \t\n");
  const std::string_view first_word = text.substr(0, end);
  if (!first_word.empty() && end != std::string_view::npos) {
    // A "key value" first line with a decimal value must be found.
    const auto value = runmon::FindKeyedValue(text, first_word);
    (void)value;
  }
  return 0;
}
