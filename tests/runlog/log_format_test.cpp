// Framing of W&B's run log (log_format.hpp) against the spec's own numbers: the CRC test vectors of
// run-log-format.md 2.6, the worked exit record of 2.7 and the chunking edge cases of 2.4 with the exact
// offsets of sample-multiblock.wandb (a 3-byte trailer, a zero-length FIRST chunk when exactly 7 bytes
// are left, FIRST/MIDDLE/LAST of a 70000-byte record, a chunk ending exactly at a block end). The odd
// payload sizes exist only to land records on those offsets. A reference model of the chunking
// (runlog_test_support) is compared with AppendFramedRecord around every block-end room from 0 to 10.
#include "runlog/log_format.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "runlog/wandb_record.pb.h"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

using testing::ReferenceCrc32;
using testing::ReferenceLog;

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string Pattern(size_t size, int seed = 0) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i)
    out[i] = static_cast<char>((i * 37 + static_cast<size_t>(seed) * 11 + 5) & 0xFF);
  return out;
}

struct ChunkHeader {
  uint32_t crc;
  uint16_t length;
  int type;
};

ChunkHeader HeaderAt(std::string_view bytes, size_t at) {
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes.at(at + i))); };
  return {byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24,
          static_cast<uint16_t>(byte(4) | byte(5) << 8), static_cast<int>(byte(6))};
}

// Checks the chunk at `at` in `out` (which starts at file offset `base`): type, length and CRC over the
// given payload bytes.
void ExpectChunk(std::string_view out, uint64_t base, uint64_t offset, ChunkType type,
                 std::string_view payload) {
  SCOPED_TRACE(::testing::Message() << "chunk at file offset " << offset);
  const auto at = static_cast<size_t>(offset - base);
  ASSERT_LE(at + kChunkHeaderSize + payload.size(), out.size());
  const ChunkHeader header = HeaderAt(out, at);
  EXPECT_EQ(header.type, static_cast<int>(type));
  EXPECT_EQ(header.length, payload.size());
  EXPECT_EQ(header.crc, ChunkChecksum(type, payload));
  EXPECT_EQ(out.substr(at + kChunkHeaderSize, payload.size()), payload);
}

TEST(ChunkChecksum, ReferenceCrcHasTheStandardCheckValue) {
  EXPECT_EQ(ReferenceCrc32("123456789"), 0xCBF43926u);
}

TEST(ChunkChecksum, EmptyPayloadVectorsOfEachChunkType) {
  EXPECT_EQ(ChunkChecksum(ChunkType::kFull, ""), 0xA505DF1Bu);
  EXPECT_EQ(ChunkChecksum(ChunkType::kFirst, ""), 0x3C0C8EA1u);
  EXPECT_EQ(ChunkChecksum(ChunkType::kMiddle, ""), 0x4B0BBE37u);
  EXPECT_EQ(ChunkChecksum(ChunkType::kLast, ""), 0xD56F2B94u);
}

// An empty std::string_view() has no storage (data() is null): the checksum is still the type byte's (zlib's
// crc32(), which runmon once used, treats a null buffer as "start over" and would have made it 0, a chunk
// the reader rejects).
TEST(ChunkChecksum, EmptyViewWithoutStorageChecksumsLikeAnyEmptyPayload) {
  EXPECT_EQ(ChunkChecksum(ChunkType::kFull, std::string_view()), 0xA505DF1Bu);
  EXPECT_EQ(ChunkChecksum(ChunkType::kFirst, std::string_view()), 0x3C0C8EA1u);
  std::string out;
  AppendFramedRecord(kFileHeaderSize, std::string_view(), out);
  EXPECT_EQ(out, Bytes({0x1B, 0xDF, 0x05, 0xA5, 0x00, 0x00, 0x01}));
}

TEST(ChunkChecksum, EmptyHeaderRecordVectorFromWandbsTestFixture) {
  EXPECT_EQ(ChunkChecksum(ChunkType::kFull, Bytes({0xAA, 0x01, 0x00})), 0x540C518Eu);
}

// Every length and alignment around the eight-byte steps and across the switch to zlib (384 bytes), and a
// CRC continued across pieces.
TEST(Crc32, MatchesTheBitwiseReferenceAtEveryLengthAndAlignment) {
  const std::string bytes = Pattern(520, 7);
  for (size_t start = 0; start < 8; ++start) {
    for (size_t size = 0; start + size <= bytes.size(); ++size) {
      const std::string_view piece(bytes.data() + start, size);
      ASSERT_EQ(Crc32(0, piece), ReferenceCrc32(piece)) << "start " << start << " size " << size;
    }
  }
  EXPECT_EQ(Crc32(Crc32(0, "1234"), "56789"), 0xCBF43926u);
  const std::string long_bytes = Pattern(5000, 3);
  EXPECT_EQ(
      Crc32(Crc32(0, std::string_view(long_bytes).substr(0, 100)), std::string_view(long_bytes).substr(100)),
      ReferenceCrc32(long_bytes));
  EXPECT_EQ(Crc32(0, std::string_view()), 0u);
}

