// The collector interface and what every collector is given. A collector reads one source (a kernel file
// family, later a vendor library or tool) through HostPaths and appends metrics to a batch on every tick.
// It may keep state between ticks (open files, previous counters for rates). It never throws across
// Collect: failures are a Status, which the sampler turns into backoff and visible state. A source that is
// gone for good (the monitored process and its descendants exited) is not a failure: the collector says so
// with Ended() and the sampler stops calling it, quietly.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/settings.hpp"
#include "core/result.hpp"
#include "core/sample.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct Tick {
  std::chrono::steady_clock::time_point monotonic;  // when the tick was due
  double wall_seconds = 0;                          // the same instant on the wall clock
  uint64_t index = 0;                               // 0 for the first sample
  bool final = false;                               // the extra sample taken at stop
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view Name() const = 0;
  // Adds static facts to the run's metadata (W&B's wandb-metadata.json layout). Called once.
  virtual void Probe(nlohmann::json& /*metadata*/) {}
  // Appends this tick's values. An error means this source produced nothing usable this time.
  virtual Status Collect(const Tick& tick, MetricBatch& out) = 0;
  // True once nothing more can come (checked after each Collect): the run's end for this source.
  virtual bool Ended() const { return false; }
};

// The clocks a collector may consult, injectable so fixture trees give deterministic results.
struct Clocks {
  // Seconds since boot on the clock /proc/PID/stat start times are measured with (CLOCK_BOOTTIME).
  std::function<double()> seconds_since_boot;
  // Monotonic seconds, for the length of an interval.
  std::function<double()> monotonic_seconds;
  static Clocks System();
};

}  // namespace runmon
