// LogReader and RecordReader on whole files and on hand-made edge cases (run-log-format.md section 5).
// Fixtures: the committed copies of W&B's reference files are read (from memory and through FileSource)
// and compared with the committed expected JSONL (index, offsets, length, record type, the record as
// protobuf JSON); W&B's originals and their expected JSONL too, when ../shared exists. The edge cases are
// the situations of the spec's reader table: bad file headers, a header cut short (a writer that has
// only just created the file), a file ending where a trailer would start (valid: writers never pad at
// close), zeroed or impossible chunk headers, chunks without their FIRST or LAST, and payloads with a
// valid CRC that are not Records. Odd sizes in this file only place records next to a block end.
#include "runlog/log_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runlog/log_format.hpp"
#include "runlog/record_reader.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using testing::ReadAll;
using testing::ReadFileBytes;
using testing::ReferenceLog;

const fs::path kFixtures = RUNMON_RUNLOG_FIXTURES_DIR;

std::string HeaderBytes() {
  return std::string(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
}

// A chunk with the given header fields (no CRC computed).
std::string RawChunk(uint32_t crc, size_t length, int type, std::string_view payload) {
  std::string out;
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((crc >> shift) & 0xFF));
  out.push_back(static_cast<char>(length & 0xFF));
  out.push_back(static_cast<char>((length >> 8) & 0xFF));
  out.push_back(static_cast<char>(type));
  out.append(payload);
  return out;
}

// A well-formed chunk of the given type.
std::string Chunk(ChunkType type, std::string_view payload) {
  return RawChunk(ChunkChecksum(type, payload), payload.size(), static_cast<int>(type), payload);
}

std::string Filler(size_t size, char c = 'f') {
  return std::string(size, c);
}

// Pads `log` with one FULL chunk so that exactly `room` bytes are left in the current block (room >= 0).
void FillBlockLeaving(std::string& log, uint64_t room) {
  const uint64_t left = kBlockSize - log.size() % kBlockSize;
  log += Chunk(ChunkType::kFull, Filler(static_cast<size_t>(left - kChunkHeaderSize - room)));
}

std::string StatsPayload(int64_t num) {
  wandb::Record record;
  record.set_num(num);
  auto* item = record.mutable_stats()->add_item();
  item->set_key("cpu");
  item->set_value_json("12.5");
  return record.SerializeAsString();
}

// --- whole files against expected JSONL --------------------------------------------------------------

