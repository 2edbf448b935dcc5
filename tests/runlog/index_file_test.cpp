// Reading, checking and writing a summary index file against its log (index_file.hpp). The index is derived
// data: a viewer trusts what LoadCheckedIndex hands back and rebuilds the rest from the log, so every way a
// file can be wrong must end in exactly the part that is still right, never in entries that describe bytes
// the log no longer holds. The reference is a fresh build of the log by ReadSegment (index_builder.hpp), read
// serially so key ids are deterministic. Checked: a written index reads back identical; BoundaryCrc covers
// the bytes it says; IndexAppender writes what it is given after a header; a missing file, a directory, an
// empty file, a header alone; a truncation at every byte length (the entries wholly present survive, and only
// a cut at an entry boundary goes unreported); a flipped byte in an entry (the entries before it survive);
// another magic, version, segment size or fan-out; hostile length fields and an oversized file; a log that
// has grown since (the index is kept and extends to a fresh build); a log cut short (the segments it still
// holds survive, and none whose last record the cut tore); a log rewritten beneath the index, or another
// run's log under the same name, or an index whose recorded boundary checksums differ (nothing survives).
#include "runlog/index_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "log_fd.hpp"
#include "runlog/index_builder.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

constexpr double kStart = 1735689600;
constexpr int kGroups = 56;  // ~6.5 MB of log: ~25 segments, one level-1 node

using testing::Fd;

wandb::Record StatsRecord(int i, const std::string& run_id) {
  wandb::Record record;
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(static_cast<int64_t>(kStart) + i);
  for (int k = 0; k < 20; ++k) {
    if (k >= 16 && (i + k) % 3 != 0) continue;
    auto* item = stats->add_item();
    item->set_key(fmt::format("system.metric.{:02}", k));
    item->set_value_json(FormatValueJson(((i * 31 + k * 17) % 1000) * 0.25 - 50));
  }
  if (i % 17 == 0) {
    auto* text = stats->add_item();
    text->set_key("system.label");
    text->set_value_json("\"busy\"");
  }
  record.mutable__info()->set_stream_id(run_id);
  return record;
}

// Groups of ten stats records, a history record and a 100 KiB console record; a 600 KiB console record
// (wider than a segment) after group 20.
std::vector<std::string> RunPayloads(const std::string& run_id, int first_group, int groups) {
  std::vector<std::string> payloads;
  if (first_group == 0) {
    payloads.push_back(MakeHeaderRecord("runmon test").SerializeAsString());
    RunInfo run;
    run.run_id = run_id;
    run.project = "index";
    run.start_time = kStart;
    payloads.push_back(MakeRunRecord(run).SerializeAsString());
  }
  for (int g = first_group; g < first_group + groups; ++g) {
    for (int j = 0; j < 10; ++j) payloads.push_back(StatsRecord(g * 10 + j, run_id).SerializeAsString());
    payloads.push_back(
        MakeHistoryRecord(g, g, kStart + g, {{"loss", FormatValueJson(1.0 / (g + 1))}}).SerializeAsString());
    payloads.push_back(
        MakeOutputRawRecord(false, std::string(100 << 10, static_cast<char>('a' + g % 26)), kStart + g)
            .SerializeAsString());
    if (g == 20)
      payloads.push_back(
          MakeOutputRawRecord(true, std::string(600 << 10, 'h'), kStart + g).SerializeAsString());
  }
  return payloads;
}

void Append(LogWriter& writer, const std::vector<std::string>& payloads) {
  for (size_t at = 0; at < payloads.size(); at += 7) {
    const size_t count = std::min<size_t>(7, payloads.size() - at);
    ASSERT_TRUE(writer.Append(std::span(payloads).subspan(at, count)).ok());
  }
}

void WriteLog(const fs::path& path, const std::vector<std::string>& payloads) {
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.error();
  Append(*writer, payloads);
}

