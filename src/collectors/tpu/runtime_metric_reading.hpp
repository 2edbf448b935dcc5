// One answer of libtpu's runtime-metrics service (tpu_runtime_metrics.proto's TPUMetric) in runmon's own
// plain form: what the gRPC module decodes a response into and what the TPU collector turns into tpu.*
// keys (tpu_emit.hpp). The collector never sees a protobuf type, so the executable needs no gRPC or
// protobuf code of its own for the TPU, and the conversion is a pure function over these structs (fuzzed).
// Only what runmon reads is carried: attribute values of other kinds (bool, double, array, bytes) and
// counters are left out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace runmon::tpu {

// One entry of a kvlist attribute: its key and its value, when it is a string or an integer.
struct AttributeEntry {
  std::string key = {};
  std::optional<std::string> string_value = {};  // string_attr
  std::optional<std::int64_t> int_value = {};    // int_attr
};

// Metric.attribute. The device (or chip) of a per-device gauge is the top-level int_attr; the label of a
// distribution is the top-level string_attr or, in newer libtpu, an entry of the kvlist (buffer-size,
// device_ordinal as a string or an integer, core_type).
struct ReadingAttribute {
  std::string key = {};
  std::optional<std::int64_t> int_value = {};    // value.int_attr
  std::optional<std::string> string_value = {};  // value.string_attr
  std::vector<AttributeEntry> entries = {};      // value.kvlist_attr.attributes
};

struct SummaryReading {
  std::uint64_t sample_count = 0;
  double sample_sum = 0;
  std::vector<std::pair<double, double>> quantiles = {};  // (quantile 0..1, value)
};

enum class BucketKind { kNone, kExponential, kLinear, kExplicit };

// Distribution.bucket_options: N = num_finite_buckets + 2 buckets (underflow and overflow included) for
// the exponential and linear layouts, bounds.size() + 1 for explicit bounds.
struct BucketLayout {
  BucketKind kind = BucketKind::kNone;
  std::int32_t num_finite_buckets = 0;
  double growth_factor = 0;         // exponential
  double scale = 0;                 // exponential
  double width = 0;                 // linear
  double offset = 0;                // linear
  std::vector<double> bounds = {};  // explicit
};

struct DistributionReading {
  std::int64_t count = 0;
  double mean = 0;
  BucketLayout buckets = {};
  std::vector<std::int64_t> bucket_counts = {};
};

// Metric.measure: a gauge's number (as_double, or as_int converted), a summary or a distribution; anything
// else (a counter, a string or bool gauge, no measure) is std::monostate.
using Measure = std::variant<std::monostate, double, SummaryReading, DistributionReading>;

struct MetricReading {
  ReadingAttribute attribute = {};
  Measure measure = {};
};

struct RuntimeMetricReading {
  std::string name = {};
  std::string description = {};
  std::vector<MetricReading> metrics = {};
};

}  // namespace runmon::tpu
