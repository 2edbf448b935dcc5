// The hand-written protobuf wire reader for stats records (stats_wire.hpp), against records serialized by
// protobuf itself: stats records with timestamps, items and unknown fields at every level, every other
// record type of Record's oneof, an empty record; the record's type as protobuf decides it (the last oneof
// field present; the same field twice is merged); malformed input (truncated at every length, groups, wire
// types that do not exist, bad tags, lengths past the end), which must never be read past (inputs are copied
// into exactly sized heap buffers) and must say kMalformed or give a prefix of the items. Also the
// StatsValueReader on top of it (stats_values.hpp): numbers only, empty keys left out, floats clamped, a
// key's id asked for once per item position.
#include "runlog/stats_wire.hpp"

#include <cfloat>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include "runlog/stats_values.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::runlog {

inline void PrintTo(WireRecordKind kind, std::ostream* os) {
  *os << (kind == WireRecordKind::kStats   ? "kStats"
          : kind == WireRecordKind::kOther ? "kOther"
                                           : "kMalformed");
}

namespace {

using Items = std::vector<std::pair<std::string, std::string>>;

struct WireRead {
  WireRecordKind kind = WireRecordKind::kMalformed;
  double time = -1;
  Items items;
};

// ReadStatsWire over an exactly sized heap copy; also checks that PeekRecordKind agrees on the kind (it
// reads the same top level).
WireRead ReadWire(std::string_view bytes) {
  std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  const std::string_view view(copy.get(), bytes.size());
  WireRead read;
  read.kind = ReadStatsWire(view, read.time, [&](const StatsItemView& item) {
    EXPECT_TRUE(item.key.empty() || (item.key.data() >= view.data() &&
                                     item.key.data() + item.key.size() <= view.data() + view.size()));
    EXPECT_TRUE(item.value_json.empty() ||
                (item.value_json.data() >= view.data() &&
                 item.value_json.data() + item.value_json.size() <= view.data() + view.size()));
    read.items.emplace_back(std::string(item.key), std::string(item.value_json));
  });
  const WireRecordKind peeked = PeekRecordKind(view);
  if (read.kind == WireRecordKind::kMalformed) {
    // The top level may be fine while the stats record inside is not.
    EXPECT_TRUE(peeked == WireRecordKind::kMalformed || peeked == WireRecordKind::kStats);
  } else {
    EXPECT_EQ(peeked, read.kind);
  }
  return read;
}

wandb::Record StatsRecord(int64_t seconds, int32_t nanos, const Items& items) {
  wandb::Record record;
  record.set_num(42);
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(seconds);
  stats->mutable_timestamp()->set_nanos(nanos);
  for (const auto& [key, value] : items) {
    auto* item = stats->add_item();
    item->set_key(key);
    item->set_value_json(value);
  }
  record.mutable__info()->set_stream_id("run00001");
  return record;
}

const Items kItems = {{"cpu", "12.5"},
                      {"memory_percent", "41.25"},
                      {"gpu.0.temp", "61"},
                      {"proc.cpu.threads", "4"},
                      {"network.sent", "1.5e+09"}};

std::string Tag(uint32_t number, uint32_t wire_type) {
  std::string out;
  uint64_t value = uint64_t{number} << 3 | wire_type;
  do {
    uint8_t byte = value & 0x7F;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value != 0);
  return out;
}

std::string Varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7F;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value != 0);
  return out;
}

std::string LengthDelimited(uint32_t number, std::string_view bytes) {
  return Tag(number, 2) + Varint(bytes.size()) + std::string(bytes);
}

bool ProtobufParses(const std::string& bytes, wandb::Record& record) {
  return record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

Items ProtobufItems(const wandb::Record& record) {
  Items items;
  for (const auto& item : record.stats().item()) items.emplace_back(item.key(), item.value_json());
  return items;
}

// ---- well-formed records

TEST(StatsWire, ReadsTheTimestampAndItemsOfAStatsRecord) {
  const std::string bytes = StatsRecord(1735689600, 250000000, kItems).SerializeAsString();
  const WireRead read = ReadWire(bytes);
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.time, 1735689600.0 + 250000000 * 1e-9);
  EXPECT_EQ(read.items, kItems);
}

