// The record builders (records.hpp): value_json is the shortest JSON number that reads back as the same
// double (W&B's monitor writes Go's shortest formatting: "12.5", "4", "1e+21"), non-finite values are left
// out because plain JSON has no NaN or infinity; timestamps keep 0 <= nanos < 1e9 even when rounding
// carries into the next second; exit codes may be negative (10-byte varints on the wire) and runtimes are
// clamped into int32; the environment record is filled from wandb-metadata.json's layout, ignoring keys W&B
// does not know and refusing values of the wrong type; EncodeStatsRecord's bytes are FillStatsRecord's
// record serialised, for every kind of timestamp, label, length and value.
#include "runlog/records.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runlog/record_reader.hpp"
#include "runlog/run_state.hpp"
#include "runlog/stats_wire.hpp"

namespace runmon::runlog {
namespace {

TEST(FormatValueJson, ShortestRoundTripNumbers) {
  EXPECT_EQ(FormatValueJson(12.5), "12.5");
  EXPECT_EQ(FormatValueJson(4), "4");
  EXPECT_EQ(FormatValueJson(0), "0");
  EXPECT_EQ(FormatValueJson(-3.25), "-3.25");
  EXPECT_EQ(FormatValueJson(1e21), "1e+21");
  EXPECT_EQ(FormatValueJson(0.1), "0.1");
  EXPECT_EQ(FormatValueJson(137438953472.0), "137438953472");
}

TEST(FormatValueJson, ReadsBackAsTheSameDoubleAndIsValidJson) {
  for (double value : {0.1, 1.0 / 3.0, 2.5e-7, 123456789.123, 1e300, 5e-324, -0.0, 41.25, 3.9108}) {
    const std::string text = FormatValueJson(value);
    const auto json = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << text;
    EXPECT_EQ(json.get<double>(), value) << text;
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
  }
}

TEST(FormatValueJson, NonFiniteValuesGiveEmptyText) {
  EXPECT_EQ(FormatValueJson(std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(FormatValueJson(std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(FormatValueJson(-std::numeric_limits<double>::infinity()), "");
}

TEST(SetTimestamp, SplitsSecondsAndNanos) {
  google::protobuf::Timestamp ts;
  SetTimestamp(1735689610.25, ts);
  EXPECT_EQ(ts.seconds(), 1735689610);
  EXPECT_EQ(ts.nanos(), 250000000);
  SetTimestamp(0, ts);
  EXPECT_EQ(ts.seconds(), 0);
  EXPECT_EQ(ts.nanos(), 0);
}

TEST(SetTimestamp, RoundingUpToAWholeSecondCarriesIntoSeconds) {
  google::protobuf::Timestamp ts;
  SetTimestamp(1735689610.9999999999, ts);  // the fraction rounds to 1e9 ns
  EXPECT_EQ(ts.seconds(), 1735689611);
  EXPECT_EQ(ts.nanos(), 0);
  SetTimestamp(1.9999999999, ts);
  EXPECT_EQ(ts.seconds(), 2);
  EXPECT_EQ(ts.nanos(), 0);
}

TEST(SetTimestamp, NanosStayInRangeForEveryFraction) {
  google::protobuf::Timestamp ts;
  for (int i = 0; i < 2000; ++i) {
    const double seconds = 1735689600.0 + i * 0.0004999 + (i % 7) * 0.9999999;
    SetTimestamp(seconds, ts);
    ASSERT_GE(ts.nanos(), 0) << seconds;
    ASSERT_LT(ts.nanos(), 1000000000) << seconds;
    EXPECT_NEAR(static_cast<double>(ts.seconds()) + ts.nanos() / 1e9, seconds, 1e-6);
  }
}

TEST(SetTimestamp, NegativeTimesHaveNonNegativeNanos) {
  google::protobuf::Timestamp ts;
  SetTimestamp(-1.5, ts);
  EXPECT_EQ(ts.seconds(), -2);
  EXPECT_EQ(ts.nanos(), 500000000);
}

Sample MakeSample(double timestamp, std::initializer_list<std::pair<const char*, double>> metrics) {
  Sample sample;
  sample.timestamp = timestamp;
  for (const auto& [key, value] : metrics) sample.metrics.Add(key, value);
  return sample;
}

TEST(FillStatsRecord, OneItemPerFiniteValueInOrder) {
  wandb::Record record;
  ASSERT_TRUE(FillStatsRecord(MakeSample(1735689610.25, {{"cpu", 12.5}, {"proc.cpu.threads", 4}}), record));
  ASSERT_TRUE(record.has_stats());
  const auto& stats = record.stats();
  EXPECT_EQ(stats.stats_type(), wandb::StatsRecord::SYSTEM);
  EXPECT_EQ(stats.timestamp().seconds(), 1735689610);
  EXPECT_EQ(stats.timestamp().nanos(), 250000000);
  ASSERT_EQ(stats.item_size(), 2);
  EXPECT_EQ(stats.item(0).key(), "cpu");
  EXPECT_EQ(stats.item(0).value_json(), "12.5");
  EXPECT_EQ(stats.item(1).key(), "proc.cpu.threads");
  EXPECT_EQ(stats.item(1).value_json(), "4");
}

// W&B's x_label: every key ends with "/l:<label>", the values and the order unchanged.
TEST(FillStatsRecord, LabelSuffixesEveryKey) {
  wandb::Record record;
  ASSERT_TRUE(FillStatsRecord(MakeSample(10, {{"gpu.0.powerWatts", 300}, {"cpu", 12.5}}), record, "node1"));
  ASSERT_EQ(record.stats().item_size(), 2);
  EXPECT_EQ(record.stats().item(0).key(), "gpu.0.powerWatts/l:node1");
  EXPECT_EQ(record.stats().item(0).value_json(), "300");
  EXPECT_EQ(record.stats().item(1).key(), "cpu/l:node1");
  // Refilled without a label, the record holds the plain keys again.
  ASSERT_TRUE(FillStatsRecord(MakeSample(10, {{"cpu", 1}}), record));
  EXPECT_EQ(record.stats().item(0).key(), "cpu");
}

TEST(FillStatsRecord, SkipsNonFiniteValues) {
  wandb::Record record;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ASSERT_TRUE(
      FillStatsRecord(MakeSample(10, {{"a", nan}, {"b", 1}, {"c", inf}, {"d", -inf}, {"e", 2}}), record));
  ASSERT_EQ(record.stats().item_size(), 2);
  EXPECT_EQ(record.stats().item(0).key(), "b");
  EXPECT_EQ(record.stats().item(1).key(), "e");
}

TEST(FillStatsRecord, ReturnsFalseWhenNoValueIsFinite) {
  wandb::Record record;
  EXPECT_FALSE(FillStatsRecord(MakeSample(10, {{"a", std::numeric_limits<double>::quiet_NaN()}}), record));
  EXPECT_FALSE(FillStatsRecord(MakeSample(10, {}), record));
}

// Whole numbers take their own path (plain digits); every value still reads as fmt's shortest form of it.
TEST(FormatValueJson, WholeNumbersAreFmtsShortestFormToo) {
  std::vector<double> values = {1,
                                -1,
                                0,
                                -0.0,
                                7,
                                1410,
                                1e14,
                                999999999999999,
                                -999999999999999,
                                1e15,
                                -1e15,
                                1e15 + 1,
                                9007199254740992,
                                1e16,
                                1e300,
                                0.5,
                                -2.5,
                                1e-7,
                                4294967296};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() % 4000000000000000) - 2000000000000000));
    values.push_back(static_cast<double>(rng() % 100000));
    values.push_back(std::ldexp(1.0, static_cast<int>(rng() % 60)));
  }
  for (const double value : values) {
    EXPECT_EQ(FormatValueJson(value), fmt::format("{}", value)) << value;
  }
}

// EncodeStatsRecord writes, byte for byte, what FillStatsRecord's record serialises to (protobuf writes
// fields in number order, and so does the encoder).
// What it tells the index (EncodedStatsItems) is what a reader of those bytes finds: each item's key at
// its place, its value as the text reads back, the time as ReadStatsWire computes it.
void ExpectEncodedAsFilled(const Sample& sample, std::string_view label = {}) {
  wandb::Record record;
  const bool filled = FillStatsRecord(sample, record, label);
  EncodedStatsItems items;
  items.items.resize(3);  // whatever it held goes
  const std::string encoded = EncodeStatsRecord(sample, label, &items);
  EXPECT_EQ(encoded, EncodeStatsRecord(sample, label));
  EXPECT_EQ(encoded.empty(), !filled);
  if (!filled) {
    EXPECT_TRUE(items.items.empty());
    return;
  }
  EXPECT_EQ(encoded, record.SerializeAsString()) << record.DebugString();
  double time = -1;
  size_t at = 0;
  EXPECT_EQ(ReadStatsWire(encoded, time,
                          [&](const StatsItemView& item) {
                            ASSERT_LT(at, items.items.size());
                            const auto& told = items.items[at++];
                            EXPECT_EQ(encoded.substr(told.key_offset, told.key_size), item.key);
                            const auto value = ParseJsonNumber(item.value_json);
                            ASSERT_TRUE(value.has_value()) << item.value_json;
                            EXPECT_EQ(std::memcmp(&*value, &told.value, sizeof told.value), 0)
                                << item.value_json;
                          }),
            WireRecordKind::kStats);
  EXPECT_EQ(at, items.items.size());
  EXPECT_EQ(std::memcmp(&time, &items.time, sizeof time), 0) << time << " " << items.time;
}

TEST(EncodeStatsRecord, IsTheSerialisedRecordOfFillStatsRecord) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ExpectEncodedAsFilled(MakeSample(1735689610.25, {{"cpu", 12.5}, {"proc.cpu.threads", 4}}));
  ExpectEncodedAsFilled(MakeSample(10, {{"gpu.0.powerWatts", 300}, {"cpu", 12.5}}), "node1");
  ExpectEncodedAsFilled(MakeSample(10, {{"a", nan}, {"b", 1}, {"c", inf}, {"d", -inf}, {"e", 2}}));
  ExpectEncodedAsFilled(MakeSample(10, {{"a", nan}}));  // nothing finite: empty
  ExpectEncodedAsFilled(MakeSample(10, {}));
  // Timestamps: whole seconds (no nanos), under a second (no seconds), zero (an empty timestamp), before
  // the epoch (a negative varint: ten bytes), far in the future, NaN (0), and protobuf's clamped range.
  for (const double time : {1735689600.0, 0.5, 0.0, -1.5, -62135596800.0, 253402300799.999, nan, 1e300}) {
    ExpectEncodedAsFilled(MakeSample(time, {{"cpu", 1}, {"memory_percent", 33.33333333333333}}));
  }
  // Lengths of one, two and three varint bytes, values of every shape, 200 keys.
  Sample wide;
  wide.timestamp = 1735689600.123456789;
  wide.metrics.Add(std::string(127, 'k'), 1);
  wide.metrics.Add(std::string(128, 'k'), -0.0);
  wide.metrics.Add(std::string(20000, 'k'), 1e300);
  for (int i = 0; i < 200; ++i) {
    wide.metrics.Add("gpu." + std::to_string(i % 8) + ".k" + std::to_string(i), i % 3 == 0   ? i * 1e15
                                                                                : i % 3 == 1 ? 1.0 / (i + 1)
                                                                                             : -i * 1e-7);
  }
  ExpectEncodedAsFilled(wide);
  ExpectEncodedAsFilled(wide, std::string(200, 'l'));
}

TEST(FillStatsRecord, ClearsWhateverTheRecordHeldBefore) {
  wandb::Record record = MakeExitRecord(3, 5);
  record.set_num(42);
  record.mutable__info()->set_stream_id("old");
  ASSERT_TRUE(FillStatsRecord(MakeSample(10, {{"cpu", 1}}), record));
  EXPECT_EQ(RecordTypeName(record), "stats");
  EXPECT_EQ(record.num(), 0);
  EXPECT_FALSE(record.has__info());
}

TEST(FillStatsRecord, RefillingTheSameRecordKeepsNothingOfThePreviousSample) {
  // The record's stats message and items are reused between samples.
  wandb::Record record;
  ASSERT_TRUE(FillStatsRecord(MakeSample(10.5, {{"a", 1}, {"b", 2}, {"c", 3}}), record));
  ASSERT_TRUE(FillStatsRecord(MakeSample(20, {{"d", 4.5}}), record));
  wandb::Record fresh;
  ASSERT_TRUE(FillStatsRecord(MakeSample(20, {{"d", 4.5}}), fresh));
  EXPECT_EQ(record.SerializeAsString(), fresh.SerializeAsString());
  ASSERT_EQ(record.stats().item_size(), 1);
  EXPECT_EQ(record.stats().timestamp().nanos(), 0);
}

TEST(MakeExitRecord, ZeroExitCodeIsOmittedOnTheWire) {
  wandb::Record record = MakeExitRecord(0, 30);
  EXPECT_EQ(record.exit().exit_code(), 0);
  EXPECT_EQ(record.exit().runtime(), 30);
  EXPECT_EQ(record.SerializeAsString(), std::string("\x92\x01\x02\x10\x1E", 5));
}

TEST(MakeExitRecord, NegativeExitCodeIsATenByteVarint) {
  wandb::Record record = MakeExitRecord(-1, 0);
  EXPECT_EQ(record.exit().exit_code(), -1);
  const std::string payload = record.SerializeAsString();
  // exit (field 18) { exit_code (1) = -1 }: 92 01 0B 08 FF FF FF FF FF FF FF FF FF 01
  EXPECT_EQ(payload, std::string("\x92\x01\x0B\x08\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01", 14));
  wandb::Record back;
  ASSERT_TRUE(back.ParseFromString(payload));
  EXPECT_EQ(back.exit().exit_code(), -1);
  EXPECT_EQ(MakeExitRecord(-254, 0).exit().exit_code(), -254);
  EXPECT_EQ(MakeExitRecord(254, 0).exit().exit_code(), 254);
}

TEST(MakeExitRecord, RuntimeIsTruncatedAndClampedIntoInt32) {
  EXPECT_EQ(MakeExitRecord(0, 12.9).exit().runtime(), 12);
  EXPECT_EQ(MakeExitRecord(0, -5).exit().runtime(), 0);
  EXPECT_EQ(MakeExitRecord(0, 1e12).exit().runtime(), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(MakeExitRecord(0, std::numeric_limits<double>::infinity()).exit().runtime(),
            std::numeric_limits<int32_t>::max());
  EXPECT_EQ(MakeExitRecord(0, -std::numeric_limits<double>::infinity()).exit().runtime(), 0);
}

// std::clamp passes NaN through, and converting NaN to int32 is undefined behaviour (UBSan aborts with
// float-cast-overflow; without it x86 gives INT32_MIN, a negative runtime). A runtime that cannot be
// measured should become 0 like any other out-of-range value.
TEST(MakeExitRecord, NanRuntimeBecomesZero) {
  EXPECT_EQ(MakeExitRecord(0, std::numeric_limits<double>::quiet_NaN()).exit().runtime(), 0);
}

TEST(MakeHeaderAndRunRecords, CarryProducerAndRunFields) {
  EXPECT_EQ(MakeHeaderRecord("runmon/0.1.0").header().version_info().producer(), "runmon/0.1.0");
  RunInfo run;
  run.run_id = "abcd1234";
  run.project = "proj";
  run.display_name = "name";
  run.host = "host";
  run.start_time = 1735689600.5;
  run.tags = {"a", "b"};
  const auto record = MakeRunRecord(run);
  EXPECT_EQ(record.run().run_id(), "abcd1234");
  EXPECT_EQ(record.run().project(), "proj");
  EXPECT_EQ(record.run().display_name(), "name");
  EXPECT_EQ(record.run().host(), "host");
  EXPECT_EQ(record.run().start_time().seconds(), 1735689600);
  EXPECT_EQ(record.run().start_time().nanos(), 500000000);
  ASSERT_EQ(record.run().tags_size(), 2);
  EXPECT_EQ(record.run().tags(1), "b");
  EXPECT_EQ(RecordTypeName(MakeFinalRecord()), "final");
}

const char* const kMetadata = R"({
  "os": "Linux-6.1.0-x86_64-with-glibc2.36",
  "cpu_count": 8,
  "cpu_count_logical": 16,
  "memory": {"total": "137438953472"},
  "disk": {"/": {"total": "1", "used": "2"}},
  "gpu": "NVIDIA H200",
  "gpu_count": 1,
  "slurm": {"job_id": "1"},
  "runmon": {"cpuModel": "x"}
})";