std::string Describe(const SegmentSummary& s, const std::vector<std::string>& names) {
  std::string out =
      fmt::format("L{} seg {} records {} stats {} other {} damaged {} end {} crc {:08x} time [{}, {}]",
                  s.level, s.first_segment, s.records, s.stats_records, s.other_records, s.damaged_bytes,
                  s.end_offset, s.boundary_crc, s.first_time, s.last_time);
  for (const KeySummary& k : s.keys) {
    out += fmt::format(" | {}={}: n={} min={} max={} last={} {}", k.key,
                       k.key < names.size() ? names[k.key] : "?", k.count, k.min, k.max, k.last,
                       k.min_first ? "min-first" : "max-first");
  }
  return out;
}

// Every field of every entry, with key ids and names.
std::string Describe(const SummaryIndex& index) {
  std::string out = "keys:";
  for (const std::string& key : index.keys) out += " " + key;
  for (size_t level = 0; level < index.levels.size(); ++level) {
    out += fmt::format("\nlevel {} ({} entries)", level, index.levels[level].size());
    for (const SegmentSummary& s : index.levels[level]) out += "\n  " + Describe(s, index.keys);
  }
  return out;
}

// `index` extended by the settled segments past it, read serially from the open log (what a viewer does),
// with its pyramid rebuilt. From an empty index: a fresh build of the whole log.
SummaryIndex Extend(int fd, SummaryIndex index) {
  SharedKeyTable keys(index.keys);
  StatsValueReader stats;
  if (index.levels.empty()) index.levels.emplace_back();
  size_t named = index.keys.size();  // keys of settled segments (an unsettled read may add more)
  for (uint64_t s = index.covered_segments();; ++s) {
    SegmentRead read = ReadSegment(fd, s, SegmentWork::kSummarise, keys, stats);
    EXPECT_FALSE(read.failed) << read.error;
    if (!read.settled) break;
    index.levels[0].push_back(std::move(read.summary));
    named = keys.names().size();
  }
  index.keys = keys.names();
  index.keys.resize(named);
  if (index.levels[0].empty()) index.levels.clear();
  RebuildPyramid(index);
  return index;
}

SummaryIndex FreshIndex(const fs::path& log) {
  Fd fd(log);
  return Extend(fd.get(), {});
}

CheckedIndex Load(const fs::path& index, const fs::path& log) {
  Fd fd(log);
  return LoadCheckedIndex(index, fd.get(), fs::file_size(log));
}

// Where each entry of an index file lies (walked here from the format, not by ParseIndex).
struct EntrySpan {
  uint64_t begin = 0;
  uint64_t end = 0;
  int level = -1;  // -1: a key entry
};

std::vector<EntrySpan> Entries(std::string_view file) {
  std::vector<EntrySpan> entries;
  uint64_t at = kIndexHeaderSize;
  while (at + 9 <= file.size()) {
    uint32_t length = 0;
    for (int i = 3; i >= 0; --i) length = length << 8 | static_cast<unsigned char>(file[at + i]);
    EntrySpan entry{at, at + 9 + length, -1};
    if (file[at + 8] == 2) entry.level = static_cast<unsigned char>(file[at + 9]);
    entries.push_back(entry);
    at = entry.end;
  }
  EXPECT_EQ(at, file.size());
  return entries;
}

// What `full` holds of its first `count` entries (as laid out in `entries`).
SummaryIndex Prefix(const SummaryIndex& full, const std::vector<EntrySpan>& entries, size_t count) {
  SummaryIndex prefix;
  std::vector<size_t> per_level;
  size_t keys = 0;
  for (size_t i = 0; i < count; ++i) {
    if (entries[i].level < 0) {
      ++keys;
      continue;
    }
    const auto level = static_cast<size_t>(entries[i].level);
    if (per_level.size() <= level) per_level.resize(level + 1, 0);
    ++per_level[level];
  }
  prefix.keys.assign(full.keys.begin(), full.keys.begin() + static_cast<std::ptrdiff_t>(keys));
  for (size_t level = 0; level < per_level.size() && per_level[level] > 0; ++level) {
    const auto& nodes = full.levels[level];
    prefix.levels.emplace_back(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(per_level[level]));
  }
  return prefix;
}

class IndexFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = dir_.path() / "run-abcd1234.wandb";
    index_path_ = IndexPathFor(log_);
    WriteLog(log_, RunPayloads("abcd1234", 0, kGroups));
    log_bytes_ = ReadFileBytes(log_);
    fresh_ = FreshIndex(log_);
    ASSERT_TRUE(WriteIndexFile(index_path_, fresh_).ok());
    index_bytes_ = ReadFileBytes(index_path_);
    entries_ = Entries(index_bytes_);
  }

  // A record that starts in segment `s`, the `nth` of those (0: the first).
  uint64_t RecordStartIn(uint64_t s, size_t nth) const {
    const testing::ReadResult read = testing::ReadAll(log_bytes_);
    for (const auto& record : read.records) {
      if (SegmentOf(record.offset) == s && nth-- == 0) return record.offset;
    }
    ADD_FAILURE() << "no such record in segment " << s;
    return 0;
  }

  TempDir dir_{"runmon-index-file"};
  fs::path log_;
  fs::path index_path_;
  std::string log_bytes_;
  SummaryIndex fresh_;
  std::string index_bytes_;
  std::vector<EntrySpan> entries_;
};

TEST_F(IndexFileTest, AWrittenIndexReadsBackIdentical) {
  EXPECT_EQ(index_path_.filename(), "run-abcd1234.wandb.idx");
  EXPECT_EQ(index_path_.parent_path(), log_.parent_path());
  // The shape the other tests rely on: many segments, a level-1 node, a segment inside one record.
  ASSERT_GE(fresh_.segments().size(), 20u);
  ASSERT_EQ(fresh_.levels.size(), 2u);
  ASSERT_EQ(fresh_.levels[1].size(), 1u);
  EXPECT_TRUE(std::any_of(fresh_.segments().begin(), fresh_.segments().end(),
                          [](const SegmentSummary& s) { return s.records == 0; }));
  EXPECT_EQ(index_bytes_, EncodeIndex(fresh_));

  const CheckedIndex checked = Load(index_path_, log_);
  EXPECT_FALSE(checked.missing);
  EXPECT_EQ(checked.problem, "");
  EXPECT_EQ(Describe(checked.index), Describe(fresh_));

  // Written again over the old file (with less in it): replaced whole, nothing left beside it.
  SummaryIndex smaller = fresh_;
  smaller.levels.resize(1);
  smaller.levels[0].resize(3);
  ASSERT_TRUE(WriteIndexFile(index_path_, smaller).ok());
  EXPECT_EQ(ReadFileBytes(index_path_), EncodeIndex(smaller));
  EXPECT_EQ(Describe(Load(index_path_, log_).index), Describe(smaller));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_.path())) ++files;
  EXPECT_EQ(files, 2u);  // the log and its index
}

TEST_F(IndexFileTest, AnAppenderWritesTheHeaderThenTheEntriesAsGiven) {
  // Created over an existing index: replaced by a header alone.
  auto appender = IndexAppender::Create(index_path_);
  ASSERT_TRUE(appender.ok()) << appender.error();
  EXPECT_EQ(ReadFileBytes(index_path_), EncodeIndexHeader());
  // The entries in three appends cut at arbitrary bytes (a reader between them sees a torn entry).
  const std::string entries = index_bytes_.substr(kIndexHeaderSize);
  const size_t cuts[] = {0, 1234, entries.size() / 2 + 77, entries.size()};
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    ASSERT_TRUE(appender->Append(std::string_view(entries).substr(cuts[i], cuts[i + 1] - cuts[i])).ok());
    if (i == 0) EXPECT_FALSE(Load(index_path_, log_).problem.empty());
    if (i == 0) {
      IndexAppender moved(std::move(*appender));  // a moved appender goes on; the husk refuses
      EXPECT_FALSE(appender->Append("x").ok());
      *appender = std::move(moved);
    }
  }
  EXPECT_FALSE(appender->failed());
  EXPECT_EQ(ReadFileBytes(index_path_), index_bytes_);
  const CheckedIndex checked = Load(index_path_, log_);
  EXPECT_EQ(checked.problem, "");
  EXPECT_EQ(Describe(checked.index), Describe(fresh_));
  // Nowhere to write: an error, not an appender.
  EXPECT_FALSE(IndexAppender::Create(dir_.path() / "gone" / "run.wandb.idx").ok());
  if (fs::exists("/dev/full")) EXPECT_FALSE(IndexAppender::Create("/dev/full").ok());
}