TEST(StatsWire, LongKeysAndValuesTakeVarintsOfTwoAndThreeBytes) {
  // Lengths of 127, 128 and 16383 (one and two bytes), 16384 and 70000 (three bytes).
  Items items;
  for (const size_t length : {127u, 128u, 16383u, 16384u, 70000u}) {
    items.emplace_back(std::string(length, 'k'), "1" + std::string(length - 1, '0'));
  }
  const std::string bytes = StatsRecord(1735689600, 999999999, items).SerializeAsString();
  const WireRead read = ReadWire(bytes);
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.time, 1735689600.0 + 999999999 * 1e-9);  // nanos past 2^28: a five-byte varint
  EXPECT_EQ(read.items, items);
}

TEST(StatsWire, ItemsWithoutKeyOrValueAreStillPassed) {
  const Items items = {{"", "3"}, {"no_value", ""}, {"", ""}, {"cpu", "\"text\""}};
  const WireRead read = ReadWire(StatsRecord(10, 0, items).SerializeAsString());
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.items, items);
  EXPECT_EQ(read.time, 10);
}

TEST(StatsWire, TimestampEdgeCases) {
  // seconds + nanos * 1e-9, with negative values (10-byte varints on the wire).
  EXPECT_EQ(ReadWire(StatsRecord(-5, 500000000, {}).SerializeAsString()).time, -5 + 500000000 * 1e-9);
  EXPECT_EQ(ReadWire(StatsRecord(0, 250000000, {}).SerializeAsString()).time, 250000000 * 1e-9);
  EXPECT_EQ(ReadWire(StatsRecord(7, -500000000, {}).SerializeAsString()).time, 7 + -500000000 * 1e-9);
  EXPECT_EQ(ReadWire(StatsRecord(INT64_MIN / 2, 999999999, {}).SerializeAsString()).time,
            static_cast<double>(INT64_MIN / 2) + 999999999 * 1e-9);
  wandb::Record no_time;
  no_time.mutable_stats()->add_item()->set_key("cpu");
  const WireRead read = ReadWire(no_time.SerializeAsString());
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.time, 0);
  ASSERT_EQ(read.items.size(), 1u);
  wandb::Record empty_stats;
  empty_stats.mutable_stats();
  const WireRead empty = ReadWire(empty_stats.SerializeAsString());
  EXPECT_EQ(empty.kind, WireRecordKind::kStats);
  EXPECT_TRUE(empty.items.empty());
  EXPECT_EQ(empty.time, 0);
}

TEST(StatsWire, UnknownFieldsAtEveryLevelAreSkipped) {
  wandb::Record record = StatsRecord(1735689600, 1, kItems);
  auto add_unknown = [](google::protobuf::Message& message) {
    auto* unknown = message.GetReflection()->MutableUnknownFields(&message);
    unknown->AddVarint(1000, 123456789);
    unknown->AddFixed32(1001, 0xDEADBEEF);
    unknown->AddFixed64(1002, 0x0123456789ABCDEFULL);
    unknown->AddLengthDelimited(1003, "unknown bytes");
    unknown->AddVarint(536870911, 1);  // the largest field number
  };
  add_unknown(record);
  add_unknown(*record.mutable_stats());
  add_unknown(*record.mutable_stats()->mutable_timestamp());
  for (auto& item : *record.mutable_stats()->mutable_item()) add_unknown(item);
  add_unknown(*record.mutable__info());
  const std::string bytes = record.SerializeAsString();
  wandb::Record check;
  ASSERT_TRUE(ProtobufParses(bytes, check));
  const WireRead read = ReadWire(bytes);
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.items, kItems);
  EXPECT_EQ(read.time, 1735689600 + 1e-9);
}

TEST(StatsWire, FieldsInsideStatsWithOtherWireTypesAreSkipped) {
  // A timestamp (2) or an item (3) written as a varint is an unknown field to protobuf, as here.
  const std::string item = LengthDelimited(1, "cpu") + LengthDelimited(16, "1") + Tag(1, 0) + Varint(5);
  const std::string stats = Tag(2, 0) + Varint(99) + Tag(3, 5) + "abcd" + LengthDelimited(3, item);
  const std::string bytes = LengthDelimited(7, stats);
  wandb::Record check;
  ASSERT_TRUE(ProtobufParses(bytes, check));
  const WireRead read = ReadWire(bytes);
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.items, ProtobufItems(check));
  EXPECT_EQ(read.time, 0);
}

