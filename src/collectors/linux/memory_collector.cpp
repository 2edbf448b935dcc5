// System memory: memory_percent and proc.memory.availableMB. Inside a memory-limited cgroup both are
// relative to the limit (usage re-read every tick from the cgroup that holds the tightest limit); when
// that usage file becomes unreadable the host numbers from /proc/meminfo are used for the tick, and the
// collector reports itself degraded, naming the file.
#include <algorithm>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/memory/memory_metrics.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

class MemoryCollector final : public Collector {
 public:
  explicit MemoryCollector(const CollectorContext& ctx)
      : meminfo_file_(ctx.paths.Proc("meminfo"), Generated::kWhole),
        limit_bytes_(ctx.facts.cgroup.memory_limit_bytes) {
    if (limit_bytes_) usage_file_ = KeptOpenFile(ctx.facts.cgroup.memory_usage_file, Generated::kWhole);
  }

  std::string_view Name() const override { return "memory"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    std::string usage_problem;
    if (limit_bytes_) {
      auto text = usage_file_.Read();
      const auto usage = text ? text::ParseU64(text::Trim(*text)) : std::nullopt;
      if (usage) {
        const double limit = static_cast<double>(*limit_bytes_);
        const double used = static_cast<double>(*usage);
        out.Add(memory_metrics::kUsedPercent, used / limit * 100.0);
        out.Add(memory_metrics::kAvailable, std::max(0.0, limit - used) / kMiB);
        return OkStatus();
      }
      usage_problem = text ? FileError(usage_file_.path(), "not a byte count") : text.error();
    }
    auto text = meminfo_file_.Read();
    if (!text) return Error{text.error()};
    auto info = ParseMeminfo(*text);
    if (!info) return Error{FileError(meminfo_file_.path(), info.error())};
    const auto available = info->Available();
    if (!available) {
      return Error{FileError(meminfo_file_.path(), "neither MemAvailable nor MemFree+Buffers+Cached")};
    }
    const double total = static_cast<double>(info->total_bytes);
    const double avail = static_cast<double>(std::min(*available, info->total_bytes));
    out.Add(memory_metrics::kUsedPercent, (total - avail) / total * 100.0);
    out.Add(memory_metrics::kAvailable, avail / kMiB);
    // The host's numbers stand in for the cgroup's this tick: degraded, and said why.
    if (!usage_problem.empty()) return Error{usage_problem + " (host memory used instead)"};
    return OkStatus();
  }

 private:
  KeptOpenFile meminfo_file_;
  std::optional<uint64_t> limit_bytes_;
  KeptOpenFile usage_file_;
};

}  // namespace

std::unique_ptr<Collector> MakeMemoryCollector(const CollectorContext& ctx) {
  return std::make_unique<MemoryCollector>(ctx);
}

}  // namespace runmon
