// Test helper: a MetricResponse in proto3's JSON mapping (as tests/fixtures/tpu/*.json hold them: camelCase
// names, 64-bit integers as strings) turned into the TPU collector's plain reading, so that the conversion
// tests need no gRPC or protobuf code (the module's decoder has tests of its own).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "collectors/tpu/runtime_metric_reading.hpp"

namespace runmon::test {

inline std::int64_t JsonInt(const nlohmann::json& value) {
  return value.is_string() ? std::stoll(value.get<std::string>()) : value.get<std::int64_t>();
}

inline tpu::ReadingAttribute AttributeFromJson(const nlohmann::json& attribute) {
  tpu::ReadingAttribute out;
  out.key = attribute.value("key", "");
  const nlohmann::json value = attribute.value("value", nlohmann::json::object());
  if (value.contains("intAttr")) out.int_value = JsonInt(value["intAttr"]);
  if (value.contains("stringAttr")) out.string_value = value["stringAttr"].get<std::string>();
  if (value.contains("kvlistAttr")) {
    for (const auto& entry : value["kvlistAttr"].value("attributes", nlohmann::json::array())) {
      tpu::AttributeEntry item{.key = entry.value("key", "")};
      const nlohmann::json entry_value = entry.value("value", nlohmann::json::object());
      if (entry_value.contains("stringAttr"))
        item.string_value = entry_value["stringAttr"].get<std::string>();
      if (entry_value.contains("intAttr")) item.int_value = JsonInt(entry_value["intAttr"]);
      out.entries.push_back(std::move(item));
    }
  }
  return out;
}

inline tpu::BucketLayout BucketsFromJson(const nlohmann::json& options) {
  tpu::BucketLayout layout;
  if (options.contains("exponentialBuckets") || options.contains("exponential_buckets")) {
    const auto& e = options.contains("exponentialBuckets") ? options["exponentialBuckets"]
                                                           : options["exponential_buckets"];
    layout.kind = tpu::BucketKind::kExponential;
    layout.num_finite_buckets = e.value("numFiniteBuckets", e.value("num_finite_buckets", 0));
    layout.growth_factor = e.value("growthFactor", e.value("growth_factor", 0.0));
    layout.scale = e.value("scale", 0.0);
  } else if (options.contains("linearBuckets") || options.contains("linear_buckets")) {
    const auto& l = options.contains("linearBuckets") ? options["linearBuckets"] : options["linear_buckets"];
    layout.kind = tpu::BucketKind::kLinear;
    layout.num_finite_buckets = l.value("numFiniteBuckets", l.value("num_finite_buckets", 0));
    layout.width = l.value("width", 0.0);
    layout.offset = l.value("offset", 0.0);
  } else if (options.contains("explicitBuckets")) {
    layout.kind = tpu::BucketKind::kExplicit;
    layout.bounds = options["explicitBuckets"].value("bounds", std::vector<double>{});
  }
  return layout;
}

inline tpu::DistributionReading DistributionFromJson(const nlohmann::json& d) {
  tpu::DistributionReading out;
  out.count = d.contains("count") ? JsonInt(d["count"]) : 0;
  out.mean = d.value("mean", 0.0);
  if (d.contains("bucketOptions")) out.buckets = BucketsFromJson(d["bucketOptions"]);
  if (d.contains("bucket_options")) out.buckets = BucketsFromJson(d["bucket_options"]);
  for (const auto& key : {"bucketCounts", "bucket_counts"}) {
    if (d.contains(key)) {
      for (const auto& count : d[key]) out.bucket_counts.push_back(JsonInt(count));
    }
  }
  return out;
}

inline tpu::RuntimeMetricReading ReadingFromJson(const nlohmann::json& response) {
  const nlohmann::json& metric = response.at("metric");
  tpu::RuntimeMetricReading out;
  out.name = metric.value("name", "");
  out.description = metric.value("description", "");
  for (const auto& item : metric.value("metrics", nlohmann::json::array())) {
    tpu::MetricReading reading;
    if (item.contains("attribute")) reading.attribute = AttributeFromJson(item["attribute"]);
    if (item.contains("gauge")) {
      const auto& gauge = item["gauge"];
      if (gauge.contains("asDouble")) reading.measure = gauge["asDouble"].get<double>();
      if (gauge.contains("asInt")) reading.measure = static_cast<double>(JsonInt(gauge["asInt"]));
    } else if (item.contains("distribution")) {
      reading.measure = DistributionFromJson(item["distribution"]);
    } else if (item.contains("summary")) {
      const auto& s = item["summary"];
      tpu::SummaryReading summary;
      summary.sample_count =
          s.contains("sampleCount") ? static_cast<std::uint64_t>(JsonInt(s["sampleCount"])) : 0;
      summary.sample_sum = s.value("sampleSum", 0.0);
      for (const auto& q : s.value("quantile", nlohmann::json::array())) {
        summary.quantiles.emplace_back(q.value("quantile", 0.0), q.value("value", 0.0));
      }
      reading.measure = summary;
    }
    out.metrics.push_back(std::move(reading));
  }
  return out;
}

}  // namespace runmon::test
