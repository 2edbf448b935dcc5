// The remote-write queue's byte formats on their own: the CRC-32C against its published check value, the
// record frame and segment scan (good records, damage of every kind, torn tails, sequences out of order),
// the cursor file and the segment file names.
#include <string>

#include <gtest/gtest.h>

#include "remote_write/queue_format.hpp"

namespace runmon::remote_write {
namespace {

std::string Segment(uint64_t first, uint64_t count, size_t payload_bytes = 40) {
  std::string bytes = EncodeSegmentHeader(first);
  for (uint64_t s = first; s < first + count; ++s) {
    AppendRecord(s, static_cast<uint32_t>(s), static_cast<int64_t>(s) * 10, std::string(payload_bytes, 'a'),
                 bytes);
  }
  return bytes;
}

size_t RecordOffset(uint64_t index, size_t payload_bytes = 40) {
  return kSegmentHeaderSize + index * (kRecordHeaderSize + payload_bytes);
}

std::vector<uint64_t> Sequences(const SegmentScan& scan) {
  std::vector<uint64_t> sequences;
  for (const auto& record : scan.records) sequences.push_back(record.sequence);
  return sequences;
}

TEST(QueueFormat, Crc32cMatchesItsCheckValue) {
  EXPECT_EQ(Crc32c(0, "123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(0, ""), 0u);
  EXPECT_EQ(Crc32c(0, std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720, B.4
  EXPECT_EQ(Crc32cPortable(0, "123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable(0, std::string(32, '\0')), 0x8A9136AAu);
  const std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  for (size_t split = 0; split <= text.size(); ++split) {
    EXPECT_EQ(Crc32c(Crc32c(0, text.substr(0, split)), text.substr(split)), Crc32c(0, text)) << split;
  }
}

TEST(QueueFormat, TheInstructionAndTheTablesAgree) {
  std::string bytes(4099, '\0');
  uint32_t state = 7;
  for (char& c : bytes) {
    state = state * 1103515245 + 12345;
    c = static_cast<char>(state >> 23);
  }
  // Every length up to a few words, at every alignment, then long runs.
  for (size_t start = 0; start < 8; ++start) {
    for (size_t length = 0; length < 40; ++length) {
      const std::string_view part = std::string_view(bytes).substr(start, length);
      EXPECT_EQ(Crc32c(0x1234, part), Crc32cPortable(0x1234, part)) << start << " " << length;
    }
  }
  EXPECT_EQ(Crc32c(0, bytes), Crc32cPortable(0, bytes));
  EXPECT_EQ(Crc32c(0, std::string_view(bytes).substr(3)),
            Crc32cPortable(0, std::string_view(bytes).substr(3)));
}

TEST(QueueFormat, ASegmentScansBackToItsRecords) {
  const std::string bytes = Segment(7, 5);
  auto scan = ScanSegment(bytes, 7, 6);
  ASSERT_TRUE(scan) << scan.error();
  EXPECT_TRUE(scan->header_ok);
  EXPECT_EQ(Sequences(*scan), (std::vector<uint64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(scan->good_end, bytes.size());
  EXPECT_EQ(scan->damaged_records, 0u);
  EXPECT_FALSE(scan->torn_tail);
  EXPECT_EQ(scan->problem, "");
  EXPECT_EQ(scan->records[2].offset, RecordOffset(2));
  EXPECT_EQ(scan->records[2].samples, 9u);
  EXPECT_EQ(scan->records[2].timestamp_ms, 90);
  EXPECT_EQ(scan->records[2].payload_bytes, 40u);

  const auto header = DecodeRecordHeader(std::string_view(bytes).substr(RecordOffset(1)));
  ASSERT_TRUE(header);
  EXPECT_EQ(header->sequence, 8u);
  const std::string_view payload = std::string_view(bytes).substr(RecordOffset(1) + kRecordHeaderSize, 40);
  EXPECT_TRUE(RecordPayloadMatches(*header, payload));
  EXPECT_FALSE(RecordPayloadMatches(*header, payload.substr(0, 39)));
  EXPECT_FALSE(RecordPayloadMatches(*header, std::string(40, 'b')));
  EXPECT_FALSE(DecodeRecordHeader(std::string_view(bytes).substr(RecordOffset(1), kRecordHeaderSize - 1)));
}

TEST(QueueFormat, EveryCutIsATornTailOfOneRecordAtMost) {
  const std::string bytes = Segment(1, 3);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    auto scan = ScanSegment(std::string_view(bytes).substr(0, cut), 1, 0);
    ASSERT_TRUE(scan) << cut;
    const size_t whole = cut < kSegmentHeaderSize ? 0 : (cut - kSegmentHeaderSize) / (kRecordHeaderSize + 40);
    EXPECT_EQ(scan->records.size(), whole) << cut;
    EXPECT_EQ(scan->header_ok, cut >= kSegmentHeaderSize) << cut;
    const bool at_boundary = cut == RecordOffset(whole);
    EXPECT_EQ(scan->torn_tail, cut > kSegmentHeaderSize && !at_boundary) << cut;
    EXPECT_EQ(scan->damaged_records, scan->torn_tail ? 1u : 0u) << cut;
    if (scan->header_ok) {
      EXPECT_EQ(scan->good_end, RecordOffset(whole)) << cut;
    }
  }
}

TEST(QueueFormat, AFlippedBitCostsOneRecordWhereverItIs) {
  const std::string good = Segment(1, 4);
  for (size_t offset = RecordOffset(1); offset < RecordOffset(2); ++offset) {
    std::string bytes = good;
    bytes[offset] = static_cast<char>(bytes[offset] ^ 0x10);
    auto scan = ScanSegment(bytes, 1, 0);
    ASSERT_TRUE(scan) << offset;
    EXPECT_EQ(Sequences(*scan), (std::vector<uint64_t>{1, 3, 4})) << offset;
    EXPECT_EQ(scan->damaged_records, 1u) << offset;
    EXPECT_FALSE(scan->torn_tail) << offset;
    EXPECT_NE(scan->problem, "") << offset;
  }
}

TEST(QueueFormat, SequencesOutOfOrderAreDamage) {
  std::string bytes = EncodeSegmentHeader(10);
  for (uint64_t s : {10, 11, 11, 9, 12, 15, 16}) AppendRecord(s, 1, 0, "payload", bytes);
  auto scan = ScanSegment(bytes, 10, 0);
  ASSERT_TRUE(scan);
  EXPECT_EQ(Sequences(*scan), (std::vector<uint64_t>{10, 11, 12, 15, 16}));
  // The repeated 11 and the 9 are one damaged stretch; 13 and 14 are missing.
  EXPECT_EQ(scan->damaged_records, 3u);
  // Records at or below what the earlier segments held are damage too.
  scan = ScanSegment(Segment(5, 4), 5, 6);
  ASSERT_TRUE(scan);
  EXPECT_EQ(Sequences(*scan), (std::vector<uint64_t>{7, 8}));
}

TEST(QueueFormat, ADamagedSegmentHeaderIsSearchedPast) {
  std::string bytes = Segment(3, 2);
  bytes[0] = 'X';
  auto scan = ScanSegment(bytes, 3, 0);
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->header_ok);
  EXPECT_EQ(Sequences(*scan), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(scan->damaged_records, 0u);
  // A header that names another sequence than the file.
  scan = ScanSegment(Segment(3, 2), 4, 0);
  ASSERT_TRUE(scan);
  EXPECT_FALSE(scan->header_ok);
  EXPECT_NE(scan->problem.find("names sequence 3"), std::string::npos) << scan->problem;
}

TEST(QueueFormat, TheCursorRoundTripsAndRefusesAnythingElse) {
  const std::string bytes = EncodeCursor({.acked = 12, .inflight_end = 20});
  ASSERT_EQ(bytes.size(), kCursorSize);
  auto cursor = DecodeCursor(bytes);
  ASSERT_TRUE(cursor) << cursor.error();
  EXPECT_EQ(cursor->acked, 12u);
  EXPECT_EQ(cursor->inflight_end, 20u);
  EXPECT_FALSE(DecodeCursor(bytes.substr(0, kCursorSize - 1)));
  EXPECT_FALSE(DecodeCursor(bytes + "x"));
  EXPECT_FALSE(DecodeCursor(""));
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 1);
    EXPECT_FALSE(DecodeCursor(damaged)) << i;
  }
  const auto backwards = DecodeCursor(EncodeCursor({.acked = 5, .inflight_end = 4}));
  ASSERT_FALSE(backwards);
  EXPECT_NE(backwards.error().find("out of range"), std::string::npos);
}

TEST(QueueFormat, SegmentNames) {
  EXPECT_EQ(SegmentFileName(1), "00000000000000000001.seg");
  EXPECT_EQ(ParseSegmentFileName("00000000000000000001.seg"), 1u);
  EXPECT_EQ(ParseSegmentFileName(SegmentFileName(kMaxSequence)), kMaxSequence);
  EXPECT_FALSE(ParseSegmentFileName(SegmentFileName(kMaxSequence + 1)));
  EXPECT_FALSE(ParseSegmentFileName("00000000000000000000.seg"));
  EXPECT_FALSE(ParseSegmentFileName("99999999999999999999.seg"));
  EXPECT_FALSE(ParseSegmentFileName("0000000000000000001.seg"));
  EXPECT_FALSE(ParseSegmentFileName("000000000000000000-1.seg"));
  EXPECT_FALSE(ParseSegmentFileName("00000000000000000001.tmp"));
  EXPECT_FALSE(ParseSegmentFileName("cursor"));
}

}  // namespace
}  // namespace runmon::remote_write
