// The monitor's own cost, in every sample (metrics.md A.3): runmon.cpuPercent (CPU time of the whole
// runmon process, all threads, during the last interval, as a percentage of one CPU, from getrusage) and
// runmon.rssMB (proc/self/statm). runmon.sampleMillis is added by the sampler, which times the pass.
#include <sys/resource.h>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/self/self_metrics.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double ProcessCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

class SelfCostCollector final : public Collector {
 public:
  explicit SelfCostCollector(const CollectorContext& ctx)
      : statm_file_(ctx.paths.Proc("self/statm"), Generated::kWhole),
        clocks_(ctx.clocks),
        page_bytes_(static_cast<double>(ctx.facts.page_size_bytes)) {
    last_cpu_ = ProcessCpuSeconds();
    last_time_ = clocks_.monotonic_seconds();
  }

  std::string_view Name() const override { return "runmon"; }

  Status Collect(const Tick& tick, MetricBatch& out) override {
    const double cpu = ProcessCpuSeconds();
    const double now = clocks_.monotonic_seconds();
    if (tick.index > 0 && now > last_time_)
      out.Add(self_metrics::kCpuPercent, 100.0 * (cpu - last_cpu_) / (now - last_time_));
    last_cpu_ = cpu;
    last_time_ = now;
    auto text = statm_file_.Read();
    if (!text) return Error{text.error()};
    auto pages = ParsePidStatmResidentPages(*text);
    if (!pages) return Error{FileError(statm_file_.path(), pages.error())};
    out.Add(self_metrics::kResidentMemory, static_cast<double>(*pages) * page_bytes_ / kMiB);
    return OkStatus();
  }

 private:
  KeptOpenFile statm_file_;
  Clocks clocks_;
  double page_bytes_;
  double last_cpu_ = 0;
  double last_time_ = 0;
};

}  // namespace

std::unique_ptr<Collector> MakeSelfCostCollector(const CollectorContext& ctx) {
  return std::make_unique<SelfCostCollector>(ctx);
}

}  // namespace runmon
