// The queued tick's codec: round trips (negative and huge timestamps, NaN's bits, long keys, no values),
// the exact bytes of a small tick, and hostile payloads: empty, another version, cut at every length,
// counts and key lengths the payload cannot hold, varints longer than needed or past 64 bits, bytes after
// the end. Every one is an error that says where, never a crash.
#include "remote_write/sample_codec.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace runmon::remote_write {
namespace {

std::string Encode(int64_t timestamp_ms, const std::vector<TickValue>& values) {
  std::string out;
  EncodeTick(timestamp_ms, values, &out);
  return out;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int byte : bytes) out += static_cast<char>(byte);
  return out;
}

TEST(SampleCodec, RoundTripsKeysValuesAndTimestamp) {
  const std::string long_key(kMaxTickKeyBytes, 'k');
  const std::vector<TickValue> values = {{"cpu", 12.5},
                                         {"disk./.usageGB", 1e12},
                                         {"gpu.0.temp", -0.0},
                                         {long_key, std::numeric_limits<double>::infinity()},
                                         {"", 3}};
  for (const int64_t timestamp : {int64_t{0}, int64_t{1780000000123}, int64_t{-5},
                                  std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    const std::string payload = Encode(timestamp, values);
    DecodedTick tick;
    ASSERT_TRUE(DecodeTick(payload, &tick).ok()) << timestamp;
    EXPECT_EQ(tick.timestamp_ms, timestamp);
    ASSERT_EQ(tick.values.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(tick.values[i].key, values[i].key);
      EXPECT_EQ(std::bit_cast<uint64_t>(tick.values[i].value), std::bit_cast<uint64_t>(values[i].value));
    }
  }
}

TEST(SampleCodec, KeepsTheBitsOfNaN) {
  const double nan = std::bit_cast<double>(uint64_t{0x7ff8000000000123});
  DecodedTick tick;
  ASSERT_TRUE(DecodeTick(Encode(1, {{"cpu", nan}}), &tick).ok());
  EXPECT_EQ(std::bit_cast<uint64_t>(tick.values.at(0).value), uint64_t{0x7ff8000000000123});
}

TEST(SampleCodec, AnEmptyTickIsThreeBytes) {
  EXPECT_EQ(Encode(0, {}), Bytes({1, 0, 0}));
  DecodedTick tick;
  tick.values.push_back({"left over", 1});
  ASSERT_TRUE(DecodeTick(Bytes({1, 0, 0}), &tick).ok());
  EXPECT_TRUE(tick.values.empty());
}

TEST(SampleCodec, WritesTheDocumentedBytes) {
  // Version 1, timestamp 1000 zigzagged (2000 = 0xd0 0x0f), one value, key "cpu", 1.0 little-endian.
  const std::string expected = Bytes({1, 0xd0, 0x0f, 1, 3, 'c', 'p', 'u', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
  EXPECT_EQ(Encode(1000, {{"cpu", 1.0}}), expected);
  EXPECT_EQ(Encode(-1, {}), Bytes({1, 1, 0}));
}

TEST(SampleCodec, EveryCutOfAPayloadIsAnError) {
  const std::string payload = Encode(1780000000123, {{"cpu", 1}, {"memory_percent", 2}});
  for (size_t size = 0; size < payload.size(); ++size) {
    DecodedTick tick;
    const Status status = DecodeTick(std::string_view(payload).substr(0, size), &tick);
    EXPECT_FALSE(status.ok()) << size;
    EXPECT_TRUE(status.ok() || status.error().starts_with("queued tick: ")) << status.error();
  }
}

TEST(SampleCodec, RefusesAnotherVersion) {
  std::string payload = Encode(1, {{"cpu", 1}});
  payload[0] = 2;
  DecodedTick tick;
  const Status status = DecodeTick(payload, &tick);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("format version 2"), std::string::npos) << status.error();
}

TEST(SampleCodec, RefusesBytesAfterTheLastValue) {
  DecodedTick tick;
  const Status status = DecodeTick(Encode(1, {{"cpu", 1}}) + "x", &tick);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("1 bytes after the last value"), std::string::npos) << status.error();
}

TEST(SampleCodec, RefusesACountThePayloadCannotHold) {
  // 2^60 values claimed in a payload of a few bytes: refused before anything is reserved.
  DecodedTick tick;
  const Status status =
      DecodeTick(Bytes({1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10}), &tick);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("cannot fit"), std::string::npos) << status.error();
}

TEST(SampleCodec, RefusesAKeyLongerThanTheLimitOrThePayload) {
  std::string too_long = Bytes({1, 0, 1});
  too_long += Bytes({0x81, 0x20});  // 4097
  too_long += std::string(kMaxTickKeyBytes + 1 + 8, 'k');
  DecodedTick tick;
  Status status = DecodeTick(too_long, &tick);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("key of 4097 bytes"), std::string::npos) << status.error();

  status = DecodeTick(Bytes({1, 0, 1, 100, 'c', 'p', 'u', 0, 0, 0, 0, 0, 0, 0, 0}), &tick);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("truncated key"), std::string::npos) << status.error();
}

TEST(SampleCodec, RefusesVarintsLongerThanNeededOrPast64Bits) {
  DecodedTick tick;
  // 0 written in two bytes.
  EXPECT_FALSE(DecodeTick(Bytes({1, 0x80, 0x00, 0}), &tick).ok());
  // Ten bytes whose last carries more than the 64th bit.
  EXPECT_FALSE(
      DecodeTick(Bytes({1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0}), &tick).ok());
  // Eleven bytes.
  EXPECT_FALSE(
      DecodeTick(Bytes({1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00, 0}), &tick)
          .ok());
  // The largest ten-byte varint is fine: UINT64_MAX zigzagged is INT64_MIN.
  ASSERT_TRUE(
      DecodeTick(Bytes({1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0}), &tick).ok());
  EXPECT_EQ(tick.timestamp_ms, std::numeric_limits<int64_t>::min());
}

TEST(SampleCodec, AcceptedPayloadsAreCanonical) {
  // What decodes encodes back to the same bytes (the fuzz target checks this on arbitrary input).
  const std::string payload = Encode(-1780000000123, {{"a", 1}, {"bb", -2}, {"ccc", 1e-300}});
  DecodedTick tick;
  ASSERT_TRUE(DecodeTick(payload, &tick).ok());
  EXPECT_EQ(Encode(tick.timestamp_ms, tick.values), payload);
}

}  // namespace
}  // namespace runmon::remote_write
