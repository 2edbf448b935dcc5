// LogWriter: exclusive create with the 7-byte header written at once, whole-record appends (all records
// of one Append or none), and the cut-back when a write fails part way. Failures are injected with
// RLIMIT_FSIZE (SIGXFSZ ignored, so the write returns EFBIG instead of killing the process); the limit is
// lifted again afterwards, and the file must then go on growing as if the failed Append never happened.
// Byte identity: the writer rebuilds W&B's two reference fixtures exactly, from Records built with the
// protobuf API and from the `record` objects of the expected JSONL. The committed copies in
// tests/fixtures/runlog/ are checked against W&B's originals when ../shared is present, and always against
// the writer, so the copies stay known-good without ../shared.
#include "runlog/log_writer.hpp"

#include <google/protobuf/util/json_util.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using testing::ReadAll;
using testing::ReadFileBytes;
using testing::ReferenceLog;
using testing::TempDir;

const fs::path kFixtures = RUNMON_RUNLOG_FIXTURES_DIR;

std::string HeaderBytes() {
  return std::string(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
}

std::string Payload(size_t size, int seed) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i)
    out[i] = static_cast<char>(1 + (i * 13 + static_cast<size_t>(seed) * 101) % 251);
  return out;
}

// Sets the soft RLIMIT_FSIZE of this process (SIGXFSZ ignored) and restores both on destruction.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    saved_handler_ = signal(SIGXFSZ, SIG_IGN);
    Set(bytes);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, saved_handler_);
  }
  void Set(rlim_t bytes) {
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  void Lift() { ok_ = setrlimit(RLIMIT_FSIZE, &saved_) == 0; }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  sighandler_t saved_handler_{};
  bool ok_ = false;
};

TEST(LogWriter, CreateWritesTheFileHeaderAtOnceAndThatIsAValidEmptyLog) {
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  EXPECT_EQ(writer->size(), kFileHeaderSize);
  EXPECT_EQ(writer->path(), dir.path() / "run.wandb");
  const std::string bytes = ReadFileBytes(dir.path() / "run.wandb");
  EXPECT_EQ(bytes, HeaderBytes());
  const auto read = ReadAll(bytes);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.damage.empty());
}

TEST(LogWriter, SecondCreateOnTheSamePathFailsAndLeavesTheLogUntouched) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  auto first = LogWriter::Create(path);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(first->Append("one record"));
  const std::string before = ReadFileBytes(path);

  auto second = LogWriter::Create(path);
  EXPECT_FALSE(second.ok());
  if (!second.ok()) {
    EXPECT_NE(second.error().find(path.string()), std::string::npos) << second.error();
  }
  EXPECT_EQ(ReadFileBytes(path), before);
  // The first writer is unaffected.
  ASSERT_TRUE(first->Append("two"));
  EXPECT_EQ(ReadAll(ReadFileBytes(path)).records.size(), 2u);
}

TEST(LogWriter, CreateNeverOverwritesAnExistingFile) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  testing::WriteFileBytes(path, "not a log, must survive");
  EXPECT_FALSE(LogWriter::Create(path).ok());
  EXPECT_EQ(ReadFileBytes(path), "not a log, must survive");
}

TEST(LogWriter, CreateInAMissingDirectoryFails) {
  TempDir dir;
  EXPECT_FALSE(LogWriter::Create(dir.path() / "missing" / "run.wandb").ok());
}

TEST(LogWriter, RefusesAnEmptyPayloadAndWritesNothing) {
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  EXPECT_FALSE(writer->Append(std::string_view()).ok());
  EXPECT_EQ(writer->size(), kFileHeaderSize);
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), HeaderBytes());
}

TEST(LogWriter, BatchWithOneEmptyPayloadWritesNoneOfIt) {
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  const std::vector<std::string> batch = {"first", "", "third"};
  EXPECT_FALSE(writer->Append(batch).ok());
  EXPECT_EQ(writer->size(), kFileHeaderSize);
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), HeaderBytes());
  // And the writer still works.
  ASSERT_TRUE(writer->Append("after"));
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), ReferenceLog({"after"}).bytes);
}

TEST(LogWriter, EmptyBatchIsANoOp) {
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  EXPECT_TRUE(writer->Append(std::vector<std::string>{}).ok());
  EXPECT_EQ(writer->size(), kFileHeaderSize);
}

TEST(LogWriter, MultiRecordAppendFramesLikeTheReferenceAcrossBlocks) {
  // Sizes chosen to give a trailer, a zero-length FIRST chunk and a FIRST/MIDDLE/LAST record.
  const std::vector<std::string> payloads = {Payload(100, 1),   Payload(32761 - 7 - 107 - 3, 2),
                                             Payload(50, 3),    Payload(32761 - 7 - 57 - 7, 4),
                                             Payload(70000, 5), Payload(9, 6)};
  const auto reference = ReferenceLog(payloads);
  ASSERT_EQ(reference.trailers.size(), 1u);
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  ASSERT_TRUE(writer->Append(payloads));
  EXPECT_EQ(writer->size(), reference.bytes.size());
  ASSERT_TRUE(writer->Sync());
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), reference.bytes);
}

