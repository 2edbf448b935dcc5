// Network traffic from /proc/net/dev, all interfaces including loopback (as W&B): network.sent and
// network.recv are bytes since the first sample, plus per-second rates over the last interval. Totals are
// accumulated per interface from positive deltas, so an interface that disappears (a container's veth
// going away) or whose counters reset does not make the totals go backwards. A file that lists no interface
// is an error, not zero traffic.
#include <map>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/network/network_metrics.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

class NetworkCollector final : public Collector {
 public:
  explicit NetworkCollector(const CollectorContext& ctx)
      : dev_file_(ctx.paths.Proc("net/dev"), Generated::kShortRecords), clocks_(ctx.clocks) {}

  std::string_view Name() const override { return network_metrics::kSent.source; }

  Status Collect(const Tick&, MetricBatch& out) override {
    auto text = dev_file_.Read();
    if (!text) return Error{text.error()};
    auto devices = ParseNetDev(*text);
    if (!devices) return Error{FileError(dev_file_.path(), devices.error())};
    // Every kernel lists at least lo: a file without interfaces measured nothing, which is not 0 bytes.
    if (devices->empty()) return Error{FileError(dev_file_.path(), "no interfaces")};
    const double now = clocks_.monotonic_seconds();
    uint64_t sent_delta = 0, recv_delta = 0;
    ++reading_;
    for (const auto& device : *devices) {
      auto [it, inserted] =
          last_.try_emplace(device.name, Counters{device.tx_bytes, device.rx_bytes, reading_});
      if (inserted) {
        // An interface seen after the first sample counts from zero; at the first sample it is the baseline.
        if (have_baseline_) {
          sent_delta += device.tx_bytes;
          recv_delta += device.rx_bytes;
        }
        continue;
      }
      // An interface listed twice in one reading (never by a kernel) counts once: its first line.
      if (it->second.reading == reading_) continue;
      sent_delta += CounterIncrease(device.tx_bytes, it->second.sent);
      recv_delta += CounterIncrease(device.rx_bytes, it->second.recv);
      it->second = Counters{device.tx_bytes, device.rx_bytes, reading_};
    }
    sent_total_ += sent_delta;
    recv_total_ += recv_delta;
    out.Add(network_metrics::kSent, static_cast<double>(sent_total_));
    out.Add(network_metrics::kReceived, static_cast<double>(recv_total_));
    if (have_baseline_ && now > last_time_) {
      out.Add(network_metrics::kSendRate, static_cast<double>(sent_delta) / (now - last_time_));
      out.Add(network_metrics::kReceiveRate, static_cast<double>(recv_delta) / (now - last_time_));
    }
    have_baseline_ = true;
    last_time_ = now;
    return OkStatus();
  }

 private:
  struct Counters {
    uint64_t sent;
    uint64_t recv;
    uint64_t reading;  // the reading_ these counters come from
  };
  KeptOpenFile dev_file_;
  Clocks clocks_;
  std::map<std::string, Counters, std::less<>> last_;
  uint64_t sent_total_ = 0, recv_total_ = 0;
  bool have_baseline_ = false;
  double last_time_ = 0;
  uint64_t reading_ = 0;  // net/dev readings so far
};

}  // namespace

std::unique_ptr<Collector> MakeNetworkCollector(const CollectorContext& ctx) {
  return std::make_unique<NetworkCollector>(ctx);
}

}  // namespace runmon
