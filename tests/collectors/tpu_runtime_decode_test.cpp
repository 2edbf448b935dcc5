// DecodeMetricResponse (the module's decoder, linked as it is): runmon's fixtures serialized and decoded
// field by field; the measures that carry nothing (counters, string and bool gauges, none) and the attribute
// kinds left out; and what it refuses: garbage, every truncation of a real response, a response without a
// metric, and responses over its bounds, each error saying which bound.
#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "collectors/tpu/runtime_metric_decode.hpp"
#include "collectors/tpu/runtime_metrics_client.hpp"
#include "tpu_runtime_expect.hpp"

namespace runmon::tpu {
namespace {

namespace proto = ::tpu::monitoring::runtime;
using test::Json;

std::string Serialized(const Json& response) {
  proto::MetricResponse message;
  const auto status = google::protobuf::util::JsonStringToMessage(response.dump(), &message);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return message.SerializeAsString();
}

std::string ErrorOf(std::string_view serialized) {
  const auto decoded = DecodeMetricResponse(serialized);
  EXPECT_FALSE(decoded.ok());
  return decoded ? "" : decoded.error();
}

TEST(TpuMetricResponseDecode, RunmonsFixturesDecodeAsWritten) {
  for (const char* file : {"runtime_v5e_4chip.json", "runtime_attribute_forms.json"}) {
    const Json root = test::ReadFixtureJson(test::TpuFixture(file));
    std::vector<Json> tables;
    if (root.contains("top_level_int_attr")) {
      for (const auto& [name, value] : root.items()) {
        if (!name.starts_with('_')) tables.push_back(test::ResponsesOf(root, name));
      }
    } else {
      tables.push_back(test::ResponsesOf(root));
    }
    for (const Json& table : tables) {
      for (const auto& [name, response] : table.items()) {
        SCOPED_TRACE(std::string(file) + ": " + name);
        const auto decoded = DecodeMetricResponse(Serialized(response));
        ASSERT_TRUE(decoded.ok()) << decoded.error();
        test::ExpectReadingOf(*decoded, response);
      }
    }
  }
}

TEST(TpuMetricResponseDecode, MeasuresWithoutANumberAreEmpty) {
  const Json response = Json::parse(R"({"metric": {"name": "m", "metrics": [
      {"counter": {"asInt": "12"}},
      {"gauge": {"asString": "ok"}},
      {"gauge": {"asBool": true}},
      {"gauge": {}},
      {},
      {"gauge": {"asInt": "-5"}}]}})");
  const auto decoded = DecodeMetricResponse(Serialized(response));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ASSERT_EQ(decoded->metrics.size(), 6u);
  for (std::size_t index = 0; index < 5; ++index) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(decoded->metrics[index].measure)) << index;
  }
  ASSERT_TRUE(std::holds_alternative<double>(decoded->metrics[5].measure));
  EXPECT_DOUBLE_EQ(std::get<double>(decoded->metrics[5].measure), -5.0);
}

TEST(TpuMetricResponseDecode, AttributeKindsOtherThanStringAndIntegerAreLeftOut) {
  const Json response = Json::parse(R"({"metric": {"name": "m", "metrics": [
      {"attribute": {"key": "flag", "value": {"boolAttr": true}}, "gauge": {"asDouble": 1.5}},
      {"attribute": {"key": "labels", "value": {"kvlistAttr": {"attributes": [
          {"key": "ratio", "value": {"doubleAttr": 0.5}},
          {"key": "buffer-size", "value": {"stringAttr": "8MB+"}},
          {"key": "nested", "value": {"kvlistAttr": {}}},
          {"key": "blob", "value": {"bytesAttr": "AAE="}},
          {"key": "device_ordinal", "value": {"intAttr": "3"}}]}}},
       "gauge": {"asDouble": 2.5}},
      {"attribute": {"key": "array", "value": {"arrayAttr": {"attrs": [{"intAttr": "1"}]}}}}]}})");
  const auto decoded = DecodeMetricResponse(Serialized(response));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ASSERT_EQ(decoded->metrics.size(), 3u);
  const auto& flag = decoded->metrics[0].attribute;
  EXPECT_EQ(flag.key, "flag");
  EXPECT_FALSE(flag.int_value || flag.string_value);
  EXPECT_TRUE(flag.entries.empty());
  const auto& labels = decoded->metrics[1].attribute;
  ASSERT_EQ(labels.entries.size(), 2u);
  EXPECT_EQ(labels.entries[0].key, "buffer-size");
  EXPECT_EQ(labels.entries[0].string_value, "8MB+");
  EXPECT_EQ(labels.entries[1].key, "device_ordinal");
  EXPECT_EQ(labels.entries[1].int_value, 3);
  EXPECT_TRUE(decoded->metrics[2].attribute.entries.empty());
}

