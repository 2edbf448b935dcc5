// Fuzzes the conversion of the runtime-metrics service's readings (collectors/tpu/tpu_emit.hpp: gauges,
// labelled attributes, summaries, distributions with any bucket layout and counts, several processes at
// once) for every metric of the registry: no crash, no hang, no overflow; every key is the catalog's,
// once; every value finite and one that can be true.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collectors/tpu/tpu_emit.hpp"
#include "core/catalog.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace runmon::tpu;

ReadingAttribute MakeAttribute(FuzzedDataProvider& input) {
  ReadingAttribute attribute;
  if (input.ConsumeBool()) attribute.int_value = input.ConsumeIntegral<int64_t>();
  if (input.ConsumeBool()) attribute.string_value = input.ConsumeRandomLengthString(32);
  const size_t entries = input.ConsumeIntegralInRange<size_t>(0, 3);
  static const char* const kKeys[] = {"buffer-size", "device_ordinal", "core_type", "device_id", "x"};
  for (size_t i = 0; i < entries; ++i) {
    AttributeEntry entry{.key = kKeys[input.ConsumeIntegralInRange<size_t>(0, 4)]};
    if (input.ConsumeBool()) entry.string_value = input.ConsumeRandomLengthString(16);
    if (input.ConsumeBool()) entry.int_value = input.ConsumeIntegral<int64_t>();
    attribute.entries.push_back(std::move(entry));
  }
  return attribute;
}

DistributionReading MakeDistribution(FuzzedDataProvider& input) {
  DistributionReading distribution;
  distribution.count = input.ConsumeIntegral<int64_t>();
  distribution.mean = input.ConsumeFloatingPoint<double>();
  distribution.buckets.kind = static_cast<BucketKind>(input.ConsumeIntegralInRange<int>(0, 3));
  distribution.buckets.num_finite_buckets = input.ConsumeIntegralInRange<int32_t>(-2, 5000);
  distribution.buckets.growth_factor = input.ConsumeFloatingPoint<double>();
  distribution.buckets.scale = input.ConsumeFloatingPoint<double>();
  distribution.buckets.width = input.ConsumeFloatingPoint<double>();
  distribution.buckets.offset = input.ConsumeFloatingPoint<double>();
  const size_t bounds = input.ConsumeIntegralInRange<size_t>(0, 8);
  for (size_t i = 0; i < bounds; ++i)
    distribution.buckets.bounds.push_back(input.ConsumeFloatingPoint<double>());
  const size_t counts = input.ConsumeIntegralInRange<size_t>(0, 12);
  for (size_t i = 0; i < counts; ++i) distribution.bucket_counts.push_back(input.ConsumeIntegral<int64_t>());
  return distribution;
}

RuntimeMetricReading MakeReading(FuzzedDataProvider& input) {
  RuntimeMetricReading reading;
  const size_t metrics = input.ConsumeIntegralInRange<size_t>(0, 6);
  for (size_t i = 0; i < metrics; ++i) {
    MetricReading metric;
    metric.attribute = MakeAttribute(input);
    switch (input.ConsumeIntegralInRange<int>(0, 3)) {
      case 0:
        break;
      case 1:
        metric.measure = input.ConsumeFloatingPoint<double>();
        break;
      case 2: {
        SummaryReading summary{.sample_count = input.ConsumeIntegral<uint64_t>(),
                               .sample_sum = input.ConsumeFloatingPoint<double>()};
        const size_t quantiles = input.ConsumeIntegralInRange<size_t>(0, 6);
        for (size_t q = 0; q < quantiles; ++q) {
          static const double kQuantiles[] = {0.5, 0.9, 0.95, 0.99, 0.999, 0.3};
          summary.quantiles.emplace_back(kQuantiles[input.ConsumeIntegralInRange<size_t>(0, 5)],
                                         input.ConsumeFloatingPoint<double>());
        }
        metric.measure = std::move(summary);
        break;
      }
      default:
        metric.measure = MakeDistribution(input);
    }
    reading.metrics.push_back(std::move(metric));
  }
  return reading;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  const DeviceLayout layout{.duty_cycle_fanout = input.ConsumeIntegralInRange<unsigned>(1, 2),
                            .device_count = input.ConsumeIntegralInRange<unsigned>(0, 16)};
  std::vector<RuntimeMetricReading> ports(input.ConsumeIntegralInRange<size_t>(1, 3));
  for (RuntimeMetricReading& port : ports) port = MakeReading(input);
  // Each port's offset from the devices its gauges report, as the collector numbers them.
  std::vector<std::set<uint64_t>> devices(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    for (const MetricSpec& spec : MetricSpecs()) devices[i].merge(ReportedDevices(spec, ports[i], layout));
  }
  const std::vector<uint64_t> offsets = DeviceOffsets(devices);
  FUZZ_CHECK(offsets.size() == ports.size());
  std::vector<PortReading> readings;
  for (size_t i = 0; i < ports.size(); ++i)
    readings.push_back({.reading = &ports[i], .device_offset = offsets[i]});
  TpuSample sample;
  for (const MetricSpec& spec : MetricSpecs()) EmitServiceReadings(spec, readings, layout, sample);
  FUZZ_CHECK(sample.size() <= MetricSpecs().size() * kMaxLabelsPerMetric * 6 + 16 * 9);
  sample.AddHbmMemoryUsage();
  runmon::MetricBatch batch;
  sample.AppendTo(batch);
  std::set<std::string> keys;
  for (const runmon::Metric& metric : batch.items()) {
    FUZZ_CHECK(keys.insert(metric.key).second);
    const runmon::MetricDefinition* definition = runmon::FindMetricDefinition(metric.key);
    FUZZ_CHECK(definition != nullptr && definition->source == "tpu");
    FUZZ_CHECK(std::isfinite(metric.value));
    if (definition->unit == "%") FUZZ_CHECK(metric.value >= 0 && metric.value <= 100);
    if (definition->unit != "score") FUZZ_CHECK(metric.value >= 0);
    if (layout.device_count > 0 && metric.key.starts_with("tpu.") && metric.key[4] >= '0' &&
        metric.key[4] <= '9') {
      FUZZ_CHECK(std::stoul(metric.key.substr(4)) < layout.device_count);
    }
  }
  return 0;
}
