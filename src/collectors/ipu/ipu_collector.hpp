// Graphcore IPUs (metrics.md A.1, B §6; accelerators.md §5; docs/ipu.md), as W&B's legacy collector read
// them: gcipuinfo's getDevices() every tick, through runmon's Python helper (ipu_helper.hpp), or gc-info's
// device info where the module is missing and the command-line tools are installed (ipu_source.hpp). The
// collector runs in a lane of its own ("ipu"): each tick it asks its source and waits for the answer at
// most `wait_seconds`; without one in time the tick has no IPU keys and an error (none while the source
// is starting: python3 and the module's import take a while, and most hosts have no module), and a source
// that has not answered several requests in a row for `hung_after_seconds` is ended and started again. When
// the module cannot be imported and there is no gc-info, the collector ends quietly (Ended()), the reason
// kept.
//
// Keys: ipu.{id}.<field> through W&B's parse_metric (ipu_parse.hpp), for the devices the run uses (whose
// `user process id` is in the monitored tree), or every device when no process is monitored (--pid
// 0). The first time a device is seen, every numeric field is written; after that only the variable
// ones (temperatures, clock, power, the two utilisations), as W&B does. A value that cannot be true (a
// share outside 0-100 %, a temperature below absolute zero or above 200 °C, a negative power or clock) is
// left out. The devices' metadata, ipu = {device_count, devices, vendor}, is published with the first
// answer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/collector.hpp"
#include "collectors/ipu/ipu_parse.hpp"
#include "collectors/ipu/ipu_source.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

// Starts a source answering into the given IpuAnswers.
using IpuSourceStarter =
    std::function<std::unique_ptr<ipu::IpuSource>(std::shared_ptr<ipu::IpuAnswers> answers)>;

struct IpuSourceStarters {
  IpuSourceStarter helper;   // the gcipuinfo helper; null without python3
  IpuSourceStarter gc_info;  // gc-info; null without it
};

// Reads the devices from the helper, switching to gc-info for good once the helper says the module is
// missing (see the header comment for the waits and the hung rule).
class IpuReader {
 public:
  IpuReader(IpuSourceStarters starters, std::function<double()> monotonic_seconds, double hung_after_seconds);

  // The devices now, or why not; waits at most `wait_seconds` for them.
  Result<std::vector<ipu::IpuDevice>> Read(double wait_seconds);

  // Whether the source is still starting (it has said nothing yet).
  bool starting() const { return answers_ && !answers_->Heard(); }

  // Why there is no source at all (the module is missing and there is no gc-info); nullopt while there is.
  const std::optional<std::string>& absent_reason() const { return absent_reason_; }

 private:
  // Starts the next source when the current one says the module is missing; false when none is left.
  bool EnsureSource();
  void NoteMissedAnswer(double asked_at);

  IpuSourceStarters starters_;
  std::function<double()> monotonic_seconds_;
  double hung_after_seconds_;
  std::shared_ptr<ipu::IpuAnswers> answers_;
  std::unique_ptr<ipu::IpuSource> source_;
  bool on_gc_info_ = false;
  uint64_t last_request_ = 0;
  int missed_in_a_row_ = 0;
  std::optional<double> unanswered_since_;
  std::optional<std::string> absent_reason_;
};

struct IpuOptions {
  HostPaths paths;
  std::optional<long> pid;  // root of the monitored tree; unset or <= 0: every device
  bool whole_tree = true;   // false: the root process alone (--no-process-tree)
  double wait_seconds = 2.0;
  double hung_after_seconds = 10.0;
  std::function<void(const nlohmann::json&)> publish_metadata;  // wandb-metadata.json fields
  std::function<double()> monotonic_seconds;                    // set
  IpuSourceStarters starters;
};

// The waits for an interval: an answer within min(interval / 2, 2 s); hung after no answer for
// max(3 intervals, 10 s).
void SetIpuWaits(IpuOptions& options, double interval_seconds);

std::unique_ptr<Collector> MakeIpuCollector(IpuOptions options);

// W&B's IPU metadata: {"ipu": {device_count, devices: [{id, board ipu index, board type}], vendor}}.
nlohmann::json DescribeIpuDevices(const std::vector<ipu::IpuDevice>& devices);

}  // namespace runmon
