// Host CPU busy percentage (cpu_percent) and, opt-in, per logical CPU (cpu.{i}.cpu_percent), from the
// tick counters of /proc/stat. The first sample has no previous reading and reports the average since
// boot. A CPU that goes offline between two readings is skipped; counters that go backwards (a CPU
// hot-plugged back in restarts them) are treated as a fresh start.
#include <fmt/format.h>

#include "collectors/linux/cpu/cpu_metrics.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

std::optional<double> BusyPercent(const CpuTimes& now, const std::optional<CpuTimes>& before) {
  CpuTimes base = before.value_or(CpuTimes{});
  if (now.total < base.total || now.busy < base.busy) base = CpuTimes{};
  const uint64_t total = now.total - base.total;
  if (total == 0) return std::nullopt;
  return 100.0 * static_cast<double>(now.busy - base.busy) / static_cast<double>(total);
}

class HostCpuCollector final : public Collector {
 public:
  explicit HostCpuCollector(const CollectorContext& ctx)
      : stat_file_(ctx.paths.Proc("stat"), Generated::kWhole), per_core_(ctx.settings.per_core_cpu) {}

  std::string_view Name() const override { return cpu_metrics::kHostCpu.source; }

  Status Collect(const Tick&, MetricBatch& out) override {
    auto text = stat_file_.Read();
    if (!text) return Error{text.error()};
    auto stat = ParseProcStat(*text);
    if (!stat) return Error{FileError(stat_file_.path(), stat.error())};
    if (auto percent = BusyPercent(stat->all, previous_ ? std::optional(previous_->all) : std::nullopt)) {
      out.Add(cpu_metrics::kHostCpu, *percent);
    }
    if (per_core_) {
      for (size_t i = 0; i < stat->per_cpu.size(); ++i) {
        if (!stat->per_cpu[i]) continue;
        std::optional<CpuTimes> before;
        if (previous_ && i < previous_->per_cpu.size()) before = previous_->per_cpu[i];
        if (auto percent = BusyPercent(*stat->per_cpu[i], before)) {
          out.Add(cpu_metrics::kCoreCpu, std::to_string(i), *percent);
        }
      }
    }
    previous_ = std::move(*stat);
    return OkStatus();
  }

 private:
  KeptOpenFile stat_file_;
  bool per_core_;
  std::optional<ProcStat> previous_;
};

}  // namespace

std::unique_ptr<Collector> MakeHostCpuCollector(const CollectorContext& ctx) {
  return std::make_unique<HostCpuCollector>(ctx);
}

}  // namespace runmon