TEST(StatsWire, EveryOtherRecordTypeIsOther) {
  const auto* descriptor = wandb::Record::descriptor();
  const auto* oneof = descriptor->FindOneofByName("record_type");
  ASSERT_NE(oneof, nullptr);
  ASSERT_GT(oneof->field_count(), 20);
  for (int i = 0; i < oneof->field_count(); ++i) {
    const auto* field = oneof->field(i);
    wandb::Record record;
    record.set_num(3);
    record.GetReflection()->MutableMessage(&record, field);
    const std::string bytes = record.SerializeAsString();
    const WireRead read = ReadWire(bytes);
    const bool stats = field->name() == "stats";
    EXPECT_EQ(read.kind, stats ? WireRecordKind::kStats : WireRecordKind::kOther) << field->name();
    EXPECT_TRUE(read.items.empty()) << field->name();
    EXPECT_EQ(read.time, 0) << field->name();
  }
  // The oneof's field numbers are exactly those the reader knows.
  for (uint32_t number = 1; number <= 1000; ++number) {
    const auto* field = descriptor->FindFieldByNumber(static_cast<int>(number));
    const bool in_oneof = field != nullptr && field->containing_oneof() == oneof;
    EXPECT_EQ(wire_detail::IsRecordTypeField(number), in_oneof) << number;
  }
}

TEST(StatsWire, RecordsWithoutAType) {
  EXPECT_EQ(ReadWire("").kind, WireRecordKind::kOther);
  wandb::Record record;
  record.set_num(9);
  record.mutable__info()->set_stream_id("abc");
  record.mutable_control()->set_local(true);
  record.set_uuid("u");
  const WireRead read = ReadWire(record.SerializeAsString());
  EXPECT_EQ(read.kind, WireRecordKind::kOther);
  EXPECT_TRUE(read.items.empty());
  EXPECT_EQ(read.time, 0);
}

TEST(StatsWire, HistoryRunAndOutputRecordsAreOther) {
  wandb::Record history;
  auto* item = history.mutable_history()->add_item();
  item->set_key("loss");
  item->set_value_json("0.5");
  history.mutable_history()->mutable_step()->set_num(3);
  wandb::Record run;
  run.mutable_run()->set_run_id("abc");
  run.mutable_run()->mutable_start_time()->set_seconds(100);
  wandb::Record output;
  output.mutable_output_raw()->set_line(std::string(100000, 'x'));
  for (const wandb::Record* record : {&history, &run, &output}) {
    const WireRead read = ReadWire(record->SerializeAsString());
    EXPECT_EQ(read.kind, WireRecordKind::kOther);
    EXPECT_TRUE(read.items.empty());
  }
}

// ---- which oneof field counts

TEST(StatsWire, TheLastOneofFieldWinsAsInProtobuf) {
  wandb::Record history;
  history.mutable_history()->add_item()->set_key("loss");
  const std::string stats = StatsRecord(5, 0, kItems).SerializeAsString();
  const std::string history_bytes = history.SerializeAsString();
  for (const auto& [bytes, is_stats] :
       std::vector<std::pair<std::string, bool>>{{history_bytes + stats, true},
                                                 {stats + history_bytes, false},
                                                 {stats + history_bytes + stats, true}}) {
    wandb::Record parsed;
    ASSERT_TRUE(ProtobufParses(bytes, parsed));
    ASSERT_EQ(parsed.has_stats(), is_stats);
    const WireRead read = ReadWire(bytes);
    EXPECT_EQ(read.kind, is_stats ? WireRecordKind::kStats : WireRecordKind::kOther);
    EXPECT_EQ(read.items, ProtobufItems(parsed));
  }
}

// Protobuf merges a message field that appears twice (the same oneof member twice in a row): its items are
// both records' items.
TEST(StatsWire, TheSameStatsFieldTwiceIsMergedAsInProtobuf) {
  const std::string first = StatsRecord(5, 0, {{"cpu", "1"}, {"mem", "2"}}).SerializeAsString();
  const std::string second = StatsRecord(6, 0, {{"disk", "3"}}).SerializeAsString();
  wandb::Record parsed;
  ASSERT_TRUE(ProtobufParses(first + second, parsed));
  ASSERT_EQ(parsed.stats().item_size(), 3);
  const WireRead read = ReadWire(first + second);
  EXPECT_EQ(read.kind, WireRecordKind::kStats);
  EXPECT_EQ(read.items, ProtobufItems(parsed));
}

