// The recorder's incremental summary index writer (index_writer.hpp), driven as RunRecorder drives it: a
// batch of records appended to the log with one write, then each noted with the offsets FramedRecordStart
// and FramedRecordEnd give. The reference is a fresh build of the log by ReadSegment (index_builder.hpp),
// read serially so key ids are deterministic. The writer never writes an entry for a segment no record
// starts in (inside a record wider than a segment), where the builder gives one with zero counts; such an
// entry says nothing, so comparisons leave level-0 entries without records out (the nodes above count them
// the same either way). Checked: while the log grows, the index always checks out and holds exactly the
// fresh build of the segments before the open one, keys with the same ids, pyramid nodes included, and the
// open segment never; batch sizes do not change a byte of it; a move carries on where it was; Create
// replaces an index of the same name and fails cleanly without a log or a directory; a recorder that stops
// (the open segment never written, records written to the log but never noted) leaves a stale index, and
// a crash mid-append (the file cut at any byte) a damaged one: both are detected and repaired, as a viewer
// repairs them, to exactly the fresh build.
#include "runlog/index_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "log_fd.hpp"
#include "runlog/index_builder.hpp"
#include "runlog/index_file.hpp"
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

// ~20 system keys; a GPU key from record 250 on and one more only in records 400-409 (keys first seen
// mid-log), a text value now and then (not a number: no value).
wandb::Record StatsRecord(int i) {
  wandb::Record record;
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(static_cast<int64_t>(kStart) + i);
  stats->mutable_timestamp()->set_nanos((i * 37 % 1000) * 1000000);
  for (int k = 0; k < 20; ++k) {
    if (k >= 16 && (i + k) % 3 != 0) continue;
    auto* item = stats->add_item();
    item->set_key(fmt::format("system.metric.{:02}", k));
    item->set_value_json(FormatValueJson(((i * 31 + k * 17) % 1000) * 0.25 - 50));
  }
  if (i >= 250) {
    auto* item = stats->add_item();
    item->set_key("system.gpu.0.temp");
    item->set_value_json(FormatValueJson(40 + i % 13));
  }
  if (i >= 400 && i < 410) {
    auto* item = stats->add_item();
    item->set_key("system.disk.burst");
    item->set_value_json(FormatValueJson(i));
  }
  if (i % 17 == 0) {
    auto* text = stats->add_item();
    text->set_key("system.label");
    text->set_value_json("\"busy\"");
  }
  record.mutable__info()->set_stream_id("abcd1234");
  return record;
}

