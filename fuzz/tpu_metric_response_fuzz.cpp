// Fuzzes DecodeMetricResponse (the tpu-runtime-metrics module's decoder of a serialized MetricResponse): no
// crash, leak or hang on broken, deep or huge input; an error always says something; a decoded reading stays
// within the decoder's bounds (metrics, buckets, quantiles, kvlist entries, string sizes), so the collector
// can trust what it gets; and the same bytes decode the same twice.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "collectors/tpu/runtime_metric_decode.hpp"
#include "collectors/tpu/runtime_metrics_client.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace runmon::tpu;

void CheckWithinBounds(const RuntimeMetricReading& reading) {
  FUZZ_CHECK(reading.name.size() <= kMaxStringBytes && reading.description.size() <= kMaxStringBytes);
  FUZZ_CHECK(reading.metrics.size() <= static_cast<std::size_t>(kMaxMetricsPerResponse));
  for (const MetricReading& metric : reading.metrics) {
    const ReadingAttribute& attribute = metric.attribute;
    FUZZ_CHECK(attribute.key.size() <= kMaxStringBytes);
    FUZZ_CHECK(!(attribute.int_value && attribute.string_value));
    FUZZ_CHECK(!attribute.string_value || attribute.string_value->size() <= kMaxStringBytes);
    FUZZ_CHECK(attribute.entries.size() <= static_cast<std::size_t>(kMaxAttributeEntries));
    for (const AttributeEntry& entry : attribute.entries) {
      FUZZ_CHECK(entry.key.size() <= kMaxStringBytes);
      FUZZ_CHECK(entry.string_value.has_value() != entry.int_value.has_value());
      FUZZ_CHECK(!entry.string_value || entry.string_value->size() <= kMaxStringBytes);
    }
    if (const auto* summary = std::get_if<SummaryReading>(&metric.measure)) {
      FUZZ_CHECK(summary->quantiles.size() <= static_cast<std::size_t>(kMaxQuantiles));
    }
    if (const auto* distribution = std::get_if<DistributionReading>(&metric.measure)) {
      FUZZ_CHECK(distribution->bucket_counts.size() <= static_cast<std::size_t>(kMaxBuckets) + 2);
      FUZZ_CHECK(distribution->buckets.bounds.size() <= static_cast<std::size_t>(kMaxBuckets));
      FUZZ_CHECK(distribution->buckets.num_finite_buckets >= 0 &&
                 distribution->buckets.num_finite_buckets <= kMaxBuckets);
      FUZZ_CHECK(distribution->buckets.kind == BucketKind::kExplicit || distribution->buckets.bounds.empty());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = runmon::fuzz::AsText(data, size);
  const auto reading = DecodeMetricResponse(bytes);
  const auto again = DecodeMetricResponse(bytes);
  FUZZ_CHECK(reading.ok() == again.ok());
  if (!reading.ok()) {
    FUZZ_CHECK(!reading.error().empty() && reading.error() == again.error());
    return 0;
  }
  CheckWithinBounds(*reading);
  FUZZ_CHECK(reading->name == again->name && reading->metrics.size() == again->metrics.size());
  return 0;
}
