// From what libtpu said to tpu.* keys (metrics.md B §7.3): the metric registry (each metric's SDK aliases,
// its service name, its shape and its descriptors; tpu_registry.cpp) and the pure conversions of both
// sources, fuzzed (fuzz/tpu_sdk_values_fuzz.cpp, fuzz/tpu_service_reading_fuzz.cpp).
//
// The SDK answers strings: a gauge's values are one number per device (per chip for the duty cycle, which
// stands for duty_cycle_fanout devices); a labelled distribution's are CSV lines "label, v1, v2, ..."
// (outer brackets and quotes trimmed) whose stats are named from their count and the description; a flat
// one is one CSV line or one number per line; a colon-keyed one is "label: value" lines. The service
// answers protobuf (runtime_metric_reading.hpp): a gauge's device is its attribute's int_attr, a
// distribution's label its string_attr or kvlist entry; summaries give mean = sum / count and their
// quantiles, distributions their mean and p50/p90/p95/p99/p999 interpolated inside the cumulative buckets.
//
// Where runmon differs from W&B (docs/tpu.md): device d of the service is tpu.d (W&B's fallback moves
// the v2/v3 HBM gauges of device 1 to tpu.2), and ids beyond the host's devices are numbered by their
// order; kvlist labels (buffer-size, device_ordinal) are read, not
// replaced by item_<i>; several series of one label (several processes, several metrics with one label) are
// merged, bucket counts summed when the buckets agree, as tpu-info does; an SDK distribution of six values
// is named mean..p999, and one of another count (W&B's stat0..) is left out, since no key of the registry
// names it; and values that cannot be true (a percentage outside 0-100, HBM in use above the total,
// negative latencies, a device beyond the host's) are left out.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/tpu/libtpu_sdk.hpp"
#include "collectors/tpu/runtime_metric_reading.hpp"
#include "collectors/tpu/tpu_metrics.hpp"
#include "core/sample.hpp"

namespace runmon::tpu {

enum class Shape { kGauge, kDutyCycle, kLabeledDistribution, kFlatDistribution, kColonKeyed };

struct MetricSpec {
  std::span<const std::string_view> sdk_names =
      {};                              // aliases, in the order they are tried; empty: service only
  std::string_view service_name = {};  // empty: SDK only
  Shape shape = Shape::kGauge;
  const MetricDescriptor* key = nullptr;                // gauges, the duty cycle, colon-keyed
  const tpu_metrics::StatDescriptors* stats = nullptr;  // distributions
};

// The registry, in B §7.3's order.
std::span<const MetricSpec> MetricSpecs();

struct DeviceLayout {
  unsigned duty_cycle_fanout = 1;
  unsigned device_count = 0;        // devices the PCI scan found; 0: unknown (no bound on device indices)
  double max_device_hbm_bytes = 0;  // the most HBM a device can have (twice its chip's); 0: no bound
};

// A metric's labels (latency series, queue sizes) come from the workload's process, through a loopback
// port any local process could serve: at most this many distinct labels per metric and tick, each at most
// this long once sanitised; the others are dropped and counted.
inline constexpr size_t kMaxLabelsPerMetric = 64;
inline constexpr size_t kMaxLabelBytes = 64;

// One tick's keys: each key once (the first value set wins), in key order.
class TpuSample {
 public:
  void Set(const MetricDescriptor& descriptor, std::string_view placeholder, double value);
  void SetDevice(const MetricDescriptor& descriptor, unsigned device, double value);
  bool Has(const MetricDescriptor& descriptor, std::string_view placeholder) const;
  // Whether `label` may be one of `spec`'s this tick (kMaxLabelsPerMetric, kMaxLabelBytes); counts it if not.
  bool AdmitLabel(const MetricSpec& spec, const std::string& label);
  size_t dropped_labels() const { return dropped_labels_; }
  // tpu.{d}.hbmMemoryUsage for every device with both HBM figures.
  void AddHbmMemoryUsage();
  void AppendTo(MetricBatch& out) const;
  size_t size() const { return values_.size(); }

 private:
  std::map<std::string, double, std::less<>> values_;
  std::map<unsigned, bool> devices_;  // devices with a value
  std::map<const MetricSpec*, std::set<std::string>> labels_;
  size_t dropped_labels_ = 0;
};

// The SDK's values of one metric; how many keys they gave (0: the service is asked instead).
size_t EmitSdkValues(const MetricSpec& spec, const SdkMetricValues& values, const DeviceLayout& layout,
                     TpuSample& out);

// One port's answer for a metric, with the offset its device numbers get (DeviceOffsets).
struct PortReading {
  const RuntimeMetricReading* reading = nullptr;
  uint64_t device_offset = 0;
};

// The service's answers for one metric, one per port in TPU_RUNTIME_METRICS_PORTS order (several processes
// of one workload); how many keys they gave.
size_t EmitServiceReadings(const MetricSpec& spec, std::span<const PortReading> readings,
                           const DeviceLayout& layout, TpuSample& out);

// The devices a port's answer for a per-device gauge speaks of (a chip's value stands for its devices),
// before the port's offset; empty for other metrics.
std::set<uint64_t> ReportedDevices(const MetricSpec& spec, const RuntimeMetricReading& reading,
                                   const DeviceLayout& layout);

// Each port's device offset, from the devices each reported (all its gauges together, or what it reported
// last): a port whose devices repeat those of the ports before it (each process of a multi-process
// PyTorch/XLA workload calls its own chip device 0) is numbered after them; ports reporting host-wide ids
// keep theirs. The same offsets serve every metric of a tick, so a device's values come from one process.
std::vector<uint64_t> DeviceOffsets(std::span<const std::set<uint64_t>> devices_per_port);

// The label rules (exposed for tests): lower case, '+' -> "_plus_", '%' -> "pct", every run of other
// characters outside [a-z0-9] -> one '_', '_' trimmed; empty -> "unknown".
std::string SanitizeLabel(std::string_view label);

// The stat names of an SDK distribution of `count` values (W&B's rule, six values added); empty when the
// count names none.
std::span<const tpu_metrics::Stat> StatsForCount(std::string_view description, size_t count);

// A distribution's percentile by linear interpolation inside its cumulative buckets (W&B's rule); nullopt
// without buckets or samples.
std::optional<double> DistributionPercentile(const DistributionReading& distribution, double quantile);
// The same within upper bounds computed once for a distribution's several percentiles.
std::optional<double> PercentileWithin(const DistributionReading& distribution,
                                       const std::vector<double>& bounds, double quantile);

}  // namespace runmon::tpu