TEST(MakeEnvironmentRecord, FillsFieldsFromWandbMetadataJsonAndIgnoresUnknownKeys) {
  const auto record = MakeEnvironmentRecord(nlohmann::json::parse(kMetadata), "runmon-writer");
  ASSERT_TRUE(record.ok()) << record.error();
  const auto& env = record->environment();
  EXPECT_EQ(env.os(), "Linux-6.1.0-x86_64-with-glibc2.36");
  EXPECT_EQ(env.cpu_count(), 8u);
  EXPECT_EQ(env.cpu_count_logical(), 16u);
  EXPECT_EQ(env.memory().total(), 137438953472ULL);
  ASSERT_EQ(env.disk().count("/"), 1u);
  EXPECT_EQ(env.disk().at("/").total(), 1u);
  EXPECT_EQ(env.disk().at("/").used(), 2u);
  EXPECT_EQ(env.gpu_type(), "NVIDIA H200");
  EXPECT_EQ(env.gpu_count(), 1u);
  ASSERT_EQ(env.slurm().count("job_id"), 1u);
  EXPECT_EQ(env.slurm().at("job_id"), "1");
  EXPECT_EQ(env.writer_id(), "runmon-writer");
  EXPECT_EQ(RecordTypeName(*record), "environment");
  // "runmon" is not a field: nothing else is set, and nothing unknown is carried along.
  EXPECT_TRUE(env.GetReflection()->GetUnknownFields(env).empty());
  EXPECT_EQ(nlohmann::json::parse(RecordToJson(*record))["environment"].count("runmon"), 0u);
}

TEST(MakeEnvironmentRecord, WrongTypedFieldIsAnError) {
  auto metadata = nlohmann::json::parse(kMetadata);
  metadata["cpu_count"] = "many";
  const auto record = MakeEnvironmentRecord(metadata, "w");
  ASSERT_FALSE(record.ok());
  EXPECT_NE(record.error().find("environment"), std::string::npos) << record.error();
}

TEST(MakeEnvironmentRecord, EmptyMetadataGivesOnlyTheWriterId) {
  const auto record = MakeEnvironmentRecord(nlohmann::json::object(), "w");
  ASSERT_TRUE(record.ok()) << record.error();
  EXPECT_EQ(record->environment().writer_id(), "w");
  EXPECT_EQ(record->environment().os(), "");
}

}  // namespace
}  // namespace runmon::runlog