TEST_F(IndexFileTest, BoundaryCrcCoversTheLogsHeadAndEachSegmentsLastBytes) {
  Fd fd(log_);
  const std::string_view bytes = log_bytes_;
  const auto head = BoundaryCrc(fd.get(), 0);
  ASSERT_TRUE(head.ok()) << head.error();
  EXPECT_EQ(*head, testing::ReferenceCrc32(bytes.substr(0, kBoundaryCheckBytes)));
  const uint64_t last_whole = SegmentOf(bytes.size()) - 1;
  for (const uint64_t s : {uint64_t{1}, uint64_t{7}, last_whole}) {
    const auto crc = BoundaryCrc(fd.get(), s);
    ASSERT_TRUE(crc.ok()) << s << ": " << crc.error();
    EXPECT_EQ(*crc, testing::ReferenceCrc32(
                        bytes.substr(SegmentEnd(s) - kBoundaryCheckBytes, kBoundaryCheckBytes)));
  }
  // The segment the log ends in, and one far past it, have no boundary yet.
  EXPECT_FALSE(BoundaryCrc(fd.get(), last_whole + 1).ok());
  EXPECT_FALSE(BoundaryCrc(fd.get(), 1000).ok());
  // Nor has segment 0 of a log shorter than the check.
  const fs::path tiny = dir_.path() / "tiny.wandb";
  WriteFileBytes(tiny, bytes.substr(0, kBoundaryCheckBytes - 1));
  Fd tiny_fd(tiny);
  EXPECT_FALSE(BoundaryCrc(tiny_fd.get(), 0).ok());
}

TEST_F(IndexFileTest, AMissingIndexOrADirectoryInItsPlaceHoldsNothing) {
  fs::remove(index_path_);
  const CheckedIndex missing = Load(index_path_, log_);
  EXPECT_TRUE(missing.missing);
  EXPECT_FALSE(missing.problem.empty());
  EXPECT_TRUE(missing.index.keys.empty());
  EXPECT_TRUE(missing.index.levels.empty());

  fs::create_directory(index_path_);
  const CheckedIndex directory = Load(index_path_, log_);
  EXPECT_FALSE(directory.missing);
  EXPECT_FALSE(directory.problem.empty());
  EXPECT_TRUE(directory.index.keys.empty());
  EXPECT_TRUE(directory.index.levels.empty());
}

TEST_F(IndexFileTest, AnEmptyFileIsDamageButAHeaderAloneIsAnEmptyIndex) {
  WriteFileBytes(index_path_, "");
  const CheckedIndex empty = Load(index_path_, log_);
  EXPECT_FALSE(empty.missing);
  EXPECT_FALSE(empty.problem.empty());
  EXPECT_TRUE(empty.index.keys.empty());
  EXPECT_TRUE(empty.index.levels.empty());

  WriteFileBytes(index_path_, EncodeIndexHeader());
  const CheckedIndex header = Load(index_path_, log_);
  EXPECT_FALSE(header.missing);
  EXPECT_EQ(header.problem, "");
  EXPECT_TRUE(header.index.keys.empty());
  EXPECT_TRUE(header.index.levels.empty());
}

TEST_F(IndexFileTest, ATruncatedIndexKeepsExactlyTheEntriesWhollyPresent) {
  ASSERT_GE(entries_.size(), 40u);
  const fs::path cut = dir_.path() / "cut.wandb.idx";
  Fd fd(log_);
  const uint64_t log_size = log_bytes_.size();
  size_t whole = 0;  // entries wholly inside the cut
  for (uint64_t length = 0; length <= index_bytes_.size(); ++length) {
    while (whole < entries_.size() && entries_[whole].end <= length) ++whole;
    WriteFileBytes(cut, std::string_view(index_bytes_).substr(0, length));
    const CheckedIndex checked = LoadCheckedIndex(cut, fd.get(), log_size);
    const bool at_boundary = length == kIndexHeaderSize || (whole > 0 && entries_[whole - 1].end == length);
    // Only a cut between entries looks like a shorter index; any other is reported.
    EXPECT_EQ(checked.problem.empty(), at_boundary) << length << ": " << checked.problem;
    const SummaryIndex expected =
        length < kIndexHeaderSize ? SummaryIndex{} : Prefix(fresh_, entries_, whole);
    ASSERT_EQ(checked.index.keys.size(), expected.keys.size()) << length;
    ASSERT_EQ(checked.index.levels.size(), expected.levels.size()) << length;
    for (size_t level = 0; level < expected.levels.size(); ++level)
      ASSERT_EQ(checked.index.levels[level].size(), expected.levels[level].size())
          << length << " level " << level;
    // Every field, at each entry's edges (the counts above already pin which entries are kept).
    const bool near_edge = at_boundary || (whole < entries_.size() && (length == entries_[whole].begin + 1 ||
                                                                       length + 1 == entries_[whole].end));
    if (near_edge) EXPECT_EQ(Describe(checked.index), Describe(expected)) << length;
  }
}

