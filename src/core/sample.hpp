// A sample: the metric values one sampling pass produced, keyed exactly as W&B names them
// ("cpu", "disk./.usageGB", ...). A value that could not be read is absent, never 0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/metric_descriptor.hpp"

namespace runmon {

struct Metric {
  std::string key;
  double value;
};

// What a collector appends to during one pass.
class MetricBatch {
 public:
  void Add(std::string key, double value) { items_.push_back({std::move(key), value}); }
  // The descriptor's key (its placeholder filled with `placeholder_value`): how collectors emit.
  void Add(const MetricDescriptor& descriptor, double value) { Add(std::string(descriptor.pattern), value); }
  void Add(const MetricDescriptor& descriptor, std::string_view placeholder_value, double value) {
    Add(MetricKey(descriptor, placeholder_value), value);
  }
  const std::vector<Metric>& items() const { return items_; }
  std::vector<Metric>& items() { return items_; }
  bool empty() const { return items_.empty(); }
  const Metric* Find(std::string_view key) const {
    for (const auto& m : items_) {
      if (m.key == key) return &m;
    }
    return nullptr;
  }

 private:
  std::vector<Metric> items_;
};

// How a collector's latest pass went when a sample was emitted: the exporter's per-collector series. Not
// metric values: the run log does not record them.
struct CollectorOutcome {
  std::string name;             // Collector::Name()
  double duration_seconds = 0;  // its latest Collect; one still stuck in it counts until the sample
  bool success = false;         // that Collect returned no error (one that is stuck: false)
};

// One emitted sample: every lane's batch for one tick, stamped with the tick's time.
struct Sample {
  double timestamp = 0;  // wall clock, seconds since the Unix epoch, at the tick
  double runtime = 0;    // seconds since the sampler started (monotonic clock)
  bool late = false;     // values from a lane that missed its tick's deadline, emitted on their own
  MetricBatch metrics;
  // On-time samples: every collector that has run, in lane order; late samples: none.
  std::vector<CollectorOutcome> collectors;
};

}  // namespace runmon