TEST(LogWriter, OneRecordAtATimeGivesTheSameBytesAsOneBatch) {
  std::vector<std::string> payloads;
  for (int i = 0; i < 40; ++i) payloads.push_back(Payload(static_cast<size_t>(100 + i * 997), i));
  TempDir dir;
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(writer.ok()) << writer.error();
  for (const auto& payload : payloads) {
    ASSERT_TRUE(writer->Append(payload));
    EXPECT_EQ(writer->size(), fs::file_size(dir.path() / "run.wandb"));
  }
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), ReferenceLog(payloads).bytes);
}

TEST(LogWriter, MovedWriterKeepsWritingAndTheMovedFromOneRefuses) {
  TempDir dir;
  auto created = LogWriter::Create(dir.path() / "run.wandb");
  ASSERT_TRUE(created.ok()) << created.error();
  LogWriter writer = std::move(*created);
  ASSERT_TRUE(writer.Append("a"));
  EXPECT_FALSE(created->Append("b").ok());  // NOLINT(bugprone-use-after-move): moved-from is closed
  EXPECT_FALSE(created->Sync().ok());
  ASSERT_TRUE(writer.Append("c"));
  EXPECT_EQ(ReadFileBytes(dir.path() / "run.wandb"), ReferenceLog({"a", "c"}).bytes);
}

// A file size limit just inside the header: Create fails and leaves no file behind.
TEST(LogWriterFailure, CreateFailingToWriteTheHeaderRemovesTheFile) {
  TempDir dir;
  FileSizeLimit limit(3);
  ASSERT_TRUE(limit.ok());
  auto writer = LogWriter::Create(dir.path() / "run.wandb");
  limit.Lift();
  EXPECT_FALSE(writer.ok());
  EXPECT_FALSE(fs::exists(dir.path() / "run.wandb"));
}

// For each place a write can stop (before anything, inside a trailer, inside a chunk header, inside a
// payload, inside a MIDDLE chunk, one byte short of the end): Append reports the error, the file is cut back
// to the last whole record, every earlier record reads back intact, and once the limit is lifted the log
// continues exactly as if the failed Append had never been called.
TEST(LogWriterFailure, WriteFailingPartWayIsCutBackToTheLastWholeRecord) {
  // Before the failing record the log ends 3 bytes short of block 0's end, so its write starts with a
  // trailer; it is 70000 bytes, so it has FIRST, MIDDLE and LAST chunks.
  const std::vector<std::string> before = {Payload(200, 1), Payload(32761 - 7 - 207 - 3, 2)};
  const std::string failing = Payload(70000, 3);
  const std::vector<std::string> after = {Payload(300, 4), Payload(40000, 5)};
  const auto before_log = ReferenceLog(before);
  const uint64_t start = before_log.bytes.size();
  ASSERT_EQ(start, kBlockSize - 3);
  std::string framed_failing;
  const uint64_t failing_end = AppendFramedRecord(start, failing, framed_failing);

  const uint64_t stops[] = {start,          start + 1,   start + 3,      start + 5,
                            start + 3 + 7,  start + 500, 2 * kBlockSize, 2 * kBlockSize + 9000,
                            failing_end - 1};
  for (const uint64_t stop : stops) {
    SCOPED_TRACE(::testing::Message() << "file size limit " << stop);
    TempDir dir;
    const fs::path path = dir.path() / "run.wandb";
    auto writer = LogWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.error();
    ASSERT_TRUE(writer->Append(before));
    ASSERT_EQ(writer->size(), start);
    {
      FileSizeLimit limit(stop);
      ASSERT_TRUE(limit.ok());
      const Status status = writer->Append(failing);
      limit.Lift();
      EXPECT_FALSE(status.ok());
      if (!status.ok()) {
        EXPECT_NE(status.error().find("File too large"), std::string::npos) << status.error();
      }
    }
    EXPECT_EQ(writer->size(), start);
    const std::string cut = ReadFileBytes(path);
    EXPECT_EQ(cut, before_log.bytes);
    const auto read = ReadAll(cut);
    EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
    ASSERT_EQ(read.records.size(), before.size());
    for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(read.records[i].payload, before[i]);

    for (const auto& payload : after) ASSERT_TRUE(writer->Append(payload));
    std::vector<std::string> all = before;
    all.insert(all.end(), after.begin(), after.end());
    EXPECT_EQ(ReadFileBytes(path), ReferenceLog(all).bytes);
  }
}