TEST_F(IndexFileTest, AFlippedByteEndsTheValidPartAtItsEntry) {
  const fs::path damaged_path = dir_.path() / "damaged.wandb.idx";
  const size_t first_summary = static_cast<size_t>(
      std::find_if(entries_.begin(), entries_.end(), [](const EntrySpan& e) { return e.level == 0; }) -
      entries_.begin());
  const size_t node = static_cast<size_t>(
      std::find_if(entries_.begin(), entries_.end(), [](const EntrySpan& e) { return e.level == 1; }) -
      entries_.begin());
  ASSERT_LT(node, entries_.size());
  Fd fd(log_);
  for (const size_t entry :
       {size_t{0}, first_summary - 1, first_summary, first_summary + 9, node, entries_.size() - 1}) {
    const EntrySpan& span = entries_[entry];
    // The length, the checksum, the type byte, the first, a middle and the last payload byte.
    for (const uint64_t at : {span.begin, span.begin + 5, span.begin + 8, span.begin + 9,
                              (span.begin + span.end) / 2, span.end - 1}) {
      std::string damaged = index_bytes_;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x04);
      WriteFileBytes(damaged_path, damaged);
      const CheckedIndex checked = LoadCheckedIndex(damaged_path, fd.get(), log_bytes_.size());
      EXPECT_FALSE(checked.missing);
      EXPECT_FALSE(checked.problem.empty()) << "entry " << entry << " byte " << at;
      EXPECT_EQ(Describe(checked.index), Describe(Prefix(fresh_, entries_, entry)))
          << "entry " << entry << " byte " << at;
    }
  }
}

TEST_F(IndexFileTest, AnotherMagicVersionSegmentSizeOrFanOutIsNotRead) {
  // Byte 0-3: magic; 4: version; 5: log2 of the segment size; 6: log2 of the fan-out; 7: zero.
  for (const auto& [at, value] :
       std::vector<std::pair<size_t, char>>{{0, 'X'}, {3, 'Y'}, {4, 2}, {4, 0}, {5, 17}, {6, 3}, {7, 1}}) {
    std::string other = index_bytes_;
    other[at] = value;
    WriteFileBytes(index_path_, other);
    const CheckedIndex checked = Load(index_path_, log_);
    EXPECT_FALSE(checked.missing);
    EXPECT_FALSE(checked.problem.empty()) << at;
    EXPECT_TRUE(checked.index.keys.empty()) << at;
    EXPECT_TRUE(checked.index.levels.empty()) << at;
  }
  // The log itself where the index should be.
  WriteFileBytes(index_path_, std::string_view(log_bytes_).substr(0, 100000));
  const CheckedIndex log_as_index = Load(index_path_, log_);
  EXPECT_FALSE(log_as_index.problem.empty());
  EXPECT_TRUE(log_as_index.index.keys.empty());
  EXPECT_TRUE(log_as_index.index.levels.empty());
}

void PutU32At(uint32_t value, std::string& bytes, size_t at) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}

