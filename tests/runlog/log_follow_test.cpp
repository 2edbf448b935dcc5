// A LogReader over FileSource following a log while it is written, as `runmon dump --follow` or LEET do:
// at the tail the reader says kEnd (or kIncomplete inside a record) and, once the file has grown, resumes
// and returns every record exactly once, in order, with no damage. The torn tails are made with raw
// write() calls of a framed record cut at awkward places (inside a block trailer, inside a chunk header,
// at a block boundary between FIRST and MIDDLE, one byte at a time), because LogWriter itself always
// writes whole records. Record sizes are chosen only to put records next to block ends.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/records.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using testing::OutcomeName;
using testing::TempDir;

std::string Payload(size_t size, int seed) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i)
    out[i] = static_cast<char>(1 + (i * 29 + static_cast<size_t>(seed) * 7) % 253);
  if (size >= 1) out[0] = static_cast<char>(seed);
  return out;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads everything available and checks each record against `expected[next]`.
class Follower {
 public:
  explicit Follower(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), reader_(FileSource(fd_)) {}
  ~Follower() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReadOutcome Drain(const std::vector<std::string>& expected) {
    RawRecord raw;
    for (;;) {
      const ReadOutcome outcome = reader_.Next(raw);
      if (outcome != ReadOutcome::kRecord) return outcome;
      if (next_ >= expected.size()) {
        ADD_FAILURE() << "an extra record at " << raw.offset;
        return outcome;
      }
      EXPECT_TRUE(raw.payload == expected[next_]) << "record " << next_ << " at " << raw.offset;
      ++next_;
    }
  }
  size_t count() const { return next_; }
  const LogReader& reader() const { return reader_; }
  LogReader& reader() { return reader_; }

 private:
  int fd_;
  LogReader reader_;
  size_t next_ = 0;
};

TEST(LogFollow, ReaderFollowingLogWriterGetsEveryRecordOnceInOrder) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.error();
  Follower follower(path);
  std::vector<std::string> expected;
  EXPECT_EQ(follower.Drain(expected), ReadOutcome::kEnd);

  // Rounds of appends, one or several records at a time, sized to cross every block-edge case.
  int seed = 1;
  const std::vector<std::vector<size_t>> rounds = {
      {100}, {200, 300}, {32761 - 7 - 107 - 207 - 307 - 3}, {40}, {70000}, {5, 6, 7}, {32761 * 2}, {1}};
  for (const auto& sizes : rounds) {
    std::vector<std::string> batch;
    for (size_t size : sizes) batch.push_back(Payload(size, seed++));
    ASSERT_TRUE(writer->Append(batch).ok());
    expected.insert(expected.end(), batch.begin(), batch.end());
    EXPECT_EQ(follower.Drain(expected), ReadOutcome::kEnd);
    EXPECT_EQ(follower.count(), expected.size());
    // At the end, the next read starts where the writer's next write will (a trailer, if one comes, is
    // read with the chunk after it).
    EXPECT_EQ(follower.reader().position(), writer->size());
  }
  EXPECT_TRUE(follower.reader().damage().empty());
  // Nothing new: still the end, nothing returned twice.
  EXPECT_EQ(follower.Drain(expected), ReadOutcome::kEnd);
  EXPECT_EQ(follower.count(), expected.size());
}