TEST(TpuMetricResponseDecode, ExplicitBucketsAndNoLayout) {
  const Json response = Json::parse(R"({"metric": {"name": "m", "metrics": [
      {"distribution": {"count": "6", "mean": 3.5, "bucketOptions": {"explicitBuckets": {"bounds": [1, 2.5, 10]}},
                        "bucketCounts": ["1", "2", "2", "1"]}},
      {"distribution": {"count": "2", "mean": 1}}]}})");
  const auto decoded = DecodeMetricResponse(Serialized(response));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  ASSERT_EQ(decoded->metrics.size(), 2u);
  const auto& explicit_buckets = std::get<DistributionReading>(decoded->metrics[0].measure);
  EXPECT_EQ(explicit_buckets.buckets.kind, BucketKind::kExplicit);
  EXPECT_EQ(explicit_buckets.buckets.bounds, (std::vector<double>{1, 2.5, 10}));
  EXPECT_EQ(explicit_buckets.bucket_counts, (std::vector<std::int64_t>{1, 2, 2, 1}));
  const auto& none = std::get<DistributionReading>(decoded->metrics[1].measure);
  EXPECT_EQ(none.buckets.kind, BucketKind::kNone);
  EXPECT_EQ(none.count, 2);
  EXPECT_TRUE(none.bucket_counts.empty());
}

TEST(TpuMetricResponseDecode, UnknownFieldsOfANewerLibtpuAreSkipped) {
  proto::MetricResponse message;
  message.mutable_metric()->set_name("m");
  message.mutable_metric()->add_metrics()->mutable_gauge()->set_as_double(4.0);
  std::string serialized = message.SerializeAsString();
  // Field 9 of MetricResponse, a varint: not in runmon's .proto.
  serialized += std::string("\x48\x2a", 2);
  const auto decoded = DecodeMetricResponse(serialized);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(decoded->name, "m");
  ASSERT_EQ(decoded->metrics.size(), 1u);
}

TEST(TpuMetricResponseDecode, GarbageIsAnError) {
  for (const std::string& garbage : {std::string("\xff\xff\xff\xff", 4), std::string("not a protobuf at all"),
                                     std::string("\x0a\xff\xff\xff\xff\x0f", 6), std::string("\x0f", 1)}) {
    EXPECT_NE(ErrorOf(garbage).find("not a MetricResponse"), std::string::npos);
  }
  EXPECT_NE(ErrorOf("").find("without a metric"), std::string::npos);
}

TEST(TpuMetricResponseDecode, EveryTruncationIsAnError) {
  const Json root = test::ReadFixtureJson(test::TpuFixture("runtime_v5e_4chip.json"));
  const std::string serialized =
      Serialized(root.at("megascale.dcn_transfer_latencies.microsecond.cumulative.distribution"));
  ASSERT_GT(serialized.size(), 100u);
  ASSERT_TRUE(DecodeMetricResponse(serialized).ok());
  for (std::size_t length = 1; length < serialized.size(); ++length) {
    EXPECT_FALSE(DecodeMetricResponse(std::string_view(serialized).substr(0, length)).ok()) << length;
  }
}