TEST_F(IndexFileTest, AHostileLengthFieldIsNotTrusted) {
  const size_t first_summary = static_cast<size_t>(
      std::find_if(entries_.begin(), entries_.end(), [](const EntrySpan& e) { return e.level == 0; }) -
      entries_.begin());
  const SummaryIndex keys_only = Prefix(fresh_, entries_, first_summary);
  ASSERT_EQ(keys_only.keys.size(), fresh_.keys.size());
  // Lengths past the file's end, up to the largest a u32 holds.
  for (const uint32_t length : {uint32_t{0xFFFFFFFF}, uint32_t{0x80000000}, kMaxIndexEntryBytes + 1,
                                static_cast<uint32_t>(index_bytes_.size())}) {
    std::string hostile = index_bytes_;
    PutU32At(length, hostile, entries_[first_summary].begin);
    WriteFileBytes(index_path_, hostile);
    const CheckedIndex checked = Load(index_path_, log_);
    EXPECT_FALSE(checked.problem.empty()) << length;
    EXPECT_EQ(Describe(checked.index), Describe(keys_only)) << length;
  }
  // A length past kMaxIndexEntryBytes with that many bytes present and a checksum that matches.
  std::string oversized = index_bytes_.substr(0, entries_[first_summary].begin);
  const std::string name(kMaxIndexEntryBytes + 1, 'k');
  AppendKeyEntry(name, oversized);
  WriteFileBytes(index_path_, oversized);
  const CheckedIndex too_long = Load(index_path_, log_);
  EXPECT_FALSE(too_long.problem.empty());
  EXPECT_EQ(Describe(too_long.index), Describe(keys_only));
  // A file past kMaxIndexFileBytes (sparse) is not read at all.
  ASSERT_TRUE(WriteIndexFile(index_path_, fresh_).ok());
  fs::resize_file(index_path_, kMaxIndexFileBytes + 1);
  const CheckedIndex huge = Load(index_path_, log_);
  EXPECT_FALSE(huge.missing);
  EXPECT_FALSE(huge.problem.empty());
  EXPECT_TRUE(huge.index.keys.empty());
  EXPECT_TRUE(huge.index.levels.empty());
}

TEST(IndexFileGrowing, AnIndexOfALogThatHasGrownIsKeptAndExtendsToAFreshBuild) {
  TempDir dir("runmon-index-file");
  const fs::path log = dir.path() / "run-grow.wandb";
  auto writer = LogWriter::Create(log);
  ASSERT_TRUE(writer.ok()) << writer.error();
  Append(*writer, RunPayloads("grow", 0, 24));
  const SummaryIndex before = FreshIndex(log);
  ASSERT_TRUE(WriteIndexFile(IndexPathFor(log), before).ok());
  Append(*writer, RunPayloads("grow", 24, kGroups - 24));
  const SummaryIndex after = FreshIndex(log);
  ASSERT_GT(after.covered_segments(), before.covered_segments() + 10);

  Fd fd(log);
  const CheckedIndex checked = LoadCheckedIndex(IndexPathFor(log), fd.get(), writer->size());
  // Nothing is wrong with it: it covers less of the log, and the rest is built from the log.
  EXPECT_EQ(checked.problem, "");
  EXPECT_EQ(Describe(checked.index), Describe(before));
  EXPECT_EQ(checked.index.covered_segments(), before.covered_segments());
  EXPECT_EQ(Describe(Extend(fd.get(), checked.index)), Describe(after));
}

TEST_F(IndexFileTest, ALogCutShortKeepsTheSegmentsItStillHolds) {
  const fs::path cut_log = dir_.path() / "run-cut.wandb";
  // Cuts inside the second record of segment j: segments before j are whole in the cut log (a whole record
  // starts past them), j and after are gone. Segment 16 completes the level-1 node [0, 16) only once
  // segment 16 itself is kept.
  for (const uint64_t j :
       {uint64_t{1}, uint64_t{3}, uint64_t{16}, uint64_t{17}, fresh_.covered_segments() - 1}) {
    const uint64_t length = RecordStartIn(j, 1) + 3;
    WriteFileBytes(cut_log, std::string_view(log_bytes_).substr(0, length));
    const CheckedIndex checked = Load(index_path_, cut_log);
    EXPECT_FALSE(checked.problem.empty()) << j;
    EXPECT_EQ(checked.index.covered_segments(), j);
    EXPECT_EQ(checked.index.levels.size(), j >= 17 ? 2u : 1u) << j;
    // What a fresh build of the cut log gives, and so what the viewer extends it to.
    const SummaryIndex fresh_cut = FreshIndex(cut_log);
    EXPECT_EQ(Describe(checked.index), Describe(fresh_cut)) << j;
    Fd fd(cut_log);
    EXPECT_EQ(Describe(Extend(fd.get(), checked.index)), Describe(fresh_cut)) << j;
  }
}

