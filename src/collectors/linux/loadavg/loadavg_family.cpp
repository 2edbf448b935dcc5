// The system load family: /proc/loadavg's 1, 5 and 15 minute load averages, in the host lane (one small
// read per tick). A file that cannot be read or parsed is this tick's error and nothing is written; one
// that does not exist (a fixture tree without it) is not mentioned.
#include <cerrno>
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/linux/loadavg/loadavg_metrics.hpp"
#include "collectors/linux/loadavg/loadavg_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon::collector_families {
namespace {

class LoadavgCollector final : public Collector {
 public:
  explicit LoadavgCollector(const CollectorContext& ctx)
      : file_(ctx.paths.Proc("loadavg"), Generated::kWhole) {}

  std::string_view Name() const override { return loadavg_metrics::kLoad1.source; }

  Status Collect(const Tick&, MetricBatch& out) override {
    auto text = file_.Read();
    if (!text && file_.last_errno() == ENOENT) return OkStatus();  // not on this host: nothing to say
    if (!text) return Error{text.error()};
    auto loads = ParseLoadAverages(*text);
    if (!loads) return Error{FileError(file_.path(), loads.error())};
    out.Add(loadavg_metrics::kLoad1, loads->one);
    out.Add(loadavg_metrics::kLoad5, loads->five);
    out.Add(loadavg_metrics::kLoad15, loads->fifteen);
    return OkStatus();
  }

 private:
  KeptOpenFile file_;
};

FamilyStart Start(const CollectorContext& ctx) {
  return FamilyStart::Of(std::make_unique<LoadavgCollector>(ctx));
}

}  // namespace

const CollectorFamily& loadavg() {
  static constexpr CollectorFamily kFamily{.name = "loadavg", .lane = "host", .start = Start};
  return kFamily;
}

}  // namespace runmon::collector_families
