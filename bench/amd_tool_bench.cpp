// amd_tool_bench: what the AMD family's tool fallback costs, for the side-by-side with a sysfs sample. One
// real `rocm-smi -a --json` call through RunTool (what W&B runs every sample): wall time, runmon's own CPU
// (getrusage SELF: spawn, pipes, reap) and the tool's (getrusage CHILDREN: the Python CLI and
// librocm_smi). On a host without an AMD GPU Debian's rocm-smi 5.2 exits 0 at once, printing nothing and
// saying "Driver not initialized" on stderr: that start-up cost is measured anyway and labelled so. Then
// runmon's parse of the W&B fixtures (ParseRocmSmiJson, ParseAmdSmiMetricJson) per call.
// Usage: amd_tool_bench [calls=5] [parses=2000] [tool=rocm-smi]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "bench_clock.hpp"
#include "collectors/amd/amd_smi_parse.hpp"
#include "collectors/amd/rocm_smi_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/tool_runner.hpp"

using runmon::bench::RusageCpuSeconds;
using runmon::bench::WallSeconds;

namespace {

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(RUNMON_FIXTURES_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename Parse>
void BenchParse(const char* label, const std::string& text, int parses, Parse parse) {
  const double cpu = RusageCpuSeconds(RUSAGE_SELF);
  size_t cards = 0;
  for (int i = 0; i < parses; ++i) {
    auto parsed = parse(text);
    if (!parsed.ok()) {
      std::printf("%s: %s\n", label, parsed.error().c_str());
      std::exit(1);
    }
    cards += parsed->size();
  }
  const double per_call = (RusageCpuSeconds(RUSAGE_SELF) - cpu) / parses;
  std::printf("%s (%zu bytes, %zu cards): %.1f us CPU per parse\n", label, text.size(), cards / parses,
              per_call * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 5;
  const int parses = argc > 2 ? std::atoi(argv[2]) : 2000;
  const std::string tool = argc > 3 ? argv[3] : "rocm-smi";

  runmon::ToolCommand command{.executable = tool, .arguments = {"-a", "--json"}};
  runmon::ToolLimits limits;
  limits.deadline_seconds = 60;
  double wall_total = 0, self_total = 0, child_total = 0;
  bool printed_json = false;
  std::string stderr_tail;
  for (int i = 0; i < calls; ++i) {
    const double wall = WallSeconds(), self = RusageCpuSeconds(RUSAGE_SELF),
                 child = RusageCpuSeconds(RUSAGE_CHILDREN);
    auto output = runmon::RunTool(command, limits);
    wall_total += WallSeconds() - wall;
    self_total += RusageCpuSeconds(RUSAGE_SELF) - self;
    child_total += RusageCpuSeconds(RUSAGE_CHILDREN) - child;
    if (!output.ok()) {
      std::printf("%s -a --json: %s\n", tool.c_str(), output.error().c_str());
      return 1;
    }
    printed_json = !runmon::text::Trim(output->stdout_text).empty();
    stderr_tail = output->stderr_tail;
  }
  std::printf("%s -a --json%s: %.0f ms wall, %.0f ms tool CPU, %.0f us runmon CPU per call (%d calls)\n",
              tool.c_str(), printed_json ? "" : " (no AMD GPU: it printed nothing, exit 0)",
              wall_total / calls * 1e3, child_total / calls * 1e3, self_total / calls * 1e6, calls);
  if (!printed_json && !stderr_tail.empty()) std::printf("  its stderr: %s\n", stderr_tail.c_str());

  BenchParse("ParseRocmSmiJson rocm5_mi250_2cards_full",
             ReadFixture("amd_rocm_smi/rocm5_mi250_2cards_full.json"), parses, runmon::amd::ParseRocmSmiJson);
  BenchParse("ParseAmdSmiMetricJson amdsmi6.2_mi300x_2gpus",
             ReadFixture("amd_smi/amdsmi6.2_mi300x_2gpus_metric_value_unit.json"), parses,
             runmon::amd::ParseAmdSmiMetricJson);
  return 0;
}
