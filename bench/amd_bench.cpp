// amd_bench: what one AMD sample costs runmon, per card: the amd family's collector (every card's sysfs
// and hwmon files, kept open, parsed, keys emitted) on a host tree, repeated. CPU is getrusage(RUSAGE_SELF)
// over the loop. bench/run_amd_bench.py runs it on the project's fake host tree beside Debian's rocm-smi
// reading the same tree (what W&B runs every sample).
// With PID, the run's share of each card (DRM fdinfo of that process tree, KFD) is read too.
// Usage: amd_bench ROOT [ticks=20000] [PID]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "bench_clock.hpp"
#include "collectors/builtin.hpp"

using runmon::bench::RusageCpuSeconds;
using runmon::bench::WallSeconds;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: amd_bench ROOT [ticks] [PID]\n");
    return 2;
  }
  const int ticks = argc > 2 ? std::atoi(argv[2]) : 20000;
  runmon::CollectorContext ctx;
  ctx.paths = runmon::HostPaths::Under(argv[1]);
  ctx.clocks = runmon::Clocks::System();
  if (argc > 3) ctx.pid = std::atol(argv[3]);
  const runmon::CollectorFamily* amd = nullptr;
  for (const auto* family : runmon::CollectorFamilies()) {
    if (family->name == "amd") amd = family;
  }
  if (amd == nullptr) return 1;
  auto started = amd->start(ctx);
  if (started.collectors.empty()) {
    std::fprintf(stderr, "amd_bench: no AMD GPU under %s: %s\n", argv[1], started.absent_reason.c_str());
    return 1;
  }
  auto& collector = *started.collectors.front();
  runmon::MetricBatch first;
  (void)collector.Collect({}, first);  // opens the files
  std::set<std::string> cards;         // "gpu.3": the cards that gave a value
  for (const auto& metric : first.items()) {
    if (!metric.key.starts_with("gpu.process.")) cards.insert(metric.key.substr(0, metric.key.find('.', 4)));
  }
  size_t keys = first.items().size();
  const double cpu = RusageCpuSeconds(), wall = WallSeconds();
  for (int i = 0; i < ticks; ++i) {
    runmon::MetricBatch batch;
    runmon::Tick tick;
    tick.index = static_cast<uint64_t>(i + 1);
    (void)collector.Collect(tick, batch);
    keys = batch.items().size();
  }
  const double cpu_per_tick = (RusageCpuSeconds() - cpu) / ticks,
               wall_per_tick = (WallSeconds() - wall) / ticks;
  std::printf(
      "amd %s sample: %.1f us CPU per card (%zu cards: %.1f us CPU, %.1f us wall per tick), %zu keys, "
      "%d ticks\n",
      ctx.pid ? "sysfs + run share" : "sysfs", cpu_per_tick * 1e6 / static_cast<double>(cards.size()),
      cards.size(), cpu_per_tick * 1e6, wall_per_tick * 1e6, keys, ticks);
  return 0;
}