// A oneof field number with a wire type other than length-delimited is an unknown field to protobuf: it does
// not change the record's type.
TEST(StatsWire, AOneofNumberWithAnotherWireTypeDoesNotChangeTheType) {
  const std::string stats = StatsRecord(5, 0, kItems).SerializeAsString();
  for (const std::string& trailer : {Tag(2, 0) + Varint(1), Tag(17, 5) + "abcd", Tag(7, 1) + "12345678"}) {
    wandb::Record parsed;
    ASSERT_TRUE(ProtobufParses(stats + trailer, parsed));
    ASSERT_TRUE(parsed.has_stats());
    const WireRead read = ReadWire(stats + trailer);
    EXPECT_EQ(read.kind, WireRecordKind::kStats);
    EXPECT_EQ(read.items, kItems);
  }
  wandb::Record parsed;
  ASSERT_TRUE(ProtobufParses(Tag(7, 0) + Varint(3), parsed));
  ASSERT_FALSE(parsed.has_stats());
  EXPECT_EQ(ReadWire(Tag(7, 0) + Varint(3)).kind, WireRecordKind::kOther);
}

// ---- malformed input

bool IsPrefix(const Items& prefix, const Items& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

TEST(StatsWireMalformed, TruncatedAtEveryLengthGivesMalformedOrAPrefix) {
  const std::string bytes = StatsRecord(1735689600, 5, kItems).SerializeAsString();
  size_t malformed = 0;
  for (size_t length = 0; length < bytes.size(); ++length) {
    const WireRead read = ReadWire(std::string_view(bytes).substr(0, length));
    EXPECT_TRUE(IsPrefix(read.items, kItems)) << length;
    if (read.kind == WireRecordKind::kStats)
      EXPECT_EQ(read.items, kItems) << length;  // the stats field is whole
    if (read.kind == WireRecordKind::kOther) EXPECT_TRUE(read.items.empty()) << length;
    malformed += read.kind == WireRecordKind::kMalformed ? 1 : 0;
  }
  EXPECT_GT(malformed, bytes.size() / 2);
}

TEST(StatsWireMalformed, ATruncatedStatsRecordInsideAWholeFieldGivesMalformedOrAPrefix) {
  const std::string stats = StatsRecord(1735689600, 5, kItems).stats().SerializeAsString();
  for (size_t length = 0; length <= stats.size(); ++length) {
    const std::string bytes = LengthDelimited(7, std::string_view(stats).substr(0, length));
    const WireRead read = ReadWire(bytes);
    EXPECT_NE(read.kind, WireRecordKind::kOther) << length;
    EXPECT_TRUE(IsPrefix(read.items, kItems)) << length;
    wandb::Record parsed;
    if (read.kind == WireRecordKind::kStats) {
      // Cut at a field boundary: protobuf reads the same items.
      ASSERT_TRUE(ProtobufParses(bytes, parsed)) << length;
      EXPECT_EQ(read.items, ProtobufItems(parsed)) << length;
    } else {
      EXPECT_FALSE(ProtobufParses(bytes, parsed)) << length;
    }
  }
}

// W&B's records use no groups; the reader refuses them (protobuf skips unknown groups).
TEST(StatsWireMalformed, GroupsAreRefused) {
  const std::string stats = StatsRecord(1, 0, kItems).SerializeAsString();
  const std::string group = Tag(50, 3) + Tag(1, 0) + Varint(7) + Tag(50, 4);
  wandb::Record parsed;
  ASSERT_TRUE(ProtobufParses(group + stats, parsed));
  EXPECT_EQ(ReadWire(group + stats).kind, WireRecordKind::kMalformed);
  EXPECT_EQ(ReadWire(stats + group).kind, WireRecordKind::kMalformed);
  const std::string inner = StatsRecord(1, 0, kItems).stats().SerializeAsString() + group;
  ASSERT_TRUE(ProtobufParses(LengthDelimited(7, inner), parsed));
  EXPECT_EQ(ReadWire(LengthDelimited(7, inner)).kind, WireRecordKind::kMalformed);
  EXPECT_EQ(ReadWire(Tag(50, 4)).kind, WireRecordKind::kMalformed);  // an end without a start
}

TEST(StatsWireMalformed, BadTagsWireTypesAndLengths) {
  const std::string stats = StatsRecord(1, 0, kItems).SerializeAsString();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wire type 6", Tag(9, 6) + "x"},
      {"wire type 7", Tag(9, 7) + "x"},
      {"field number 0", Tag(0, 0) + Varint(1)},
      {"field number 2^29", Tag(1u << 29, 0) + Varint(1)},
      {"tag beyond 32 bits", Varint(uint64_t{1} << 40)},
      {"truncated varint", Tag(1, 0) + "\x80"},
      {"varint of 11 bytes", Tag(1, 0) + std::string(10, '\x80') + "\x01"},
      {"truncated tag", "\x80"},
      {"length past the end", Tag(7, 2) + Varint(100) + "abc"},
      {"huge length", Tag(7, 2) + Varint(UINT64_MAX)},
      {"truncated fixed64", Tag(9, 1) + "1234567"},
      {"truncated fixed32", Tag(9, 5) + "123"},
  };
  for (const auto& [what, bad] : cases) {
    EXPECT_EQ(ReadWire(bad).kind, WireRecordKind::kMalformed) << what;
    EXPECT_EQ(ReadWire(stats + bad).kind, WireRecordKind::kMalformed) << what;
    EXPECT_EQ(ReadWire(LengthDelimited(7, bad)).kind, WireRecordKind::kMalformed) << what;
    // Inside an item: the items before it may have been passed.
    const std::string in_item = LengthDelimited(7, LengthDelimited(3, LengthDelimited(1, "cpu")) +
                                                       LengthDelimited(3, LengthDelimited(1, "mem") + bad));
    const WireRead read = ReadWire(in_item);
    EXPECT_EQ(read.kind, WireRecordKind::kMalformed) << what;
    EXPECT_TRUE(IsPrefix(read.items, {{"cpu", ""}})) << what;
    // Inside the timestamp.
    EXPECT_EQ(ReadWire(LengthDelimited(7, LengthDelimited(2, bad))).kind, WireRecordKind::kMalformed) << what;
  }
}