TEST(LogFollow, TornTailsGrowingPieceByPieceAreResumedExactlyOnce) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  std::vector<std::string> expected;
  uint64_t size = 0;
  {
    auto writer = LogWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.error();
    expected = {Payload(500, 1), Payload(32761 - 7 - 507 - 4, 2)};  // leaves 4 bytes in block 0
    ASSERT_TRUE(writer->Append(expected).ok());
    size = writer->size();
  }
  ASSERT_EQ(kBlockSize - size, 4u);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Follower follower(path);
  EXPECT_EQ(follower.Drain(expected), ReadOutcome::kEnd);

  // Each record is framed at the current end and written in pieces ending at `cuts` (relative offsets).
  struct Torn {
    std::string payload;
    std::vector<uint64_t> cuts;
  };
  std::vector<Torn> plan;
  // A 4-byte trailer, then FIRST (block 1), MIDDLE (block 2), LAST (block 3): cut inside the trailer, at its
  // end, inside the FIRST header, inside its payload, at the block boundary before the MIDDLE, inside the
  // MIDDLE header and payload, between MIDDLE and LAST.
  plan.push_back({Payload(70000, 3),
                  {1, 3, 4, 6, 11, 500, 4 + kBlockSize, 4 + kBlockSize + 2, 4 + kBlockSize + 9000,
                   4 + 2 * kBlockSize, 4 + 2 * kBlockSize + 7}});
  // A record filling block 3 up to 7 bytes before its end, so that the next one starts with a
  // zero-length FIRST chunk; that one is cut after the FIRST chunk, at the block boundary and in its LAST.
  std::string ignored;
  const uint64_t left = kBlockSize - AppendFramedRecord(size, plan[0].payload, ignored) % kBlockSize;
  plan.push_back({Payload(static_cast<size_t>(left - 7 - 7), 4), {2, 7, 8}});
  plan.push_back({Payload(1000, 5), {3, 7, 8, 14, 600}});
  // Finally a small record written one byte at a time.
  Torn bytewise{Payload(30, 6), {}};
  for (uint64_t i = 1; i < 30 + 7; ++i) bytewise.cuts.push_back(i);
  plan.push_back(bytewise);

  for (const auto& record : plan) {
    std::string framed;
    const uint64_t end = AppendFramedRecord(size, record.payload, framed);
    ASSERT_EQ(end, size + framed.size());
    uint64_t written = 0;
    for (uint64_t cut : record.cuts) {
      ASSERT_LT(cut, framed.size());
      ASSERT_TRUE(WriteAll(fd, std::string_view(framed).substr(static_cast<size_t>(written),
                                                               static_cast<size_t>(cut - written))));
      written = cut;
      const ReadOutcome outcome = follower.Drain(expected);
      EXPECT_TRUE(outcome == ReadOutcome::kEnd || outcome == ReadOutcome::kIncomplete)
          << OutcomeName(outcome) << " with " << cut << " of " << framed.size() << " bytes";
      EXPECT_EQ(follower.count(), expected.size()) << "a record came back before it was complete";
    }
    ASSERT_TRUE(WriteAll(fd, std::string_view(framed).substr(static_cast<size_t>(written))));
    expected.push_back(record.payload);
    EXPECT_EQ(follower.Drain(expected), ReadOutcome::kEnd);
    EXPECT_EQ(follower.count(), expected.size());
    size = end;
  }
  EXPECT_TRUE(follower.reader().damage().empty());
  ::close(fd);
}

TEST(LogFollow, FileHeaderWrittenInPiecesIsIncompleteUntilWhole) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  // (An empty file is LogReaderHeader.EmptyDataIsIncompleteWithoutUndefinedBehaviour's business.)
  const std::string header(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  ASSERT_TRUE(WriteAll(fd, header.substr(0, 1)));
  Follower follower(path);
  EXPECT_EQ(follower.Drain({}), ReadOutcome::kIncomplete);
  ASSERT_TRUE(WriteAll(fd, header.substr(1, 3)));
  EXPECT_EQ(follower.Drain({}), ReadOutcome::kIncomplete);
  ASSERT_TRUE(WriteAll(fd, header.substr(4, 2)));
  EXPECT_EQ(follower.Drain({}), ReadOutcome::kIncomplete);
  ASSERT_TRUE(WriteAll(fd, header.substr(6)));
  EXPECT_EQ(follower.Drain({}), ReadOutcome::kEnd);
  std::string framed;
  AppendFramedRecord(kFileHeaderSize, "hello", framed);
  ASSERT_TRUE(WriteAll(fd, framed));
  EXPECT_EQ(follower.Drain({"hello"}), ReadOutcome::kEnd);
  EXPECT_EQ(follower.count(), 1u);
  ::close(fd);
}

