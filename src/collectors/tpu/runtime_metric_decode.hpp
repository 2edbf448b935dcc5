// The module's side of decoding (runtime_metrics_client.hpp's DecodeMetricResponse): a MetricResponse,
// parsed by protobuf (from bytes, or by gRPC off the wire), into runmon's plain RuntimeMetricReading.
// A response is the workload's, so what one may carry is bounded; over a bound, or without a metric, it is
// an error that says which bound.
#pragma once

#include <cstddef>

#include "collectors/tpu/runtime_metric_reading.hpp"
#include "core/result.hpp"
#include "tpu/tpu_runtime_metrics.pb.h"

namespace runmon::tpu {

inline constexpr std::size_t kMaxResponseBytes = 32u << 20;  // one serialized MetricResponse
inline constexpr int kMaxMetricsPerResponse = 65536;         // TPUMetric.metrics
inline constexpr int kMaxBuckets = 4096;                     // bucket counts, bounds, finite buckets
inline constexpr int kMaxQuantiles = 256;                    // Summary.quantile
inline constexpr int kMaxAttributeEntries = 256;             // a kvlist's attributes
inline constexpr std::size_t kMaxStringBytes = 64u << 10;    // every string: names, keys, values

// The plain form of a parsed response; an error when it has no metric or exceeds a bound.
Result<RuntimeMetricReading> ReadingFromResponse(const ::tpu::monitoring::runtime::MetricResponse& response);

}  // namespace runmon::tpu