// A cut past a segment's end but inside the last record that starts in it: the segment lies inside the
// log, but its summary counts a record the log no longer holds whole (its end_offset is past the log's
// end). A fresh build does not settle that segment; the checked index must not keep it either.
TEST_F(IndexFileTest, ASegmentWhoseLastRecordTheCutToreIsNotKept) {
  const auto straddling =
      std::find_if(fresh_.segments().begin(), fresh_.segments().end(), [](const SegmentSummary& s) {
        return s.first_segment >= 2 && s.records >= 2 && s.end_offset > SegmentEnd(s.first_segment) + 100 &&
               s.end_offset < SegmentEnd(s.first_segment) + kSegmentBytes;
      });
  ASSERT_NE(straddling, fresh_.segments().end());
  const uint64_t s = straddling->first_segment;
  const fs::path cut_log = dir_.path() / "run-cut.wandb";
  WriteFileBytes(cut_log, std::string_view(log_bytes_).substr(0, SegmentEnd(s) + 50));
  const SummaryIndex fresh_cut = FreshIndex(cut_log);
  ASSERT_EQ(fresh_cut.covered_segments(), s);
  const CheckedIndex checked = Load(index_path_, cut_log);
  EXPECT_FALSE(checked.problem.empty());
  EXPECT_EQ(checked.index.covered_segments(), s);
  for (const SegmentSummary& kept : checked.index.segments()) {
    EXPECT_LE(kept.end_offset, SegmentEnd(s) + 50)
        << "segment " << kept.first_segment << " is kept, yet its last record ends past the log's end";
  }
}

TEST_F(IndexFileTest, ALogRewrittenBeneathTheIndexLosesEveryEntry) {
  const uint64_t last = fresh_.segments().back().first_segment;
  // A byte of the run record (the log's head), and one in the last indexed segment's boundary bytes.
  for (const uint64_t at : {uint64_t{200}, SegmentEnd(last) - 1, SegmentEnd(last) - kBoundaryCheckBytes}) {
    std::string rewritten = log_bytes_;
    rewritten[at] = static_cast<char>(rewritten[at] ^ 0x01);
    const fs::path log = dir_.path() / "run-rewritten.wandb";
    WriteFileBytes(log, rewritten);
    const CheckedIndex checked = Load(index_path_, log);
    EXPECT_FALSE(checked.missing);
    EXPECT_FALSE(checked.problem.empty()) << at;
    EXPECT_TRUE(checked.index.levels.empty()) << at;
    EXPECT_EQ(checked.index.covered_segments(), 0u) << at;
  }
}

TEST_F(IndexFileTest, AnIndexOfAnotherLogUnderTheSameNameIsNotUsed) {
  // Another run's log, longer than this one (every segment lies inside it) and shorter.
  for (const int groups : {kGroups + 6, kGroups / 2}) {
    const fs::path other = dir_.path() / fmt::format("run-other-{}.wandb", groups);
    WriteLog(other, RunPayloads("efgh5678", 0, groups));
    const CheckedIndex checked = Load(index_path_, other);
    EXPECT_FALSE(checked.problem.empty()) << groups;
    EXPECT_TRUE(checked.index.levels.empty()) << groups;
  }
  // The index's own record of the log's head, or of its last segment's end, differs from the log.
  for (const bool head : {true, false}) {
    SummaryIndex tampered = fresh_;
    SegmentSummary& segment = head ? tampered.levels[0].front() : tampered.levels[0].back();
    segment.boundary_crc ^= 0x100;
    ASSERT_TRUE(WriteIndexFile(index_path_, tampered).ok());
    const CheckedIndex checked = Load(index_path_, log_);
    EXPECT_FALSE(checked.problem.empty()) << head;
    EXPECT_TRUE(checked.index.levels.empty()) << head;
  }
}

}  // namespace
}  // namespace runmon::runlog