TEST(LogFollow, RecordReaderFollowsDecodedStatsRecords) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.error();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  RecordReader reader(FileSource(fd));
  for (int i = 0; i < 50; ++i) {
    Sample sample;
    sample.timestamp = 1735689600.25 + i;
    sample.metrics.Add("cpu", i * 1.5);
    wandb::Record record;
    ASSERT_TRUE(FillStatsRecord(sample, record));
    record.set_num(i + 1);
    ASSERT_TRUE(writer->Append(record.SerializeAsString()).ok());
    ASSERT_EQ(reader.Next(), ReadOutcome::kRecord);
    EXPECT_EQ(reader.record().num(), i + 1);
    EXPECT_EQ(reader.index(), static_cast<uint64_t>(i));
    EXPECT_EQ(reader.record().stats().item(0).value_json(), FormatValueJson(i * 1.5));
    EXPECT_EQ(reader.Next(), ReadOutcome::kEnd);
  }
  ::close(fd);
}

// LogWriter cuts a partly written record off again when a write fails (disk full, file size limit) and
// the next record is then written at the same offset. A reader that had already read the torn record's
// FIRST chunk and said kIncomplete must not join that stale FIRST with the new record's LAST: position()
// says the next read starts at the torn record, so the reader has to read it again from there. Here the
// torn record (40000 x 'A') and its replacement (33000 x 'B') start at the same offset, so their FIRST
// chunks are the same size and the replacement's LAST chunk has a valid CRC where the reader resumes.
TEST(LogFollow, ResumingAfterTheWriterCutATornRecordBackNeverSplicesTwoRecords) {
  TempDir dir;
  const fs::path path = dir.path() / "run.wandb";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  std::string log(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  const uint64_t start = AppendFramedRecord(kFileHeaderSize, "first record", log);
  ASSERT_TRUE(WriteAll(fd, log));

  const std::string torn(40000, 'A');
  std::string torn_framed;
  AppendFramedRecord(start, torn, torn_framed);
  const uint64_t torn_bytes = kBlockSize - start + 3;  // all of FIRST, 3 bytes of LAST's header
  ASSERT_TRUE(WriteAll(fd, std::string_view(torn_framed).substr(0, static_cast<size_t>(torn_bytes))));

  Follower follower(path);
  EXPECT_EQ(follower.Drain({"first record"}), ReadOutcome::kIncomplete);
  EXPECT_EQ(follower.reader().position(), start);

  // What LogWriter does when the write fails: cut back to the last whole record; then the next record.
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(start)), 0);
  const std::string replacement(33000, 'B');
  std::string replacement_framed;
  AppendFramedRecord(start, replacement, replacement_framed);
  ASSERT_EQ(::pwrite(fd, replacement_framed.data(), replacement_framed.size(), static_cast<off_t>(start)),
            static_cast<ssize_t>(replacement_framed.size()));

  LogReader& reader = follower.reader();
  RawRecord raw;
  const ReadOutcome outcome = reader.Next(raw);
  if (outcome == ReadOutcome::kRecord) {
    EXPECT_EQ(raw.offset, start);
    EXPECT_EQ(raw.payload.size(), replacement.size());
    EXPECT_TRUE(raw.payload == replacement)
        << "spliced record: " << std::count(raw.payload.begin(), raw.payload.end(), 'A') << " x 'A' + "
        << std::count(raw.payload.begin(), raw.payload.end(), 'B') << " x 'B'";
  } else {
    // Not returning the replacement at all would be a lesser bug; returning neither is still wrong.
    ADD_FAILURE() << "the replacement record was not returned: " << OutcomeName(outcome);
  }
  ::close(fd);
}

}  // namespace
}  // namespace runmon::runlog