// One Append of several records is all or nothing: a failure in its last record removes the whole batch.
TEST(LogWriterFailure, BatchFailingInItsLastRecordLeavesNoneOfTheBatch) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.error();
  ASSERT_TRUE(writer->Append("kept"));
  const uint64_t start = writer->size();
  const std::vector<std::string> batch = {Payload(1000, 1), Payload(1000, 2), Payload(1000, 3)};
  {
    FileSizeLimit limit(start + 2 * 1007 + 500);
    ASSERT_TRUE(limit.ok());
    EXPECT_FALSE(writer->Append(batch).ok());
  }
  EXPECT_EQ(writer->size(), start);
  EXPECT_EQ(ReadFileBytes(path), ReferenceLog({"kept"}).bytes);
  ASSERT_TRUE(writer->Append(batch));
  EXPECT_EQ(ReadFileBytes(path), ReferenceLog({"kept", batch[0], batch[1], batch[2]}).bytes);
}

// --- Byte identity with W&B's reference fixtures ---------------------------------------------------

std::string WriteWithLogWriter(const fs::path& path, const std::vector<std::string>& payloads) {
  auto writer = LogWriter::Create(path);
  if (!writer.ok()) return "create failed: " + writer.error();
  for (const auto& payload : payloads) {
    if (auto status = writer->Append(payload); !status.ok()) return "append failed: " + status.error();
  }
  return ReadFileBytes(path);
}

// The `record` objects of an expected JSONL, parsed back into Records (decoded "value" keys, which only
// W&B's sample-stats file has, are not Record fields and are dropped first).
std::vector<std::string> PayloadsFromExpectedJsonl(const fs::path& path) {
  std::vector<std::string> payloads;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line).at("record");
    testing::StripDecodedValues(record);
    wandb::Record message;
    const auto status = google::protobuf::util::JsonStringToMessage(record.dump(), &message);
    EXPECT_TRUE(status.ok()) << status.ToString();
    payloads.push_back(message.SerializeAsString());
  }
  return payloads;
}

TEST(LogWriterFixture, SampleStatsRebuiltWithProtobufApiMatchesTheCommittedCopy) {
  TempDir dir;
  const std::string written =
      WriteWithLogWriter(dir.path() / "run.wandb", testing::SerializeAll(testing::SampleStatsRecords()));
  EXPECT_EQ(written.size(), 812u);
  EXPECT_TRUE(written == ReadFileBytes(kFixtures / "sample-stats.wandb"));
}

TEST(LogWriterFixture, SampleMultiblockRebuiltWithProtobufApiMatchesTheCommittedCopy) {
  TempDir dir;
  const std::string written =
      WriteWithLogWriter(dir.path() / "run.wandb", testing::SerializeAll(testing::SampleMultiblockRecords()));
  EXPECT_EQ(written.size(), 135982u);
  EXPECT_TRUE(written == ReadFileBytes(kFixtures / "sample-multiblock.wandb"));
}

TEST(LogWriterFixture, RecordsParsedFromTheCommittedExpectedJsonlReproduceTheCommittedFiles) {
  for (const char* name : {"sample-stats", "sample-multiblock"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const auto payloads = PayloadsFromExpectedJsonl(kFixtures / (std::string(name) + ".expected.jsonl"));
    EXPECT_TRUE(WriteWithLogWriter(dir.path() / "run.wandb", payloads) ==
                ReadFileBytes(kFixtures / (std::string(name) + ".wandb")));
  }
}

#ifdef RUNMON_WANDB_FIXTURES_DIR
const fs::path kWandbFixtures = RUNMON_WANDB_FIXTURES_DIR;

TEST(LogWriterWandbConformance, CommittedCopiesAreByteIdenticalToWandbsFiles) {
  for (const char* name : {"sample-stats.wandb", "sample-multiblock.wandb"}) {
    EXPECT_TRUE(ReadFileBytes(kFixtures / name) == ReadFileBytes(kWandbFixtures / name)) << name;
  }
}

TEST(LogWriterWandbConformance, SampleStatsRebuiltWithProtobufApiIsByteIdenticalToWandbs) {
  TempDir dir;
  EXPECT_TRUE(
      WriteWithLogWriter(dir.path() / "run.wandb", testing::SerializeAll(testing::SampleStatsRecords())) ==
      ReadFileBytes(kWandbFixtures / "sample-stats.wandb"));
}

TEST(LogWriterWandbConformance, SampleMultiblockRebuiltWithProtobufApiIsByteIdenticalToWandbs) {
  TempDir dir;
  EXPECT_TRUE(WriteWithLogWriter(dir.path() / "run.wandb",
                                 testing::SerializeAll(testing::SampleMultiblockRecords())) ==
              ReadFileBytes(kWandbFixtures / "sample-multiblock.wandb"));
}

TEST(LogWriterWandbConformance, RecordsParsedFromWandbsExpectedJsonlReproduceWandbsFiles) {
  for (const char* name : {"sample-stats", "sample-multiblock"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const auto payloads = PayloadsFromExpectedJsonl(kWandbFixtures / (std::string(name) + ".expected.jsonl"));
    EXPECT_TRUE(WriteWithLogWriter(dir.path() / "run.wandb", payloads) ==
                ReadFileBytes(kWandbFixtures / (std::string(name) + ".wandb")));
  }
}
#endif

}  // namespace
}  // namespace runmon::runlog