// Groups of ten stats records, a history record and a 100 KiB console record; a 600 KiB console record
// (wider than a segment) after group 20.
std::vector<std::string> RunPayloads(int first_group, int groups) {
  std::vector<std::string> payloads;
  if (first_group == 0) {
    payloads.push_back(MakeHeaderRecord("runmon test").SerializeAsString());
    RunInfo run;
    run.run_id = "abcd1234";
    run.project = "index";
    run.start_time = kStart;
    payloads.push_back(MakeRunRecord(run).SerializeAsString());
  }
  for (int g = first_group; g < first_group + groups; ++g) {
    for (int j = 0; j < 10; ++j) payloads.push_back(StatsRecord(g * 10 + j).SerializeAsString());
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

// A log and its index writer, written as RunRecorder writes them.
struct Recording {
  explicit Recording(const fs::path& path) : log(path), index_path(IndexPathFor(path)) {
    auto created = LogWriter::Create(log);
    EXPECT_TRUE(created.ok()) << created.error();
    if (created.ok()) writer.emplace(std::move(*created));
    auto index = IndexWriter::Create(index_path, log);
    EXPECT_TRUE(index.ok()) << index.error();
    if (index.ok()) indexer.emplace(std::move(*index));
  }

  // One write of `payloads` to the log, then each noted (unless `note` is false: a crash in between).
  void Write(std::span<const std::string> payloads, bool note = true) {
    ASSERT_TRUE(writer && indexer);
    uint64_t offset = writer->size();
    ASSERT_TRUE(writer->Append(payloads).ok());
    for (const std::string& payload : payloads) {
      const uint64_t start = FramedRecordStart(offset);
      offset = FramedRecordEnd(offset, payload.size());
      if (note) ASSERT_TRUE(indexer->Note(start, offset, payload).ok());
      last_start = start;
    }
    ASSERT_EQ(offset, writer->size());
  }
  // All of `payloads`, in batches of 1, 2, 3, ... `max_batch` records, calling `after` after each.
  template <typename After>
  void WriteInBatches(const std::vector<std::string>& payloads, size_t max_batch, After&& after) {
    size_t batch = 1;
    for (size_t at = 0; at < payloads.size();) {
      const size_t count = std::min(batch, payloads.size() - at);
      Write(std::span(payloads).subspan(at, count));
      at += count;
      after();
      batch = batch % max_batch + 1;
    }
  }
  void WriteInBatches(const std::vector<std::string>& payloads, size_t max_batch = 7) {
    WriteInBatches(payloads, max_batch, [] {});
  }
  uint64_t open_segment() const { return SegmentOf(last_start); }

  fs::path log;
  fs::path index_path;
  std::optional<LogWriter> writer;
  std::optional<IndexWriter> indexer;
  uint64_t last_start = 0;
};

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

// Every field of every entry, with key ids and names; level-0 entries without records left out.
std::string Describe(const SummaryIndex& index) {
  std::string out = "keys:";
  for (const std::string& key : index.keys) out += " " + key;
  for (size_t level = 0; level < index.levels.size(); ++level) {
    out += fmt::format("\nlevel {}", level);
    for (const SegmentSummary& s : index.levels[level]) {
      if (level > 0 || s.records > 0 || s.damaged_bytes > 0) out += "\n  " + Describe(s, index.keys);
    }
  }
  return out;
}

// A viewer's repair: `index` extended by the settled segments past it, read serially from the log, with
// its pyramid rebuilt. From an empty index: a fresh build of the whole log.
SummaryIndex Extend(const fs::path& log, SummaryIndex index) {
  Fd fd(log);
  SharedKeyTable keys(index.keys);
  StatsValueReader stats;
  if (index.levels.empty()) index.levels.emplace_back();
  size_t named = index.keys.size();  // keys of settled segments (an unsettled read may add more)
  for (uint64_t s = index.covered_segments();; ++s) {
    SegmentRead read = ReadSegment(fd.get(), s, SegmentWork::kSummarise, keys, stats);
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
  return Extend(log, {});
}

// What the writer should hold once segment `open` is the open one: the fresh build's segments before it
// that records start in, the keys they name, and the nodes those complete.
SummaryIndex ClosedPart(const SummaryIndex& fresh, uint64_t open) {
  SummaryIndex closed;
  closed.levels.emplace_back();
  uint32_t keys = 0;
  for (const SegmentSummary& s : fresh.segments()) {
    if (s.first_segment >= open) break;
    if (s.records == 0) continue;
    closed.levels[0].push_back(s);
    for (const KeySummary& k : s.keys) keys = std::max(keys, k.key + 1);
  }
  closed.keys.assign(fresh.keys.begin(), fresh.keys.begin() + keys);
  if (closed.levels[0].empty()) closed.levels.clear();
  RebuildPyramid(closed);
  return closed;
}

CheckedIndex Load(const fs::path& index, const fs::path& log) {
  Fd fd(log);
  return LoadCheckedIndex(index, fd.get(), fs::file_size(log));
}

// Loads the index beside `log` and repairs it as IndexedLoad::Finish does; returns what was loaded.
CheckedIndex LoadAndRepair(const fs::path& log) {
  CheckedIndex checked = Load(IndexPathFor(log), log);
  EXPECT_TRUE(WriteIndexFile(IndexPathFor(log), Extend(log, checked.index)).ok());
  return checked;
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

class IndexWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { log_ = dir_.path() / "run-abcd1234.wandb"; }

  TempDir dir_{"runmon-index-writer"};
  fs::path log_;
};

TEST_F(IndexWriterTest, WhileTheLogGrowsTheIndexHoldsExactlyTheClosedSegments) {
  const std::vector<std::string> payloads = RunPayloads(0, kGroups);
  // The reference for every moment: settled segments do not change as the log grows.
  SummaryIndex fresh;
  {
    TempDir other("runmon-index-writer");
    Recording whole(other.path() / "run-abcd1234.wandb");
    whole.WriteInBatches(payloads);
    fresh = FreshIndex(whole.log);
  }
  ASSERT_GE(fresh.covered_segments(), 20u);
  ASSERT_EQ(fresh.levels.size(), 2u);

  Recording recording(log_);
  Fd fd(log_);
  uint64_t checked_open = UINT64_MAX;
  size_t index_size = ReadFileBytes(recording.index_path).size();
  uint64_t file_grew_in = UINT64_MAX;
  recording.WriteInBatches(payloads, 11, [&] {
    const uint64_t open = recording.open_segment();
    const size_t size = ReadFileBytes(recording.index_path).size();
    // The file grows only when a record starts in a new segment (the one before it is closed).
    if (size != index_size) {
      EXPECT_NE(open, file_grew_in) << "the index grew while segment " << open << " was open";
      file_grew_in = open;
      index_size = size;
    }
    if (open == checked_open) return;
    checked_open = open;
    const CheckedIndex checked = LoadCheckedIndex(recording.index_path, fd.get(), recording.writer->size());
    EXPECT_EQ(checked.problem, "") << "open segment " << open;
    EXPECT_LE(checked.index.covered_segments(), open);
    EXPECT_EQ(Describe(checked.index), Describe(ClosedPart(fresh, open))) << "open segment " << open;
  });
  EXPECT_GE(checked_open, 20u);
  // The late keys are in, with the ids a fresh build gives them.
  const CheckedIndex last = LoadCheckedIndex(recording.index_path, fd.get(), recording.writer->size());
  EXPECT_NE(std::find(last.index.keys.begin(), last.index.keys.end(), "system.disk.burst"),
            last.index.keys.end());
  EXPECT_EQ(Describe(last.index), Describe(ClosedPart(fresh, recording.open_segment())));
}

TEST_F(IndexWriterTest, ASegmentNoRecordStartsInHasNoEntryButTheNodesAgree) {
  Recording recording(log_);
  recording.WriteInBatches(RunPayloads(0, kGroups));
  const SummaryIndex fresh = FreshIndex(log_);
  const CheckedIndex checked = Load(recording.index_path, log_);
  ASSERT_EQ(checked.problem, "");
  std::vector<uint64_t> empty;
  for (const SegmentSummary& s : fresh.segments()) {
    if (s.records == 0) empty.push_back(s.first_segment);
  }
  ASSERT_GE(empty.size(), 1u);  // inside the 600 KiB record
  for (const SegmentSummary& s : checked.index.segments()) {
    EXPECT_GT(s.records, 0u) << s.first_segment;
    EXPECT_EQ(std::count(empty.begin(), empty.end(), s.first_segment), 0) << s.first_segment;
  }
  // Every segment a record starts in before the open one, and the node over segments 0-15, as built.
  EXPECT_EQ(checked.index.covered_segments(), recording.open_segment());
  ASSERT_EQ(checked.index.levels.size(), 2u);
  ASSERT_EQ(checked.index.levels[1].size(), 1u);
  EXPECT_EQ(Describe(checked.index.levels[1][0], checked.index.keys),
            Describe(fresh.levels[1][0], fresh.keys));
}

TEST_F(IndexWriterTest, BatchSizesDoNotChangeAByte) {
  Recording one_by_one(log_);
  const std::vector<std::string> payloads = RunPayloads(0, 30);
  one_by_one.WriteInBatches(payloads, 1);
  Recording batched(dir_.path() / "run-batched.wandb");
  batched.WriteInBatches(payloads, 23);
  const std::string expected = ReadFileBytes(one_by_one.index_path);
  EXPECT_GT(expected.size(), kIndexHeaderSize + 1000);
  EXPECT_TRUE(ReadFileBytes(batched.index_path) == expected);
}

// The recorder's path for samples (EncodeStatsRecord, then NoteStats from what the encoder knows) writes
// the very index that reading the same bytes back (Note) writes, and that a fresh build gives: values of
// every shape (past a float's range, -0, tiny, huge integers), values that are not finite (left out of the
// record), an empty key, a key given twice in one sample, keys that come and go, a label, and records
// that are not stats in between.
TEST_F(IndexWriterTest, EncodedSamplesNoteTheSameIndexAsTheirBytes) {
  std::vector<std::string> payloads;
  std::vector<std::optional<EncodedStatsItems>> encoded;
  payloads.push_back(MakeHeaderRecord("runmon test").SerializeAsString());
  encoded.emplace_back();
  for (int i = 0; i < 6000; ++i) {
    Sample sample;
    sample.timestamp = kStart + i + (i % 7) * 0.123456789;
    for (int k = 0; k < 60; ++k) {
      const double value = k == 0   ? 1e300 * (i % 2 == 0 ? 1 : -1)
                           : k == 1 ? (i % 5 == 0 ? std::numeric_limits<double>::quiet_NaN() : -0.0)
                           : k == 2 ? 1e-300
                           : k == 3 ? 123456789012345678.0 + i
                                    : ((i * 31 + k * 17) % 1000) * 0.37 - 50;
      sample.metrics.Add(fmt::format("system.metric.{:02}", k), value);
    }
    if (i % 11 == 0) sample.metrics.Add("", 1);                       // an empty key: left out of the index
    if (i % 13 == 0) sample.metrics.Add("system.metric.05", 9999);    // twice in one record: the later counts
    if (i >= 2500 && i < 2600) sample.metrics.Add("system.late", i);  // a key that comes and goes
    EncodedStatsItems items;
    payloads.push_back(EncodeStatsRecord(sample, i % 2 == 0 ? "" : "node1", &items));
    ASSERT_FALSE(payloads.back().empty());
    ASSERT_FALSE(items.items.empty());
    encoded.emplace_back(std::move(items));
    if (i % 100 == 0) {
      payloads.push_back(MakeOutputRawRecord(false, std::string(3000, 'o'), kStart + i).SerializeAsString());
      encoded.emplace_back();
    }
  }
  const auto write = [&](const fs::path& path, bool from_encoded) {
    Recording recording(path);
    uint64_t offset = recording.writer->size();
    for (size_t i = 0; i < payloads.size(); ++i) {
      ASSERT_TRUE(recording.writer->Append(payloads[i]).ok());
      const uint64_t start = FramedRecordStart(offset);
      offset = FramedRecordEnd(offset, payloads[i].size());
      const Status noted = from_encoded && encoded[i]
                               ? recording.indexer->NoteStats(start, offset, payloads[i], *encoded[i])
                               : recording.indexer->Note(start, offset, payloads[i]);
      ASSERT_TRUE(noted.ok()) << noted.error();
    }
  };
  const fs::path read_back = dir_.path() / "run-read.wandb";
  write(read_back, false);
  write(log_, true);
  const std::string expected = ReadFileBytes(IndexPathFor(read_back));
  EXPECT_GT(expected.size(), kIndexHeaderSize + 10000);
  EXPECT_TRUE(ReadFileBytes(IndexPathFor(log_)) == expected);
  const CheckedIndex checked = Load(IndexPathFor(log_), log_);
  EXPECT_EQ(checked.problem, "");
  const SummaryIndex fresh = FreshIndex(log_);
  EXPECT_EQ(Describe(checked.index), Describe(ClosedPart(fresh, checked.index.covered_segments())));
  EXPECT_GE(checked.index.covered_segments(), 10u);
}

TEST_F(IndexWriterTest, AMovedWriterCarriesOnWhereItWas) {
  const std::vector<std::string> payloads = RunPayloads(0, kGroups);
  Recording recording(log_);
  const size_t third = payloads.size() / 3;
  recording.WriteInBatches({payloads.begin(), payloads.begin() + static_cast<std::ptrdiff_t>(third)});
  IndexWriter moved(std::move(*recording.indexer));
  recording.indexer.emplace(std::move(moved));  // move-constructed twice
  recording.WriteInBatches({payloads.begin() + static_cast<std::ptrdiff_t>(third),
                            payloads.begin() + static_cast<std::ptrdiff_t>(2 * third)});
  {
    TempDir elsewhere("runmon-index-writer");
    const fs::path other_log = elsewhere.path() / "run-other.wandb";
    WriteFileBytes(other_log, ReadFileBytes(log_));
    auto other = IndexWriter::Create(IndexPathFor(other_log), other_log);
    ASSERT_TRUE(other.ok()) << other.error();
    *other = std::move(*recording.indexer);  // the other writer's files are closed, this one's kept
    *recording.indexer = std::move(*other);
  }
  recording.WriteInBatches({payloads.begin() + static_cast<std::ptrdiff_t>(2 * third), payloads.end()});
  EXPECT_FALSE(recording.indexer->failed());
  const CheckedIndex checked = Load(recording.index_path, log_);
  EXPECT_EQ(checked.problem, "");
  EXPECT_EQ(Describe(checked.index), Describe(ClosedPart(FreshIndex(log_), recording.open_segment())));
}

TEST_F(IndexWriterTest, CreateReplacesAnIndexOfTheSameName) {
  // A previous run's index (another log's, much longer) under the name.
  {
    Recording previous(dir_.path() / "run-previous.wandb");
    previous.WriteInBatches(RunPayloads(0, 30));
    fs::copy_file(previous.index_path, IndexPathFor(log_));
  }
  ASSERT_GT(fs::file_size(IndexPathFor(log_)), 1000u);
  Recording recording(log_);
  EXPECT_EQ(ReadFileBytes(recording.index_path), EncodeIndexHeader());
  const CheckedIndex empty = Load(recording.index_path, log_);
  EXPECT_FALSE(empty.missing);
  EXPECT_EQ(empty.problem, "");
  EXPECT_TRUE(empty.index.keys.empty());
  EXPECT_TRUE(empty.index.levels.empty());
  // A log that stays in segment 0 writes no entry.
  recording.WriteInBatches(RunPayloads(0, 1));
  ASSERT_EQ(recording.open_segment(), 0u);
  EXPECT_EQ(ReadFileBytes(recording.index_path), EncodeIndexHeader());
  recording.WriteInBatches(RunPayloads(1, 10));
  EXPECT_EQ(Describe(Load(recording.index_path, log_).index),
            Describe(ClosedPart(FreshIndex(log_), recording.open_segment())));
}

TEST_F(IndexWriterTest, CreateFailsWithoutTheLogOrTheIndexDirectory) {
  const auto no_log = IndexWriter::Create(IndexPathFor(log_), log_);
  EXPECT_FALSE(no_log.ok());
  EXPECT_FALSE(fs::exists(IndexPathFor(log_)));  // nothing created for a log that is not there
  WriteFileBytes(log_, "");
  const auto no_directory = IndexWriter::Create(dir_.path() / "gone" / "run.wandb.idx", log_);
  EXPECT_FALSE(no_directory.ok());
  if (!no_directory.ok()) EXPECT_FALSE(no_directory.error().empty());
}

TEST_F(IndexWriterTest, ARecorderThatStoppedLeavesAStaleIndexThatIsRepaired) {
  {
    Recording recording(log_);
    recording.WriteInBatches(RunPayloads(0, 40));
    // Written to the log, never noted: the process died between the two.
    const std::vector<std::string> unnoted = RunPayloads(40, 8);
    recording.Write(unnoted, false);
  }  // and the open segment's entry is never written
  const SummaryIndex fresh = FreshIndex(log_);
  const CheckedIndex stale = LoadAndRepair(log_);
  EXPECT_FALSE(stale.missing);
  EXPECT_EQ(stale.problem, "");  // nothing is wrong with it: it covers less than the log holds
  EXPECT_LT(stale.index.covered_segments() + 2, fresh.covered_segments());
  const CheckedIndex repaired = Load(IndexPathFor(log_), log_);
  EXPECT_EQ(repaired.problem, "");
  EXPECT_EQ(Describe(repaired.index), Describe(fresh));
  // Repairing again changes nothing.
  LoadAndRepair(log_);
  EXPECT_EQ(Describe(Load(IndexPathFor(log_), log_).index), Describe(fresh));
}

TEST_F(IndexWriterTest, AnIndexCutAtAnyByteIsDetectedAndRepairedToAFreshBuild) {
  Recording recording(log_);
  recording.WriteInBatches(RunPayloads(0, kGroups));
  recording.indexer.reset();
  const std::string bytes = ReadFileBytes(recording.index_path);
  const std::vector<EntrySpan> entries = Entries(bytes);
  const SummaryIndex fresh = FreshIndex(log_);
  const SummaryIndex written = ClosedPart(fresh, recording.open_segment());
  std::vector<uint64_t> ends;
  std::vector<uint64_t> summary_ends;  // of the level-0 entries
  for (const EntrySpan& entry : entries) {
    ends.push_back(entry.end);
    if (entry.level == 0) summary_ends.push_back(entry.end);
  }
  ASSERT_EQ(summary_ends.size(), written.segments().size());
  // Detection, at every length: a cut between entries reads as a shorter index, any other as damage; the
  // level-0 entries kept are those wholly present.
  Fd fd(log_);
  const uint64_t log_size = fs::file_size(log_);
  const fs::path cut = dir_.path() / "cut.wandb.idx";
  for (uint64_t length = 0; length <= bytes.size(); ++length) {
    WriteFileBytes(cut, std::string_view(bytes).substr(0, length));
    const CheckedIndex checked = LoadCheckedIndex(cut, fd.get(), log_size);
    const bool at_boundary =
        length == kIndexHeaderSize || std::binary_search(ends.begin(), ends.end(), length);
    ASSERT_EQ(checked.problem.empty(), at_boundary) << length << ": " << checked.problem;
    const auto kept = static_cast<size_t>(std::upper_bound(summary_ends.begin(), summary_ends.end(), length) -
                                          summary_ends.begin());
    ASSERT_EQ(checked.index.segments().size(), kept) << length;
  }
  // Repair, at cuts across the file: inside the header, the first key, the first summary, a key first seen
  // after segment 0 (its entry follows a summary), the node, the last entry, and between entries.
  const auto after_summary =
      std::adjacent_find(entries.begin(), entries.end(),
                         [](const EntrySpan& a, const EntrySpan& b) { return a.level >= 0 && b.level < 0; });
  ASSERT_NE(after_summary, entries.end());
  const auto late_key = after_summary + 1;
  const auto node =
      std::find_if(entries.begin(), entries.end(), [](const EntrySpan& e) { return e.level == 1; });
  ASSERT_NE(node, entries.end());
  for (const uint64_t length :
       {uint64_t{0}, uint64_t{5}, uint64_t{kIndexHeaderSize}, uint64_t{kIndexHeaderSize + 3},
        summary_ends[0] - 7, summary_ends[0], late_key->begin + 12, late_key->end, summary_ends[12] - 1,
        node->end - 2, node->end, uint64_t{bytes.size() - 1}, uint64_t{bytes.size()}}) {
    WriteFileBytes(recording.index_path, std::string_view(bytes).substr(0, length));
    const CheckedIndex damaged = LoadAndRepair(log_);
    EXPECT_FALSE(damaged.missing) << length;
    const CheckedIndex repaired = Load(recording.index_path, log_);
    EXPECT_EQ(repaired.problem, "") << length;
    EXPECT_EQ(Describe(repaired.index), Describe(fresh)) << length;
  }
}

TEST_F(IndexWriterTest, AViewerRepairingWhileTheLogGrowsAlwaysGetsAFreshBuild) {
  Recording recording(log_);
  for (int group = 0; group < kGroups; group += 14) {
    recording.WriteInBatches(RunPayloads(group, 14), 5);
    // A viewer opens the run now: the recorder's index checks out, covers the closed segments, and
    // extends (in memory: the recorder holds the log, so the viewer does not write) to a fresh build.
    const CheckedIndex checked = Load(recording.index_path, log_);
    EXPECT_EQ(checked.problem, "") << group;
    EXPECT_LE(checked.index.covered_segments(), recording.open_segment()) << group;
    EXPECT_GT(checked.index.covered_segments() + 3, recording.open_segment()) << group;
    const SummaryIndex fresh = FreshIndex(log_);
    EXPECT_EQ(Describe(Extend(log_, checked.index)), Describe(fresh)) << group;
    EXPECT_EQ(Describe(checked.index), Describe(ClosedPart(fresh, recording.open_segment()))) << group;
  }
}

}  // namespace
}  // namespace runmon::runlog