std::vector<nlohmann::json> ExpectedLines(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

void ExpectRecordsMatch(RecordReader& reader, const fs::path& expected_path) {
  const auto expected = ExpectedLines(expected_path);
  ASSERT_FALSE(expected.empty());
  for (const auto& line : expected) {
    SCOPED_TRACE(::testing::Message() << "expected record " << line.at("index"));
    ASSERT_EQ(reader.Next(), ReadOutcome::kRecord) << reader.error();
    EXPECT_EQ(reader.index(), line.at("index").get<uint64_t>());
    EXPECT_EQ(reader.offset(), line.at("offset").get<uint64_t>());
    EXPECT_EQ(reader.end(), line.at("end").get<uint64_t>());
    EXPECT_EQ(reader.length(), line.at("length").get<uint64_t>());
    EXPECT_EQ(RecordTypeName(reader.record()), line.at("record_type").get<std::string>());
    nlohmann::json want = line.at("record");
    testing::StripDecodedValues(want);
    EXPECT_EQ(nlohmann::json::parse(RecordToJson(reader.record())), want);
  }
  EXPECT_EQ(reader.Next(), ReadOutcome::kEnd);
  EXPECT_TRUE(reader.damage().empty());
  EXPECT_TRUE(reader.error().empty()) << reader.error();
}

void ExpectFileMatches(const fs::path& log, const fs::path& expected) {
  SCOPED_TRACE(log.string());
  {
    const std::string bytes = ReadFileBytes(log);
    RecordReader reader(MemorySource(bytes));
    ExpectRecordsMatch(reader, expected);
  }
  {
    const int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    RecordReader reader(FileSource(fd));
    ExpectRecordsMatch(reader, expected);
    ::close(fd);
  }
}

TEST(LogReaderFixture, SampleStatsMatchesItsExpectedJsonl) {
  ExpectFileMatches(kFixtures / "sample-stats.wandb", kFixtures / "sample-stats.expected.jsonl");
}

TEST(LogReaderFixture, SampleMultiblockMatchesItsExpectedJsonl) {
  ExpectFileMatches(kFixtures / "sample-multiblock.wandb", kFixtures / "sample-multiblock.expected.jsonl");
}

TEST(LogReaderFixture, SampleMultiblockChunkEdgeCasesComeBackWithTheirOffsets) {
  const auto read = ReadAll(ReadFileBytes(kFixtures / "sample-multiblock.wandb"));
  ASSERT_EQ(read.records.size(), 9u);
  EXPECT_EQ(read.records[3].end, 32765u);     // 3 bytes left: trailer
  EXPECT_EQ(read.records[4].offset, 32768u);  // after the trailer
  EXPECT_EQ(read.records[5].offset, 65529u);  // zero-length FIRST
  EXPECT_EQ(read.records[5].payload.size(), 192u);
  EXPECT_EQ(read.records[6].offset, 65735u);  // FIRST, MIDDLE, LAST
  EXPECT_EQ(read.records[6].payload.size(), 70000u);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_EQ(read.position, 135982u);
}

#ifdef RUNMON_WANDB_FIXTURES_DIR
const fs::path kWandbFixtures = RUNMON_WANDB_FIXTURES_DIR;

TEST(LogReaderWandbConformance, WandbSampleStatsMatchesWandbsExpectedJsonl) {
  ExpectFileMatches(kWandbFixtures / "sample-stats.wandb", kWandbFixtures / "sample-stats.expected.jsonl");
}

TEST(LogReaderWandbConformance, WandbSampleMultiblockMatchesWandbsExpectedJsonl) {
  ExpectFileMatches(kWandbFixtures / "sample-multiblock.wandb",
                    kWandbFixtures / "sample-multiblock.expected.jsonl");
}

TEST(LogReaderWandbConformance, CommittedExpectedJsonlAgreesWithWandbsApartFromShaAndDecodedValues) {
  for (const char* name : {"sample-stats.expected.jsonl", "sample-multiblock.expected.jsonl"}) {
    auto ours = ExpectedLines(kFixtures / name);
    auto theirs = ExpectedLines(kWandbFixtures / name);
    ASSERT_EQ(ours.size(), theirs.size()) << name;
    for (size_t i = 0; i < ours.size(); ++i) {
      theirs[i].erase("sha256");
      testing::StripDecodedValues(theirs[i]);
      EXPECT_EQ(ours[i], theirs[i]) << name << " line " << i;
    }
  }
}
#endif

// --- file header -------------------------------------------------------------------------------------

TEST(LogReaderHeader, WrongIdentFailsWithAClearError) {
  const auto read = ReadAll("XW&B\xE1\xBE" + std::string(1, '\0') + Chunk(ChunkType::kFull, "x"));
  EXPECT_EQ(read.outcome, ReadOutcome::kFailed);
  EXPECT_NE(read.error.find("not a W&B run log"), std::string::npos) << read.error;
  EXPECT_TRUE(read.records.empty());
}

TEST(LogReaderHeader, WrongMagicFails) {
  EXPECT_EQ(ReadAll(std::string(":W&B\xBE\xE1", 6) + '\0').outcome, ReadOutcome::kFailed);
}

TEST(LogReaderHeader, ShortFileThatIsNotAHeaderPrefixFails) {
  EXPECT_EQ(ReadAll(":W!").outcome, ReadOutcome::kFailed);
  EXPECT_EQ(ReadAll("{").outcome, ReadOutcome::kFailed);
}

TEST(LogReaderHeader, VersionOneFailsNamingTheVersion) {
  std::string log = HeaderBytes() + Chunk(ChunkType::kFull, StatsPayload(1));
  log[6] = 1;
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kFailed);
  EXPECT_NE(read.error.find("version 1"), std::string::npos) << read.error;
}

TEST(LogReaderHeader, FailureIsFinal) {
  LogReader reader(MemorySource("not a run log at all"));
  RawRecord record;
  EXPECT_EQ(reader.Next(record), ReadOutcome::kFailed);
  EXPECT_EQ(reader.Next(record), ReadOutcome::kFailed);
  EXPECT_FALSE(reader.error().empty());
}

