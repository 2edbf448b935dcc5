// runmon.remoteWrite.*: how each --remote-write destination keeps up (queue length, oldest pending age, sent
// and dropped values), read from the app's remote writer through the context at every tick. The writer
// counts in memory, so a pass never touches the disk or the network; its counters are since runmon started,
// the meaning of MetricKind::kSinceStart.
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/self/self_metrics.hpp"

namespace runmon {
namespace {

class RemoteWriteStatusCollector final : public Collector {
 public:
  explicit RemoteWriteStatusCollector(std::function<std::vector<RemoteWriteCounts>()> counts)
      : counts_(std::move(counts)) {}

  std::string_view Name() const override { return "remote-write"; }

  Status Collect(const Tick& /*tick*/, MetricBatch& out) override {
    const std::vector<RemoteWriteCounts> destinations = counts_();
    for (size_t i = 0; i < destinations.size(); ++i) {
      const std::string destination = std::to_string(i);
      const RemoteWriteCounts& counts = destinations[i];
      out.Add(self_metrics::kRemoteWritePendingSamples, destination,
              static_cast<double>(counts.pending_samples));
      out.Add(self_metrics::kRemoteWriteOldestPendingSeconds, destination, counts.oldest_pending_age_seconds);
      out.Add(self_metrics::kRemoteWriteSentSamples, destination, static_cast<double>(counts.sent_samples));
      out.Add(self_metrics::kRemoteWriteDroppedSamples, destination,
              static_cast<double>(counts.dropped_samples));
    }
    return OkStatus();
  }

 private:
  std::function<std::vector<RemoteWriteCounts>()> counts_;
};

}  // namespace

std::unique_ptr<Collector> MakeRemoteWriteStatusCollector(const CollectorContext& ctx) {
  if (!ctx.remote_write_counts) return nullptr;
  return std::make_unique<RemoteWriteStatusCollector>(ctx.remote_write_counts);
}

}  // namespace runmon