TEST(ChunkChecksum, CoversTheTypeByteThenThePayloadUnmasked) {
  for (size_t size : {1u, 7u, 100u, 4096u, 32761u}) {
    const std::string payload = Pattern(size, static_cast<int>(size));
    for (auto type : {ChunkType::kFull, ChunkType::kFirst, ChunkType::kMiddle, ChunkType::kLast}) {
      EXPECT_EQ(ChunkChecksum(type, payload),
                ReferenceCrc32(std::string(1, static_cast<char>(type)) + payload))
          << "size " << size << " type " << static_cast<int>(type);
    }
  }
}

TEST(FileHeader, IsIdentMagicAndVersionZero) {
  const std::string header(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  EXPECT_EQ(header, Bytes({0x3A, 0x57, 0x26, 0x42, 0xE1, 0xBE, 0x00}));
  EXPECT_EQ(kFileHeaderSize, 7u);
  EXPECT_EQ(kMaxChunkPayload, 32761u);
}

// Spec 2.7: the last record of sample-stats.wandb.
TEST(AppendFramedRecord, WorkedExitRecordAtOffset785GivesTheSpecsBytes) {
  const std::string payload = Bytes({0x08, 0x06, 0x92, 0x01, 0x02, 0x10, 0x1E, 0xC2, 0x0C, 0x0A,
                                     0x0A, 0x08, 0x73, 0x6D, 0x70, 0x6C, 0x30, 0x30, 0x30, 0x31});
  wandb::Record record;
  record.set_num(6);
  record.mutable_exit()->set_runtime(30);
  record.mutable__info()->set_stream_id("smpl0001");
  ASSERT_EQ(record.SerializeAsString(), payload);

  std::string out;
  EXPECT_EQ(AppendFramedRecord(785, payload, out), 812u);
  EXPECT_EQ(out, Bytes({0x2D, 0x73, 0xEA, 0x41, 0x14, 0x00, 0x01}) + payload);
}

TEST(AppendFramedRecord, AppendsToWhatIsAlreadyInTheBuffer) {
  std::string out = "keep";
  const uint64_t end = AppendFramedRecord(7, "abc", out);
  EXPECT_EQ(end, 7u + 7u + 3u);
  EXPECT_EQ(out.substr(0, 4), "keep");
  EXPECT_EQ(out.size(), 4u + 10u);
}

TEST(AppendFramedRecord, RecordLeavingThreeBytesIsFollowedByAThreeByteZeroTrailer) {
  // sample-multiblock.wandb: stats #4 (32370 bytes) at 388 ends at 32765.
  std::string out;
  ASSERT_EQ(AppendFramedRecord(388, Pattern(32370), out), 32765u);
  ASSERT_EQ(out.size(), 32765u - 388u);
  const std::string next = Pattern(32754, 1);
  out.clear();
  EXPECT_EQ(AppendFramedRecord(32765, next, out), 65529u);
  ASSERT_GE(out.size(), 3u);
  EXPECT_EQ(out.substr(0, 3), std::string(3, '\0'));
  ExpectChunk(out, 32765, 32768, ChunkType::kFull, next);
  EXPECT_EQ(out.size(), 3u + 7u + 32754u);
}

TEST(AppendFramedRecord, EveryTrailerLengthFromOneToSixIsZeros) {
  for (uint64_t room = 1; room < kChunkHeaderSize; ++room) {
    std::string out;
    const uint64_t offset = 5 * kBlockSize - room;
    EXPECT_EQ(AppendFramedRecord(offset, "xyz", out), 5 * kBlockSize + 10) << "room " << room;
    EXPECT_EQ(out.substr(0, static_cast<size_t>(room)), std::string(static_cast<size_t>(room), '\0'));
    ExpectChunk(out, offset, 5 * kBlockSize, ChunkType::kFull, "xyz");
  }
}

TEST(AppendFramedRecord, RoomOfExactlySevenGivesAZeroLengthFirstChunkThenLast) {
  // sample-multiblock.wandb: stats #6 (192 bytes) at 65529.
  const std::string payload = Pattern(192, 6);
  std::string out;
  EXPECT_EQ(AppendFramedRecord(65529, payload, out), 65735u);
  EXPECT_EQ(out.substr(0, 7), Bytes({0xA1, 0x8E, 0x0C, 0x3C, 0x00, 0x00, 0x02}));
  ExpectChunk(out, 65529, 65536, ChunkType::kLast, payload);
  EXPECT_EQ(out.size(), 7u + 7u + 192u);
}

TEST(AppendFramedRecord, SeventyThousandBytesAt65735AreFirstMiddleLast) {
  // sample-multiblock.wandb: stats #7.
  const std::string payload = Pattern(70000, 7);
  std::string out;
  EXPECT_EQ(AppendFramedRecord(65735, payload, out), 135756u);
  EXPECT_EQ(out.size(), 135756u - 65735u);
  ExpectChunk(out, 65735, 65735, ChunkType::kFirst, std::string_view(payload).substr(0, 32562));
  ExpectChunk(out, 65735, 98304, ChunkType::kMiddle, std::string_view(payload).substr(32562, 32761));
  ExpectChunk(out, 65735, 131072, ChunkType::kLast, std::string_view(payload).substr(32562 + 32761));
  EXPECT_EQ(70000u - 32562u - 32761u, 4677u);
}

TEST(AppendFramedRecord, ChunkEndingExactlyAtABlockEndIsFollowedByTheNextRecordWithoutTrailer) {
  std::string out;
  // 7 + 7 + 32754 = 32768: a FULL chunk fills the rest of block 0.
  EXPECT_EQ(AppendFramedRecord(7, Pattern(32754), out), 32768u);
  EXPECT_EQ(HeaderAt(out, 0).type, static_cast<int>(ChunkType::kFull));
  out.clear();
  EXPECT_EQ(AppendFramedRecord(32768, "next", out), 32768u + 11u);
  ExpectChunk(out, 32768, 32768, ChunkType::kFull, "next");
}

TEST(AppendFramedRecord, LargestFullChunkFillsAWholeBlock) {
  std::string out;
  EXPECT_EQ(AppendFramedRecord(kBlockSize, Pattern(kMaxChunkPayload), out), 2 * kBlockSize);
  EXPECT_EQ(HeaderAt(out, 0).type, static_cast<int>(ChunkType::kFull));
  EXPECT_EQ(HeaderAt(out, 0).length, kMaxChunkPayload);
}

TEST(AppendFramedRecord, OneByteMoreThanABlockIsFirstAndAOneByteLast) {
  const std::string payload = Pattern(kMaxChunkPayload + 1);
  std::string out;
  EXPECT_EQ(AppendFramedRecord(kBlockSize, payload, out), 2 * kBlockSize + 8);
  ExpectChunk(out, kBlockSize, kBlockSize, ChunkType::kFirst,
              std::string_view(payload).substr(0, kMaxChunkPayload));
  ExpectChunk(out, kBlockSize, 2 * kBlockSize, ChunkType::kLast,
              std::string_view(payload).substr(kMaxChunkPayload));
}

TEST(AppendFramedRecord, TwoFullBlocksOfPayloadEndWithAFullLastNeverAnEmptyOne) {
  const std::string payload = Pattern(2 * kMaxChunkPayload);
  std::string out;
  EXPECT_EQ(AppendFramedRecord(kBlockSize, payload, out), 3 * kBlockSize);
  ExpectChunk(out, kBlockSize, kBlockSize, ChunkType::kFirst,
              std::string_view(payload).substr(0, kMaxChunkPayload));
  ExpectChunk(out, kBlockSize, 2 * kBlockSize, ChunkType::kLast,
              std::string_view(payload).substr(kMaxChunkPayload));
  EXPECT_EQ(out.size(), 2 * kBlockSize);
}

TEST(AppendFramedRecord, EmptyPayloadIsAZeroLengthFullChunk) {
  // The writer refuses empty records (wandb sync panics on them); the framing itself allows them.
  std::string out;
  EXPECT_EQ(AppendFramedRecord(7, "", out), 14u);
  EXPECT_EQ(out, Bytes({0x1B, 0xDF, 0x05, 0xA5, 0x00, 0x00, 0x01}));
}

// Against the reference model: a filler record leaves `room` bytes in block 0 (0..10), then a record of
// each interesting size, then a small one.
TEST(AppendFramedRecord, MatchesTheReferenceModelForEveryRoomUpToTenAndBoundarySizes) {
  for (uint64_t room = 0; room <= 10; ++room) {
    for (uint64_t size : {0ul, 1ul, 2ul, 5ul, 6ul, 7ul, 8ul, 32754ul, 32755ul, 32760ul, 32761ul, 32762ul,
                          65521ul, 65522ul, 65523ul, 70000ul, 98283ul, 98284ul}) {
      SCOPED_TRACE(::testing::Message() << "room " << room << ", size " << size);
      const std::vector<std::string> payloads = {
          Pattern(kBlockSize - kFileHeaderSize - kChunkHeaderSize - room, 1), Pattern(size, 2),
          Pattern(9, 3)};
      const testing::LogLayout reference = ReferenceLog(payloads);
      std::string framed(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
      uint64_t end = kFileHeaderSize;
      for (size_t i = 0; i < payloads.size(); ++i) {
        end = AppendFramedRecord(end, payloads[i], framed);
        EXPECT_EQ(end, reference.records[i].end);
      }
      EXPECT_EQ(framed.size(), end);
      ASSERT_EQ(framed, reference.bytes);
    }
  }
}

}  // namespace
}  // namespace runmon::runlog