TEST(LogReaderHeader, EveryNonEmptyPrefixOfTheHeaderIsIncompleteNotFailed) {
  // A writer that has just created the file (wandb-core writes the header straight away).
  for (size_t size = 1; size < kFileHeaderSize; ++size) {
    const auto read = ReadAll(HeaderBytes().substr(0, size));
    EXPECT_EQ(read.outcome, ReadOutcome::kIncomplete) << size << " bytes";
    EXPECT_EQ(read.incomplete_bytes, size);
    EXPECT_TRUE(read.error.empty());
  }
}

// No data at all (a file just created, before its header is written; the sources return an empty view
// without storage there): incomplete, like any prefix of the header. The header check must not pass the
// view's null data pointer to memcmp, even with a length of 0 (undefined behaviour; UBSan aborts).
TEST(LogReaderHeader, EmptyDataIsIncompleteWithoutUndefinedBehaviour) {
  const auto read = ReadAll(std::string_view());
  EXPECT_EQ(read.outcome, ReadOutcome::kIncomplete);
  EXPECT_EQ(read.incomplete_bytes, 0u);
  EXPECT_TRUE(read.error.empty());
}

TEST(LogReaderHeader, ExactlyTheHeaderIsACleanEmptyLog) {
  const auto read = ReadAll(HeaderBytes());
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.damage.empty());
  EXPECT_EQ(read.position, kFileHeaderSize);
}

// --- block trailers and file ends -----------------------------------------------------------------------

TEST(LogReaderTrailer, FileEndingWhereATrailerWouldStartIsACleanEnd) {
  std::string log = HeaderBytes();
  FillBlockLeaving(log, 3);
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_EQ(read.records.size(), 1u);
  EXPECT_TRUE(read.damage.empty());
}

TEST(LogReaderTrailer, FileEndingAfterAWholeTrailerIsACleanEnd) {
  std::string log = HeaderBytes();
  FillBlockLeaving(log, 5);
  log += Filler(5, '\0');
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_EQ(read.records.size(), 1u);
  EXPECT_TRUE(read.damage.empty());
}

// A trailer is written together with the chunk that follows it (spec 2.4), so a file that ends part way
// through one is a torn tail, as W&B's Go reader says (io.ErrUnexpectedEOF: "bytes after the last valid
// chunk in a short last block that can't form a chunk"). The reader must not claim a clean end.
TEST(LogReaderTrailer, FileEndingInsideATrailerIsATornTailNotACleanEnd) {
  for (uint64_t present = 1; present < 5; ++present) {
    SCOPED_TRACE(::testing::Message() << present << " of 5 trailer bytes present");
    std::string log = HeaderBytes();
    FillBlockLeaving(log, 5);
    log += Filler(static_cast<size_t>(present), '\0');
    const auto read = ReadAll(log);
    EXPECT_EQ(read.records.size(), 1u);
    EXPECT_TRUE(read.damage.empty());
    EXPECT_EQ(read.outcome, ReadOutcome::kIncomplete);
  }
}

TEST(LogReaderTrailer, NonZeroTrailerBytesAreNotChecked) {
  std::string log = HeaderBytes();
  FillBlockLeaving(log, 6);
  log += "\xFF\x01\x02\x03\x04\x05";
  log += Chunk(ChunkType::kFull, "next block");
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[1].offset, kBlockSize);
  EXPECT_EQ(read.records[1].payload, "next block");
  EXPECT_TRUE(read.damage.empty());
}

TEST(LogReaderTail, TornChunkHeaderAndTornPayloadAreIncompleteWithTheirByteCount) {
  const std::string whole =
      HeaderBytes() + Chunk(ChunkType::kFull, "first") + Chunk(ChunkType::kFull, "second!");
  const uint64_t second = kFileHeaderSize + 12;
  for (uint64_t cut = second + 1; cut < whole.size(); ++cut) {
    const auto read = ReadAll(std::string_view(whole).substr(0, static_cast<size_t>(cut)));
    EXPECT_EQ(read.outcome, ReadOutcome::kIncomplete) << cut;
    EXPECT_EQ(read.records.size(), 1u);
    EXPECT_EQ(read.position, second);
    EXPECT_EQ(read.incomplete_bytes, cut - second);
    EXPECT_TRUE(read.damage.empty());
  }
}