TEST(TpuMetricResponseDecode, OversizedResponsesSayWhichBound) {
  proto::MetricResponse many;
  for (int index = 0; index <= kMaxMetricsPerResponse; ++index) many.mutable_metric()->add_metrics();
  EXPECT_NE(ErrorOf(many.SerializeAsString()).find("65537 metrics"), std::string::npos);

  proto::MetricResponse long_name;
  long_name.mutable_metric()->set_name(std::string(kMaxStringBytes + 1, 'x'));
  EXPECT_NE(ErrorOf(long_name.SerializeAsString()).find("name"), std::string::npos);

  proto::MetricResponse long_label;
  auto* entry = long_label.mutable_metric()
                    ->add_metrics()
                    ->mutable_attribute()
                    ->mutable_value()
                    ->mutable_kvlist_attr()
                    ->add_attributes();
  entry->set_key("buffer-size");
  entry->mutable_value()->set_string_attr(std::string(kMaxStringBytes + 1, 'y'));
  EXPECT_NE(ErrorOf(long_label.SerializeAsString()).find("attribute value"), std::string::npos);

  proto::MetricResponse many_entries;
  auto* kvlist = many_entries.mutable_metric()
                     ->add_metrics()
                     ->mutable_attribute()
                     ->mutable_value()
                     ->mutable_kvlist_attr();
  for (int index = 0; index <= kMaxAttributeEntries; ++index) kvlist->add_attributes()->set_key("k");
  EXPECT_NE(ErrorOf(many_entries.SerializeAsString()).find("attribute entries"), std::string::npos);

  proto::MetricResponse many_counts;
  auto* counts = many_counts.mutable_metric()->add_metrics()->mutable_distribution();
  for (int index = 0; index < kMaxBuckets + 3; ++index) counts->add_bucket_counts(1);
  EXPECT_NE(ErrorOf(many_counts.SerializeAsString()).find("bucket counts"), std::string::npos);

  proto::MetricResponse many_bounds;
  auto* bounds = many_bounds.mutable_metric()
                     ->add_metrics()
                     ->mutable_distribution()
                     ->mutable_bucket_options()
                     ->mutable_explicit_buckets();
  for (int index = 0; index <= kMaxBuckets; ++index) bounds->add_bounds(index);
  EXPECT_NE(ErrorOf(many_bounds.SerializeAsString()).find("explicit bucket bounds"), std::string::npos);

  proto::MetricResponse many_finite;
  many_finite.mutable_metric()
      ->add_metrics()
      ->mutable_distribution()
      ->mutable_bucket_options()
      ->mutable_exponential_buckets()
      ->set_num_finite_buckets(kMaxBuckets + 1);
  EXPECT_NE(ErrorOf(many_finite.SerializeAsString()).find("finite buckets"), std::string::npos);

  proto::MetricResponse negative;
  negative.mutable_metric()
      ->add_metrics()
      ->mutable_distribution()
      ->mutable_bucket_options()
      ->mutable_linear_buckets()
      ->set_num_finite_buckets(-1);
  EXPECT_NE(ErrorOf(negative.SerializeAsString()).find("-1 finite buckets"), std::string::npos);

  proto::MetricResponse many_quantiles;
  auto* summary = many_quantiles.mutable_metric()->add_metrics()->mutable_summary();
  for (int index = 0; index <= kMaxQuantiles; ++index) summary->add_quantile()->set_quantile(0.5);
  EXPECT_NE(ErrorOf(many_quantiles.SerializeAsString()).find("quantiles"), std::string::npos);

  EXPECT_NE(ErrorOf(std::string(kMaxResponseBytes + 1, '\0')).find("bytes (at most"), std::string::npos);
}

}  // namespace
}  // namespace runmon::tpu