TEST(StatsWireMalformed, GarbageNeverCrashes) {
  // A few thousand deterministic byte strings, some starting like a stats record.
  uint64_t state = 88172645463325252ULL;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string prefix = Tag(7, 2);
  for (int i = 0; i < 4000; ++i) {
    std::string bytes = i % 2 == 0 ? prefix + Varint(next() % 64) : std::string();
    const size_t length = next() % 64;
    for (size_t j = 0; j < length; ++j) bytes.push_back(static_cast<char>(next()));
    const WireRead read = ReadWire(bytes);
    wandb::Record parsed;
    if (ProtobufParses(bytes, parsed) && parsed.has_stats() && read.kind != WireRecordKind::kMalformed) {
      EXPECT_EQ(read.kind, WireRecordKind::kStats);
    }
  }
}

// ---- StatsValueReader

TEST(StatsValueReader, KeepsNumbersWithIdsAndAsksForEachKeyOncePerPosition) {
  std::vector<std::string> asked;
  auto id_of = [&](std::string_view name) {
    asked.emplace_back(name);
    return static_cast<uint32_t>(100 + asked.size());
  };
  StatsValueReader reader;
  const Items items = {{"cpu", "12.5"},  {"", "3"},           {"text", "\"x\""}, {"flag", "true"},
                       {"big", "1e300"}, {"small", "-1e300"}, {"nan", "NaN"},    {"mem", "4"}};
  double time = 0;
  const std::string bytes = StatsRecord(100, 0, items).SerializeAsString();
  ASSERT_EQ(reader.Read(bytes, time, id_of), WireRecordKind::kStats);
  EXPECT_EQ(time, 100);
  ASSERT_EQ(reader.values().size(), 4u);
  EXPECT_EQ(asked, (std::vector<std::string>{"cpu", "big", "small", "mem"}));
  EXPECT_EQ(reader.values()[0].key, 101u);
  EXPECT_EQ(reader.values()[0].value, 12.5f);
  EXPECT_EQ(reader.values()[1].value, FLT_MAX);
  EXPECT_EQ(reader.values()[2].value, -FLT_MAX);
  EXPECT_EQ(reader.values()[3].key, 104u);
  EXPECT_EQ(reader.values()[3].value, 4.0f);

  // The same keys at the same positions: no lookups. A different key at a position: one.
  ASSERT_EQ(reader.Read(bytes, time, id_of), WireRecordKind::kStats);
  EXPECT_EQ(asked.size(), 4u);
  Items changed = items;
  changed[0].first = "gpu";
  ASSERT_EQ(reader.Read(StatsRecord(101, 0, changed).SerializeAsString(), time, id_of),
            WireRecordKind::kStats);
  ASSERT_EQ(asked.size(), 5u);
  EXPECT_EQ(asked.back(), "gpu");
  EXPECT_EQ(reader.values()[0].key, 105u);
  EXPECT_EQ(reader.values()[3].key, 104u);

  // Another record type leaves no values.
  wandb::Record history;
  history.mutable_history()->add_item()->set_key("loss");
  EXPECT_EQ(reader.Read(history.SerializeAsString(), time, id_of), WireRecordKind::kOther);
  EXPECT_TRUE(reader.values().empty());
}

}  // namespace
}  // namespace runmon::runlog