TEST(LogReaderTail, FileEndingAfterAFirstChunkAtTheBlockEndIsIncomplete) {
  std::string log = HeaderBytes();
  FillBlockLeaving(log, 7);
  log += Chunk(ChunkType::kFirst, "");  // zero-length FIRST fills the block
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kIncomplete);
  EXPECT_EQ(read.records.size(), 1u);
  EXPECT_EQ(read.position, kBlockSize - 7);
  EXPECT_EQ(read.incomplete_bytes, 7u);
  EXPECT_TRUE(read.damage.empty());
}

// --- damaged framing ----------------------------------------------------------------------------------

TEST(LogReaderDamage, ZeroedChunkHeaderSkipsTheRestOfTheBlockAndIsReported) {
  std::string log = HeaderBytes() + Chunk(ChunkType::kFull, "before");
  const uint64_t zeroed = log.size();
  log += Filler(7, '\0') + Chunk(ChunkType::kFull, "lost: same block after the zeroed header");
  FillBlockLeaving(log, 0);
  log += Chunk(ChunkType::kFull, "next block");
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[0].payload, "before");
  EXPECT_EQ(read.records[1].payload, "next block");
  ASSERT_EQ(read.damage.size(), 1u);
  EXPECT_EQ(read.damage[0].offset, zeroed);
  EXPECT_EQ(read.damage[0].length, kBlockSize - zeroed);
  EXPECT_NE(read.damage[0].reason.find("zero"), std::string::npos) << read.damage[0].reason;
}

TEST(LogReaderDamage, MiddleAndLastWithoutFirstAreReportedAndSkipped) {
  std::string log = HeaderBytes() + Chunk(ChunkType::kFull, "one");
  const uint64_t orphan = log.size();
  log += Chunk(ChunkType::kMiddle, "orphan middle") + Chunk(ChunkType::kLast, "orphan last");
  const uint64_t orphan_end = log.size();
  log += Chunk(ChunkType::kFull, "two");
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[1].payload, "two");
  ASSERT_EQ(read.damage.size(), 1u);  // adjacent ranges merge
  EXPECT_EQ(read.damage[0].offset, orphan);
  EXPECT_EQ(read.damage[0].length, orphan_end - orphan);
  EXPECT_NE(read.damage[0].reason.find("first chunk"), std::string::npos) << read.damage[0].reason;
}

TEST(LogReaderDamage, FirstFollowedByFullInsteadOfLastIsReported) {
  std::string log = HeaderBytes() + Chunk(ChunkType::kFirst, "start of a record that never ends");
  const uint64_t full = log.size();
  log += Chunk(ChunkType::kFull, "whole");
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 1u);
  EXPECT_EQ(read.records[0].payload, "whole");
  ASSERT_EQ(read.damage.size(), 1u);
  EXPECT_EQ(read.damage[0].offset, kFileHeaderSize);
  EXPECT_EQ(read.damage[0].length, full - kFileHeaderSize);
  EXPECT_NE(read.damage[0].reason.find("last chunk"), std::string::npos) << read.damage[0].reason;
}

TEST(LogReaderDamage, ChecksumMismatchResyncsAtTheNextBlockSkippingTheRestOfTheRecord) {
  // A record FIRST (block 0) / MIDDLE (block 1) / LAST (block 2) whose FIRST is damaged: everything up to
  // the end of its LAST is one damaged range, and the record after it is read.
  std::string log = HeaderBytes() + Chunk(ChunkType::kFull, "ok");
  const uint64_t damaged = log.size();
  const std::string big(2 * kMaxChunkPayload, 'b');
  uint64_t end = AppendFramedRecord(log.size(), big, log);
  log[static_cast<size_t>(damaged) + 20] = static_cast<char>(log[static_cast<size_t>(damaged) + 20] ^ 0x01);
  end = AppendFramedRecord(end, "after", log);
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[1].payload, "after");
  ASSERT_EQ(read.damage.size(), 1u);
  EXPECT_EQ(read.damage[0].offset, damaged);
  EXPECT_EQ(read.damage[0].length, end - 12 - damaged);
  EXPECT_NE(read.damage[0].reason.find("checksum"), std::string::npos) << read.damage[0].reason;
}

TEST(LogReaderDamage, ChunkLongerThanItsBlockIsReported) {
  std::string log = HeaderBytes();
  FillBlockLeaving(log, 20);
  const uint64_t bad = log.size();
  log += RawChunk(0x12345678, 14, 1, Filler(13));  // 7 + 14 > 20
  log += Chunk(ChunkType::kFull, "next");
  const auto read = ReadAll(log);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[1].payload, "next");
  ASSERT_EQ(read.damage.size(), 1u);
  EXPECT_EQ(read.damage[0].offset, bad);
  EXPECT_EQ(read.damage[0].length, kBlockSize - bad);
}

