// MetricResponse -> RuntimeMetricReading (runtime_metric_decode.hpp). Only what runmon reads is carried: a
// gauge's as_double or as_int (as_string, as_bool, a counter or no measure leave the measure empty), a
// summary, a distribution with its bucket layout, and the attribute's int_attr, string_attr and kvlist
// entries whose value is a string or an integer. Unknown fields of a newer libtpu were skipped by protobuf.
#include "collectors/tpu/runtime_metric_decode.hpp"

#include <fmt/format.h>

#include <string>

#include "collectors/tpu/runtime_metrics_client.hpp"

namespace runmon::tpu {
namespace {

namespace proto = ::tpu::monitoring::runtime;

// The first bound a response breaks, named for the error message.
class Bounds {
 public:
  void String(std::string_view what, const std::string& value) {
    if (value.size() > kMaxStringBytes && problem_.empty()) {
      problem_ = fmt::format("{} of {} bytes (at most {})", what, value.size(), kMaxStringBytes);
    }
  }
  void Count(std::string_view what, int count, int limit) {
    if (count > limit && problem_.empty()) problem_ = fmt::format("{} {} (at most {})", count, what, limit);
  }
  void Fail(std::string problem) {
    if (problem_.empty()) problem_ = std::move(problem);
  }
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

AttributeEntry EntryFromAttribute(const proto::Attribute& attribute, Bounds& bounds) {
  bounds.String("an attribute key", attribute.key());
  AttributeEntry entry{.key = attribute.key(), .string_value = {}, .int_value = {}};
  const proto::AttrValue& value = attribute.value();
  if (value.has_string_attr()) {
    bounds.String("an attribute value", value.string_attr());
    entry.string_value = value.string_attr();
  } else if (value.has_int_attr()) {
    entry.int_value = value.int_attr();
  }
  return entry;
}

ReadingAttribute AttributeOf(const proto::Attribute& attribute, Bounds& bounds) {
  bounds.String("an attribute key", attribute.key());
  ReadingAttribute reading{.key = attribute.key(), .int_value = {}, .string_value = {}, .entries = {}};
  const proto::AttrValue& value = attribute.value();
  if (value.has_int_attr()) {
    reading.int_value = value.int_attr();
  } else if (value.has_string_attr()) {
    bounds.String("an attribute value", value.string_attr());
    reading.string_value = value.string_attr();
  } else if (value.has_kvlist_attr()) {
    const auto& entries = value.kvlist_attr().attributes();
    bounds.Count("attribute entries", entries.size(), kMaxAttributeEntries);
    if (entries.size() > kMaxAttributeEntries) return reading;
    for (const proto::Attribute& entry : entries) {
      AttributeEntry plain = EntryFromAttribute(entry, bounds);
      if (plain.string_value || plain.int_value) reading.entries.push_back(std::move(plain));
    }
  }
  return reading;
}

SummaryReading SummaryOf(const proto::Summary& summary, Bounds& bounds) {
  SummaryReading reading{
      .sample_count = summary.sample_count(), .sample_sum = summary.sample_sum(), .quantiles = {}};
  bounds.Count("quantiles", summary.quantile_size(), kMaxQuantiles);
  if (summary.quantile_size() > kMaxQuantiles) return reading;
  reading.quantiles.reserve(static_cast<std::size_t>(summary.quantile_size()));
  for (const proto::Quantile& quantile : summary.quantile()) {
    reading.quantiles.emplace_back(quantile.quantile(), quantile.value());
  }
  return reading;
}

BucketLayout LayoutOf(const proto::Distribution::BucketOptions& options, Bounds& bounds) {
  BucketLayout layout;
  auto finite = [&](std::int32_t count) {
    if (count < 0) bounds.Fail(fmt::format("a bucket layout with {} finite buckets", count));
    bounds.Count("finite buckets", count, kMaxBuckets);
    return count;
  };
  if (options.has_exponential_buckets()) {
    const auto& exponential = options.exponential_buckets();
    layout.kind = BucketKind::kExponential;
    layout.num_finite_buckets = finite(exponential.num_finite_buckets());
    layout.growth_factor = exponential.growth_factor();
    layout.scale = exponential.scale();
  } else if (options.has_linear_buckets()) {
    const auto& linear = options.linear_buckets();
    layout.kind = BucketKind::kLinear;
    layout.num_finite_buckets = finite(linear.num_finite_buckets());
    layout.width = linear.width();
    layout.offset = linear.offset();
  } else if (options.has_explicit_buckets()) {
    const auto& bounds_list = options.explicit_buckets().bounds();
    bounds.Count("explicit bucket bounds", bounds_list.size(), kMaxBuckets);
    if (bounds_list.size() > kMaxBuckets) return layout;
    layout.kind = BucketKind::kExplicit;
    layout.bounds.assign(bounds_list.begin(), bounds_list.end());
  }
  return layout;
}

DistributionReading DistributionOf(const proto::Distribution& distribution, Bounds& bounds) {
  DistributionReading reading{
      .count = distribution.count(), .mean = distribution.mean(), .buckets = {}, .bucket_counts = {}};
  if (distribution.has_bucket_options()) reading.buckets = LayoutOf(distribution.bucket_options(), bounds);
  // The underflow and overflow buckets come on top of the finite ones.
  bounds.Count("bucket counts", distribution.bucket_counts_size(), kMaxBuckets + 2);
  if (distribution.bucket_counts_size() > kMaxBuckets + 2) return reading;
  reading.bucket_counts.assign(distribution.bucket_counts().begin(), distribution.bucket_counts().end());
  return reading;
}

Measure MeasureOf(const proto::Metric& metric, Bounds& bounds) {
  switch (metric.measure_case()) {
    case proto::Metric::kGauge:
      if (metric.gauge().has_as_double()) return metric.gauge().as_double();
      if (metric.gauge().has_as_int()) return static_cast<double>(metric.gauge().as_int());
      return std::monostate{};
    case proto::Metric::kSummary:
      return SummaryOf(metric.summary(), bounds);
    case proto::Metric::kDistribution:
      return DistributionOf(metric.distribution(), bounds);
    case proto::Metric::kCounter:
    case proto::Metric::MEASURE_NOT_SET:
      break;
  }
  return std::monostate{};
}

}  // namespace

Result<RuntimeMetricReading> ReadingFromResponse(const proto::MetricResponse& response) {
  if (!response.has_metric()) return Error{"a MetricResponse without a metric"};
  const proto::TPUMetric& metric = response.metric();
  Bounds bounds;
  bounds.String("the metric's name", metric.name());
  bounds.String("the metric's description", metric.description());
  bounds.Count("metrics", metric.metrics_size(), kMaxMetricsPerResponse);
  if (!bounds.problem().empty()) return Error{fmt::format("a MetricResponse with {}", bounds.problem())};

  RuntimeMetricReading reading{.name = metric.name(), .description = metric.description(), .metrics = {}};
  reading.metrics.reserve(static_cast<std::size_t>(metric.metrics_size()));
  for (const proto::Metric& entry : metric.metrics()) {
    MetricReading plain{.attribute = AttributeOf(entry.attribute(), bounds),
                        .measure = MeasureOf(entry, bounds)};
    if (!bounds.problem().empty()) {
      return Error{fmt::format("{}: a metric with {}", metric.name().substr(0, 200), bounds.problem())};
    }
    reading.metrics.push_back(std::move(plain));
  }
  return reading;
}

Result<RuntimeMetricReading> DecodeMetricResponse(std::string_view serialized) {
  if (serialized.size() > kMaxResponseBytes) {
    return Error{
        fmt::format("a MetricResponse of {} bytes (at most {})", serialized.size(), kMaxResponseBytes)};
  }
  proto::MetricResponse response;
  if (!response.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
    return Error{fmt::format("{} bytes that are not a MetricResponse", serialized.size())};
  }
  return ReadingFromResponse(response);
}

}  // namespace runmon::tpu
