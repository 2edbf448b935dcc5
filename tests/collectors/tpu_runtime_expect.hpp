// For the TPU runtime-metrics tests: a decoded RuntimeMetricReading checked field by field against the
// MetricResponse it came from, as written in a fixture (proto3 JSON mapping: camelCase names, int64 and
// uint64 as strings, absent fields at their defaults), and the fixtures' paths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/tpu/runtime_metric_reading.hpp"

namespace runmon::tpu::test {

using Json = nlohmann::ordered_json;

inline std::filesystem::path TpuFixture(const std::string& name) {
  return std::filesystem::path(RUNMON_FIXTURES_DIR) / "tpu" / name;
}

inline Json ReadFixtureJson(const std::filesystem::path& path) {
  std::ifstream stream(path);
  return Json::parse(stream);
}

// A case's (or a file's top-level) responses, comments left out.
inline Json ResponsesOf(const Json& root, const std::string& case_name = "") {
  const Json& responses = case_name.empty() ? (root.contains("responses") ? root.at("responses") : root)
                                            : root.at(case_name).at("responses");
  Json table = Json::object();
  for (const auto& [name, value] : responses.items()) {
    if (!name.starts_with('_')) table[name] = value;
  }
  return table;
}

inline std::vector<std::string> NamesOf(const Json& responses) {
  std::vector<std::string> names;
  for (const auto& [name, value] : responses.items()) names.push_back(name);
  return names;
}

inline std::int64_t JsonInt(const Json& value) {
  return value.is_string() ? std::stoll(value.get<std::string>()) : value.get<std::int64_t>();
}

inline std::uint64_t JsonUnsigned(const Json& value) {
  return value.is_string() ? std::stoull(value.get<std::string>()) : value.get<std::uint64_t>();
}

inline double JsonDouble(const Json& value, double absent = 0) {
  return value.is_null() ? absent : value.get<double>();
}

inline Json Member(const Json& object, const char* name) {
  return object.is_object() && object.contains(name) ? object.at(name) : Json();
}

inline void ExpectAttribute(const ReadingAttribute& attribute, const Json& json) {
  EXPECT_EQ(attribute.key, Member(json, "key").is_null() ? "" : Member(json, "key").get<std::string>());
  const Json value = Member(json, "value");
  const Json int_attr = Member(value, "intAttr");
  const Json string_attr = Member(value, "stringAttr");
  EXPECT_EQ(attribute.int_value.has_value(), !int_attr.is_null());
  if (!int_attr.is_null() && attribute.int_value) EXPECT_EQ(*attribute.int_value, JsonInt(int_attr));
  EXPECT_EQ(attribute.string_value.has_value(), !string_attr.is_null());
  if (!string_attr.is_null() && attribute.string_value)
    EXPECT_EQ(*attribute.string_value, string_attr.get<std::string>());
  // Only entries with a string or an integer value are carried.
  std::vector<const Json*> carried;
  const Json kvlist_entries = Member(Member(value, "kvlistAttr"), "attributes");
  for (const Json& entry : kvlist_entries) {
    const Json entry_value = Member(entry, "value");
    if (entry_value.contains("stringAttr") || entry_value.contains("intAttr")) carried.push_back(&entry);
  }
  ASSERT_EQ(attribute.entries.size(), carried.size());
  for (std::size_t index = 0; index < carried.size(); ++index) {
    const AttributeEntry& entry = attribute.entries[index];
    const Json entry_value = Member(*carried[index], "value");
    EXPECT_EQ(entry.key, carried[index]->at("key").get<std::string>());
    if (entry_value.contains("stringAttr")) {
      ASSERT_TRUE(entry.string_value.has_value()) << entry.key;
      EXPECT_EQ(*entry.string_value, entry_value.at("stringAttr").get<std::string>());
      EXPECT_FALSE(entry.int_value.has_value());
    } else {
      ASSERT_TRUE(entry.int_value.has_value()) << entry.key;
      EXPECT_EQ(*entry.int_value, JsonInt(entry_value.at("intAttr")));
      EXPECT_FALSE(entry.string_value.has_value());
    }
  }
}

inline void ExpectDistribution(const DistributionReading& distribution, const Json& json) {
  EXPECT_EQ(distribution.count, Member(json, "count").is_null() ? 0 : JsonInt(json.at("count")));
  EXPECT_DOUBLE_EQ(distribution.mean, JsonDouble(Member(json, "mean")));
  const Json options = Member(json, "bucketOptions");
  const BucketLayout& layout = distribution.buckets;
  if (const Json exponential = Member(options, "exponentialBuckets"); !exponential.is_null()) {
    EXPECT_EQ(layout.kind, BucketKind::kExponential);
    EXPECT_EQ(layout.num_finite_buckets, exponential.value("numFiniteBuckets", 0));
    EXPECT_DOUBLE_EQ(layout.growth_factor, JsonDouble(Member(exponential, "growthFactor")));
    EXPECT_DOUBLE_EQ(layout.scale, JsonDouble(Member(exponential, "scale")));
  } else if (const Json linear = Member(options, "linearBuckets"); !linear.is_null()) {
    EXPECT_EQ(layout.kind, BucketKind::kLinear);
    EXPECT_EQ(layout.num_finite_buckets, linear.value("numFiniteBuckets", 0));
    EXPECT_DOUBLE_EQ(layout.width, JsonDouble(Member(linear, "width")));
    EXPECT_DOUBLE_EQ(layout.offset, JsonDouble(Member(linear, "offset")));
  } else if (const Json explicit_buckets = Member(options, "explicitBuckets"); !explicit_buckets.is_null()) {
    EXPECT_EQ(layout.kind, BucketKind::kExplicit);
    EXPECT_EQ(layout.bounds, explicit_buckets.value("bounds", std::vector<double>{}));
  } else {
    EXPECT_EQ(layout.kind, BucketKind::kNone);
  }
  std::vector<std::int64_t> counts;
  const Json bucket_counts = Member(json, "bucketCounts");
  for (const Json& count : bucket_counts) counts.push_back(JsonInt(count));
  EXPECT_EQ(distribution.bucket_counts, counts);
}

inline void ExpectSummary(const SummaryReading& summary, const Json& json) {
  EXPECT_EQ(summary.sample_count,
            Member(json, "sampleCount").is_null() ? 0 : JsonUnsigned(json.at("sampleCount")));
  EXPECT_DOUBLE_EQ(summary.sample_sum, JsonDouble(Member(json, "sampleSum")));
  const Json quantiles = Member(json, "quantile");
  ASSERT_EQ(summary.quantiles.size(), quantiles.is_null() ? 0 : quantiles.size());
  for (std::size_t index = 0; index < summary.quantiles.size(); ++index) {
    EXPECT_DOUBLE_EQ(summary.quantiles[index].first, JsonDouble(Member(quantiles[index], "quantile")));
    EXPECT_DOUBLE_EQ(summary.quantiles[index].second, JsonDouble(Member(quantiles[index], "value")));
  }
}

inline void ExpectMeasure(const Measure& measure, const Json& metric) {
  if (const Json gauge = Member(metric, "gauge"); !gauge.is_null()) {
    if (gauge.contains("asDouble") || gauge.contains("asInt")) {
      ASSERT_TRUE(std::holds_alternative<double>(measure));
      const double expected = gauge.contains("asDouble") ? JsonDouble(gauge.at("asDouble"))
                                                         : static_cast<double>(JsonInt(gauge.at("asInt")));
      EXPECT_DOUBLE_EQ(std::get<double>(measure), expected);
    } else {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(measure));
    }
  } else if (const Json summary = Member(metric, "summary"); !summary.is_null()) {
    ASSERT_TRUE(std::holds_alternative<SummaryReading>(measure));
    ExpectSummary(std::get<SummaryReading>(measure), summary);
  } else if (const Json distribution = Member(metric, "distribution"); !distribution.is_null()) {
    ASSERT_TRUE(std::holds_alternative<DistributionReading>(measure));
    ExpectDistribution(std::get<DistributionReading>(measure), distribution);
  } else {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(measure));
  }
}

// `reading` is the decoded form of the MetricResponse `response` (its JSON).
inline void ExpectReadingOf(const RuntimeMetricReading& reading, const Json& response) {
  const Json& metric = response.at("metric");
  EXPECT_EQ(reading.name, metric.value("name", ""));
  EXPECT_EQ(reading.description, metric.value("description", ""));
  const Json metrics = Member(metric, "metrics");
  ASSERT_EQ(reading.metrics.size(), metrics.is_null() ? 0 : metrics.size()) << reading.name;
  for (std::size_t index = 0; index < reading.metrics.size(); ++index) {
    SCOPED_TRACE(reading.name + " metric " + std::to_string(index));
    ExpectAttribute(reading.metrics[index].attribute, Member(metrics[index], "attribute"));
    ExpectMeasure(reading.metrics[index].measure, metrics[index]);
  }
}

}  // namespace runmon::tpu::test