TEST(LogReaderDamage, UnknownChunkTypeIsReported) {
  for (int type : {0, 5, 255}) {
    std::string log = HeaderBytes() + RawChunk(ChunkChecksum(ChunkType::kFull, "x"), 1, type, "x");
    const auto read = ReadAll(log);
    EXPECT_EQ(read.outcome, ReadOutcome::kEnd) << type;
    EXPECT_TRUE(read.records.empty());
    ASSERT_EQ(read.damage.size(), 1u) << type;
    EXPECT_EQ(read.damage[0].offset, kFileHeaderSize);
    EXPECT_EQ(read.damage[0].length, log.size() - kFileHeaderSize);  // only the bytes that exist
  }
}

TEST(LogReaderDamage, DamagedAdjacentBlocksMergeIntoOneRange) {
  std::string log = HeaderBytes() + Chunk(ChunkType::kFull, "ok");
  const uint64_t start = log.size();
  log += RawChunk(1, 1, 1, "x");  // bad CRC in block 0
  FillBlockLeaving(log, 0);
  log += RawChunk(2, 1, 1, "y");  // bad CRC at the start of block 1
  FillBlockLeaving(log, 0);
  log += Chunk(ChunkType::kFull, "block 2");
  const auto read = ReadAll(log);
  ASSERT_EQ(read.records.size(), 2u);
  ASSERT_EQ(read.damage.size(), 1u);
  EXPECT_EQ(read.damage[0].offset, start);
  EXPECT_EQ(read.damage[0].length, 2 * kBlockSize - start);
}

TEST(LogReaderDamage, ReportDamageIgnoresEmptyRangesAndMergesAdjacentOnes) {
  LogReader reader(MemorySource(HeaderBytes()));
  reader.ReportDamage(10, 0, "nothing");
  EXPECT_TRUE(reader.damage().empty());
  reader.ReportDamage(10, 5, "a");
  reader.ReportDamage(15, 5, "b");
  reader.ReportDamage(30, 1, "c");
  ASSERT_EQ(reader.damage().size(), 2u);
  EXPECT_EQ(reader.damage()[0].length, 10u);
  EXPECT_EQ(reader.damage()[1].offset, 30u);
}

// --- decoding ------------------------------------------------------------------------------------------

TEST(RecordReader, PayloadWithValidChecksumThatIsNotARecordIsReportedAndSkipped) {
  // Field 2 (history) claims 127 bytes but has 2.
  const std::string garbage("\x12\x7f\x01\x02", 4);
  std::string log = HeaderBytes();
  uint64_t end = AppendFramedRecord(kFileHeaderSize, StatsPayload(1), log);
  const uint64_t bad = end;
  end = AppendFramedRecord(end, garbage, log);
  const uint64_t bad_end = end;
  end = AppendFramedRecord(end, StatsPayload(3), log);
  RecordReader reader(MemorySource(log));
  ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
  EXPECT_EQ(reader.index(), 0u);
  EXPECT_EQ(reader.record().num(), 1);
  ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
  EXPECT_EQ(reader.record().num(), 3);
  EXPECT_EQ(reader.index(), 1u);  // indexes count records that decode
  EXPECT_EQ(reader.offset(), bad_end);
  EXPECT_EQ(reader.Next(), ReadOutcome::kEnd);
  ASSERT_EQ(reader.damage().size(), 1u);
  EXPECT_EQ(reader.damage()[0].offset, bad);
  EXPECT_EQ(reader.damage()[0].length, bad_end - bad);
  EXPECT_NE(reader.damage()[0].reason.find("does not decode"), std::string::npos)
      << reader.damage()[0].reason;
}

TEST(RecordReader, InvalidUtf8InAStringFieldDoesNotDecode) {
  // W&B's readers reject it (spec 3); so does protobuf's C++ runtime for proto3 strings.
  wandb::Record record;
  record.set_num(1);
  record.mutable__info()->set_stream_id("ok");
  std::string payload = record.SerializeAsString();
  ASSERT_EQ(payload.substr(payload.size() - 2), "ok");
  payload[payload.size() - 1] = '\xFF';
  const std::string log = ReferenceLog({payload, StatsPayload(2)}).bytes;
  RecordReader reader(MemorySource(log));
  ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
  EXPECT_EQ(reader.record().num(), 2);
  EXPECT_EQ(reader.damage().size(), 1u);
}

TEST(RecordReader, RecordOfATypeThisBuildDoesNotKnowDecodesAsUnknown) {
  // Field 99 (a future record type) with an empty message, and an empty payload.
  const std::string log = ReferenceLog({std::string("\x08\x05\x9A\x06\x00", 5), ""}).bytes;
  RecordReader reader(MemorySource(log));
  ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
  EXPECT_EQ(reader.record().num(), 5);
  EXPECT_EQ(RecordTypeName(reader.record()), "unknown");
  ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
  EXPECT_EQ(reader.length(), 0u);
  EXPECT_EQ(RecordTypeName(reader.record()), "unknown");
  EXPECT_EQ(reader.Next(), ReadOutcome::kEnd);
  EXPECT_TRUE(reader.damage().empty());
}

// RecordReader decodes stats records into a kept StatsRecord whose items it reuses; nothing of an earlier
// record may show through: fewer items, fields left unset, other record types in between, a record that
// names stats and then another type (the last oneof member wins), unknown fields, a payload that fails.
TEST(RecordReader, ReusedStatsRecordsDecodeExactlyLikeAFreshParse) {
  auto stats = [](int64_t num, int items, bool timestamp, bool info) {
    wandb::Record record;
    record.set_num(num);
    auto* s = record.mutable_stats();
    if (timestamp) s->mutable_timestamp()->set_seconds(1735689600 + num);
    for (int i = 0; i < items; ++i) {
      auto* item = s->add_item();
      item->set_key("key" + std::to_string(i));
      item->set_value_json(std::to_string(num * 100 + i));
    }
    if (info) record.mutable__info()->set_stream_id("abc");
    return record.SerializeAsString();
  };
  wandb::Record exit;
  exit.mutable_exit()->set_runtime(5);
  const std::string stats_then_exit = stats(9, 2, true, false) + exit.SerializeAsString();
  const std::string stats_with_unknown =
      stats(10, 1, false, false) + std::string("\xA0\x06\x01", 3);  // field 100
  const std::vector<std::string> payloads = {
      stats(1, 5, true, true),  stats(2, 2, false, false),  StatsPayload(3),
      exit.SerializeAsString(), stats(4, 0, false, true),   stats(5, 7, true, false),
      stats(6, 1, true, true),  std::string("\x3A\x7F", 2), stats(7, 3, false, false),
      stats_then_exit,          stats_with_unknown,         stats(11, 4, true, true)};
  const std::string log = ReferenceLog(payloads).bytes;
  RecordReader reader(MemorySource(log));
  size_t decoded = 0;
  for (const auto& payload : payloads) {
    wandb::Record fresh;
    if (!fresh.ParseFromString(payload)) continue;  // the reader skips it too (checked below)
    ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
    EXPECT_TRUE(reader.payload() == payload);
    EXPECT_EQ(reader.record().SerializeAsString(), fresh.SerializeAsString()) << "record " << decoded;
    EXPECT_EQ(RecordToJson(reader.record()), RecordToJson(fresh)) << "record " << decoded;
    ++decoded;
  }
  EXPECT_EQ(reader.Next(), ReadOutcome::kEnd);
  EXPECT_EQ(decoded, payloads.size() - 1);
  EXPECT_EQ(reader.damage().size(), 1u);
}

TEST(RecordReader, RecordTypeNameUsesWandbsOneofNames) {
  wandb::Record record;
  record.mutable_stats();
  EXPECT_EQ(RecordTypeName(record), "stats");
  record.mutable_output_raw();
  EXPECT_EQ(RecordTypeName(record), "output_raw");
  record.mutable_environment();
  EXPECT_EQ(RecordTypeName(record), "environment");
}

TEST(RecordReader, RecordToJsonUsesProtoFieldNamesOnOneLine) {
  wandb::Record record;
  record.set_num(7);
  record.mutable_environment()->set_cpu_count_logical(16);
  record.mutable_environment()->mutable_memory()->set_total(137438953472ULL);
  const std::string json = RecordToJson(record);
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json),
            nlohmann::json::parse(
                R"({"num":"7","environment":{"cpu_count_logical":16,"memory":{"total":"137438953472"}}})"));
}

}  // namespace
}  // namespace runmon::runlog
