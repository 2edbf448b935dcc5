// Building summary index segments from a log (index_builder.hpp), against a reference: the whole log read
// once from its start by a LogReader, each record decoded by protobuf and fed to a SegmentAccumulator of the
// segment its first chunk starts in, damage clipped to each segment, boundary CRCs by the test support's
// bitwise CRC-32. Checked: ReadSegment of every segment of a real log (stats records with ~50 keys, history
// and console records, records straddling segment boundaries, a record larger than a segment, a record that
// does not decode) gives exactly the reference; damage inside a segment (a zeroed block, a flipped
// checksum) is counted in its damaged bytes and the rest is still read, the other segments unchanged; the
// last segment, a torn tail and a log cut inside a record are not settled; IndexBuilder with 1 and 3
// threads gives the serial summaries (key ids depend on thread timing, so keys are compared by name);
// RefiningOrder is a permutation that starts with the spread; a growing log built twice (the second time
// from covered_segments() on) gives what one build of the whole log gives.
#include "runlog/index_builder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "log_fd.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "runlog/run_state.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

constexpr double kStart = 1735689600;

// An open file descriptor, closed at the end of the scope.
using testing::Fd;

// A stats record of ~50 system keys (a few only in some records, one value that is not a number, one item
// without a key), values exact in a float.
wandb::Record StatsRecord(int i) {
  wandb::Record record;
  record.set_num(i + 3);
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(static_cast<int64_t>(kStart) + i);
  stats->mutable_timestamp()->set_nanos((i * 37 % 1000) * 1000000);
  for (int k = 0; k < 50; ++k) {
    if (k >= 45 && (i + k) % 3 != 0) continue;
    auto* item = stats->add_item();
    item->set_key(fmt::format("system.metric.{:02}", k));
    item->set_value_json(FormatValueJson(((i * 31 + k * 17) % 1000) * 0.25 - 50 + (k == 7 ? 1e300 : 0)));
  }
  if (i % 17 == 0) {
    auto* text = stats->add_item();
    text->set_key("system.label");
    text->set_value_json("\"busy\"");
    stats->add_item()->set_value_json("1");
  }
  record.mutable__info()->set_stream_id("abcd1234");
  return record;
}

struct LogOptions {
  int stats = 900;
  bool huge_record = true;   // a console record of 600 KiB: a segment lies wholly inside it
  bool undecodable = false;  // a record that does not decode
};

// The payloads of a run: header, run record, stats with history and console records between them, a
// 70 KiB console record early and (optionally) a 600 KiB one later.
std::vector<std::string> RunPayloads(const LogOptions& options, int first = 0) {
  std::vector<std::string> payloads;
  if (first == 0) {
    payloads.push_back(MakeHeaderRecord("runmon test").SerializeAsString());
    RunInfo run;
    run.run_id = "abcd1234";
    run.project = "index";
    run.start_time = kStart;
    payloads.push_back(MakeRunRecord(run).SerializeAsString());
  }
  for (int i = first; i < first + options.stats; ++i) {
    payloads.push_back(StatsRecord(i).SerializeAsString());
    if (i % 25 == 0) {
      payloads.push_back(
          MakeHistoryRecord(i, i, kStart + i, {{"loss", FormatValueJson(1.0 / (i + 1))}, {"epoch", "1"}})
              .SerializeAsString());
    }
    if (i % 40 == 0)
      payloads.push_back(
          MakeOutputRawRecord(false, fmt::format("step {}\n", i), kStart + i).SerializeAsString());
    if (i == first + 200)
      payloads.push_back(
          MakeOutputRawRecord(true, std::string(70 << 10, 'w'), kStart + i).SerializeAsString());
    if (options.huge_record && i == first + 400)
      payloads.push_back(
          MakeOutputRawRecord(true, std::string(600 << 10, 'h'), kStart + i).SerializeAsString());
    if (options.undecodable && i == first + 300) payloads.push_back(std::string("\x08\x01\xff", 3));
  }
  return payloads;
}

void WriteLog(const fs::path& path, const std::vector<std::string>& payloads) {
  auto writer = LogWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.error();
  for (size_t at = 0; at < payloads.size(); at += 50) {
    const size_t count = std::min<size_t>(50, payloads.size() - at);
    ASSERT_TRUE(writer->Append(std::span(payloads).subspan(at, count)).ok());
  }
}

// A summary with its keys by name (sorted by name): comparable across key tables.
std::string Describe(const SegmentSummary& s, const std::vector<std::string>& names) {
  std::string out =
      fmt::format("seg {} records {} stats {} other {} damaged {} end {} crc {:08x} time [{}, {}]",
                  s.first_segment, s.records, s.stats_records, s.other_records, s.damaged_bytes, s.end_offset,
                  s.boundary_crc, s.first_time, s.last_time);
  std::vector<std::string> keys;
  for (const KeySummary& k : s.keys) {
    keys.push_back(fmt::format("{}: n={} min={} max={} last={} {}", k.key < names.size() ? names[k.key] : "?",
                               k.count, k.min, k.max, k.last, k.min_first ? "min-first" : "max-first"));
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) out += " | " + key;
  return out;
}

// What reading the whole log from its start gives, segment by segment.
struct Reference {
  std::vector<std::string> names;
  std::map<uint64_t, SegmentSummary> settled;  // every settled segment, empty ones too
  std::map<uint64_t, std::vector<OtherRecord>> others;
  std::vector<testing::RecordLayout> records;
  uint64_t segments = 0;  // SegmentOf(size) + 1: every segment the log reaches into
};

Reference BuildReference(const std::string& bytes) {
  Reference ref;
  const testing::ReadResult read = testing::ReadAll(bytes);
  ref.records = read.records;
  ref.segments = SegmentOf(bytes.size()) + 1;
  KeyTable keys;
  std::vector<LogDamage> damage = read.damage;
  std::map<uint64_t, SegmentAccumulator> accumulators;
  for (uint64_t s = 0; s < ref.segments; ++s) accumulators.emplace(s, SegmentAccumulator(s));
  for (const auto& record : read.records) {
    SegmentAccumulator& acc = accumulators.at(SegmentOf(record.offset));
    wandb::Record decoded;
    if (!decoded.ParseFromString(record.payload)) {
      damage.push_back({record.offset, record.end - record.offset, "does not decode"});
      continue;
    }
    if (!decoded.has_stats()) {
      acc.AddOther(record.end);
      ref.others[SegmentOf(record.offset)].push_back({record.offset, record.payload});
      continue;
    }
    std::vector<SegmentAccumulator::Value> values;
    for (const auto& item : decoded.stats().item()) {
      if (item.key().empty()) continue;
      const auto value = ParseJsonNumber(item.value_json());
      if (!value) continue;
      values.push_back(
          {keys.Id(item.key()), static_cast<float>(std::clamp(*value, -double{FLT_MAX}, double{FLT_MAX}))});
    }
    const auto& timestamp = decoded.stats().timestamp();
    acc.AddStats(record.end,
                 static_cast<double>(timestamp.seconds()) + static_cast<double>(timestamp.nanos()) * 1e-9,
                 values.data(), values.size());
  }
  ref.names = keys.names();
  for (auto& [s, acc] : accumulators) {
    const uint64_t end = SegmentEnd(s);
    const bool record_past =
        std::any_of(read.records.begin(), read.records.end(), [&](const auto& r) { return r.offset >= end; });
    const bool clean_end_past = read.outcome == ReadOutcome::kEnd && read.position >= end;
    if (!record_past && !clean_end_past) continue;
    // Segment 0's check covers the log's head (its run record), every other its last bytes.
    const uint64_t checked_from = s == 0 ? 0 : end - kBoundaryCheckBytes;
    SegmentSummary summary = acc.Finish(
        testing::ReferenceCrc32(std::string_view(bytes).substr(checked_from, kBoundaryCheckBytes)));
    for (const LogDamage& d : damage) {
      const uint64_t from = std::max(d.offset, s * kSegmentBytes);
      const uint64_t to = std::min(d.offset + d.length, end);
      if (to > from) summary.damaged_bytes += to - from;
    }
    ref.settled.emplace(s, std::move(summary));
  }
  return ref;
}

void ExpectSameOthers(const std::vector<OtherRecord>& actual, const std::vector<OtherRecord>& expected,
                      uint64_t segment) {
  ASSERT_EQ(actual.size(), expected.size()) << "segment " << segment;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].offset, expected[i].offset) << "segment " << segment;
    EXPECT_TRUE(actual[i].payload == expected[i].payload) << "segment " << segment << " record " << i;
  }
}

// ReadSegment of every segment the log reaches into, in order, with one key table and one value reader.
struct SerialBuild {
  std::vector<SegmentRead> reads;
  std::vector<std::string> names;
};

SerialBuild ReadEverySegment(const fs::path& log, uint64_t segments,
                             SegmentWork work = SegmentWork::kSummarise) {
  SerialBuild build;
  Fd fd(log);
  SharedKeyTable keys;
  StatsValueReader stats;
  for (uint64_t s = 0; s < segments; ++s) build.reads.push_back(ReadSegment(fd.get(), s, work, keys, stats));
  build.names = keys.names();
  return build;
}

// Checks every segment against the reference; returns how many were settled.
size_t ExpectMatchesReference(const SerialBuild& build, const Reference& ref, const std::string& what) {
  size_t settled = 0;
  for (const SegmentRead& read : build.reads) {
    const auto expected = ref.settled.find(read.segment);
    EXPECT_FALSE(read.failed) << what << " segment " << read.segment << ": " << read.error;
    EXPECT_EQ(read.settled, expected != ref.settled.end()) << what << " segment " << read.segment;
    if (!read.settled || expected == ref.settled.end()) continue;
    ++settled;
    EXPECT_EQ(Describe(read.summary, build.names), Describe(expected->second, ref.names))
        << what << " segment " << read.segment;
    const auto others = ref.others.find(read.segment);
    ExpectSameOthers(read.others, others == ref.others.end() ? std::vector<OtherRecord>{} : others->second,
                     read.segment);
  }
  return settled;
}

class IndexBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = dir_.path() / "run-abcd1234.wandb";
    WriteLog(log_, RunPayloads(LogOptions{}));
    bytes_ = ReadFileBytes(log_);
    ref_ = BuildReference(bytes_);
  }

  TempDir dir_{"runmon-index-builder"};
  fs::path log_;
  std::string bytes_;
  Reference ref_;
};

TEST_F(IndexBuilderTest, TheLogHasTheShapeTheTestsNeed) {
  EXPECT_GE(ref_.segments, 6u);
  EXPECT_GE(ref_.names.size(), 50u);
  size_t straddling = 0;
  size_t larger_than_a_segment = 0;
  for (const auto& r : ref_.records) {
    straddling += SegmentOf(r.offset) != SegmentOf(r.end - 1) ? 1 : 0;
    larger_than_a_segment += r.end - r.offset > kSegmentBytes ? 1 : 0;
  }
  EXPECT_GE(straddling, 3u);
  EXPECT_EQ(larger_than_a_segment, 1u);
  EXPECT_TRUE(ref_.settled.count(ref_.segments - 1) == 0);  // the last segment is not settled
}

TEST_F(IndexBuilderTest, ReadSegmentGivesWhatAnAccumulatorFedEveryRecordGives) {
  const SerialBuild build = ReadEverySegment(log_, ref_.segments);
  EXPECT_EQ(ExpectMatchesReference(build, ref_, "whole log"), ref_.segments - 1);
  const SegmentRead& last = build.reads.back();
  EXPECT_FALSE(last.settled);
  EXPECT_FALSE(last.failed);
  EXPECT_EQ(last.summary.records, 0u);
  // The same reads in any order, with a fresh value reader each time (it only caches keys by position).
  Fd fd(log_);
  SharedKeyTable keys;
  for (uint64_t s = ref_.segments - 1; s-- > 0;) {
    StatsValueReader stats;
    const SegmentRead read = ReadSegment(fd.get(), s, SegmentWork::kSummarise, keys, stats);
    ASSERT_TRUE(read.settled) << s;
    EXPECT_EQ(Describe(read.summary, keys.names()), Describe(ref_.settled.at(s), ref_.names)) << s;
  }
}

// SegmentRead::settled: "false: the log does not yet hold all of the segment (nothing else is set)". The last
// segment holds console records: they must not come back with a read that is not settled.
TEST_F(IndexBuilderTest, AnUnsettledReadCarriesNothingElse) {
  ASSERT_TRUE(ref_.others.count(ref_.segments - 1)) << "the test expects console records in the last segment";
  Fd fd(log_);
  SharedKeyTable keys;
  StatsValueReader stats;
  for (const SegmentWork work : {SegmentWork::kSummarise, SegmentWork::kOthersOnly}) {
    const SegmentRead read = ReadSegment(fd.get(), ref_.segments - 1, work, keys, stats);
    EXPECT_FALSE(read.settled);
    EXPECT_EQ(read.summary.records, 0u);
    EXPECT_TRUE(read.others.empty()) << read.others.size() << " records";
  }
}

TEST_F(IndexBuilderTest, ARecordLargerThanASegmentBelongsToTheSegmentItStartsIn) {
  const auto huge = std::find_if(ref_.records.begin(), ref_.records.end(),
                                 [](const auto& r) { return r.end - r.offset > kSegmentBytes; });
  ASSERT_NE(huge, ref_.records.end());
  const uint64_t first = SegmentOf(huge->offset);
  const uint64_t last = SegmentOf(huge->end - 1);
  ASSERT_GE(last, first + 2);
  const SerialBuild build = ReadEverySegment(log_, last + 1);
  EXPECT_EQ(build.reads[first].summary.end_offset, huge->end);
  ASSERT_FALSE(build.reads[first].others.empty());
  EXPECT_EQ(build.reads[first].others.back().offset, huge->offset);
  EXPECT_EQ(build.reads[first].others.back().payload.size(), huge->payload.size());
  for (uint64_t s = first + 1; s < last; ++s) {
    EXPECT_TRUE(build.reads[s].settled) << s;
    EXPECT_EQ(build.reads[s].summary.records, 0u) << s;
    EXPECT_EQ(build.reads[s].summary.end_offset, 0u) << s;
    EXPECT_EQ(build.reads[s].summary.damaged_bytes, 0u) << s;
    EXPECT_TRUE(build.reads[s].others.empty()) << s;
  }
  // The segment its end lies in reads on from the record after it.
  EXPECT_GT(build.reads[last].summary.records, 0u);
  EXPECT_EQ(build.reads[last].summary.damaged_bytes, 0u);
}

TEST_F(IndexBuilderTest, OthersOnlyGivesTheSameOtherRecordsAndNoSummary) {
  const SerialBuild full = ReadEverySegment(log_, ref_.segments);
  const SerialBuild others = ReadEverySegment(log_, ref_.segments, SegmentWork::kOthersOnly);
  for (uint64_t s = 0; s + 1 < ref_.segments; ++s) {
    ASSERT_TRUE(others.reads[s].settled) << s;
    EXPECT_EQ(others.reads[s].summary.records, 0u) << s;
    EXPECT_TRUE(others.reads[s].summary.keys.empty()) << s;
    ExpectSameOthers(others.reads[s].others, full.reads[s].others, s);
  }
  EXPECT_TRUE(others.names.empty());  // no stats were read
}

// ---- damage

// The records overlapping [from, to).
std::vector<testing::RecordLayout> Overlapping(const Reference& ref, uint64_t from, uint64_t to) {
  std::vector<testing::RecordLayout> out;
  for (const auto& r : ref.records) {
    if (r.offset < to && r.end > from) out.push_back(r);
  }
  return out;
}

TEST_F(IndexBuilderTest, DamageIsCountedInItsSegmentAndTheRestIsStillRead) {
  // Two segments (past the first) where every record is small.
  std::vector<uint64_t> clean;
  for (uint64_t s = 1; s + 1 < ref_.segments; ++s) {
    const auto records = Overlapping(ref_, s * kSegmentBytes, SegmentEnd(s));
    if (std::all_of(records.begin(), records.end(), [](const auto& r) { return r.end - r.offset < 4096; }))
      clean.push_back(s);
  }
  ASSERT_GE(clean.size(), 2u);
  const uint64_t zeroed_segment = clean[0];
  const uint64_t flipped_segment = clean[1];
  std::string damaged = bytes_;
  // A zeroed block in the middle of one.
  const uint64_t zero_from = zeroed_segment * kSegmentBytes + 3 * kBlockSize;
  const uint64_t zero_to = zero_from + kBlockSize;
  std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(zero_from),
            damaged.begin() + static_cast<std::ptrdiff_t>(zero_to), '\0');
  const auto lost_zeroed = Overlapping(ref_, zero_from, zero_to);
  ASSERT_FALSE(lost_zeroed.empty());
  for (const auto& r : lost_zeroed)
    ASSERT_LT(r.end - r.offset, 4096u) << "the test expects small records here";
  const uint64_t zero_damage_from = std::min(zero_from, lost_zeroed.front().offset);
  const uint64_t zero_damage_to = std::max(zero_to, lost_zeroed.back().end);

  // A flipped payload byte (its chunk's checksum no longer matches) in a record in block 4 of the other: the
  // rest of that block is skipped.
  const uint64_t block_from = flipped_segment * kSegmentBytes + 4 * kBlockSize;
  const uint64_t block_to = block_from + kBlockSize;
  auto flipped = std::find_if(ref_.records.begin(), ref_.records.end(), [&](const auto& r) {
    return r.offset >= block_from + 2000 && r.end < block_to - 4000;
  });
  ASSERT_NE(flipped, ref_.records.end());
  char& byte = damaged[flipped->offset + kChunkHeaderSize + 40];
  byte = static_cast<char>(byte ^ 0x10);
  const auto lost_flip = Overlapping(ref_, flipped->offset, block_to);
  const uint64_t flip_damage_to = std::max(block_to, lost_flip.back().end);
  for (const auto& r : lost_flip) ASSERT_LT(r.end - r.offset, 4096u);

  const fs::path copy = dir_.path() / "damaged.wandb";
  WriteFileBytes(copy, damaged);
  const SerialBuild build = ReadEverySegment(copy, ref_.segments);
  // The whole-log reader of the damaged bytes agrees with the segment reader everywhere.
  const Reference damaged_ref = BuildReference(damaged);
  EXPECT_EQ(ExpectMatchesReference(build, damaged_ref, "damaged log"), ref_.segments - 1);
  // And the numbers are the ones the damage implies.
  const SegmentSummary& zeroed = build.reads[zeroed_segment].summary;
  EXPECT_EQ(zeroed.damaged_bytes, zero_damage_to - zero_damage_from);
  EXPECT_EQ(zeroed.records, ref_.settled.at(zeroed_segment).records - lost_zeroed.size());
  EXPECT_GT(zeroed.records, 0u);
  const SegmentSummary& flipped_summary = build.reads[flipped_segment].summary;
  EXPECT_EQ(flipped_summary.damaged_bytes, flip_damage_to - flipped->offset);
  EXPECT_EQ(flipped_summary.records, ref_.settled.at(flipped_segment).records - lost_flip.size());
  EXPECT_GT(flipped_summary.records, 0u);
  // Segments without damage are exactly what they were.
  for (uint64_t s = 0; s + 1 < ref_.segments; ++s) {
    if (s == zeroed_segment || s == flipped_segment) continue;
    EXPECT_EQ(Describe(build.reads[s].summary, build.names), Describe(ref_.settled.at(s), ref_.names)) << s;
  }
}

// The first block of a segment zeroed while a record of the segment before reaches into it: each segment
// counts its own part of the damage, and the record is lost from the segment it started in.
TEST_F(IndexBuilderTest, DamageAtASegmentsStartIsSplitBetweenTheSegments) {
  const auto crossing = std::find_if(ref_.records.begin(), ref_.records.end(), [](const auto& r) {
    return SegmentOf(r.offset) >= 1 && SegmentOf(r.offset) != SegmentOf(r.end - 1) &&
           r.end - r.offset < 4096 && r.end < SegmentEnd(SegmentOf(r.offset)) + kBlockSize;
  });
  ASSERT_NE(crossing, ref_.records.end());
  const uint64_t s = SegmentOf(crossing->offset) + 1;
  const auto lost = Overlapping(ref_, s * kSegmentBytes, s * kSegmentBytes + kBlockSize);
  for (const auto& r : lost) ASSERT_LT(r.end - r.offset, 4096u);
  std::string damaged = bytes_;
  std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(s * kSegmentBytes),
            damaged.begin() + static_cast<std::ptrdiff_t>(s * kSegmentBytes + kBlockSize), '\0');
  const fs::path copy = dir_.path() / "damaged.wandb";
  WriteFileBytes(copy, damaged);
  const SerialBuild build = ReadEverySegment(copy, ref_.segments);
  EXPECT_EQ(ExpectMatchesReference(build, BuildReference(damaged), "damaged segment start"),
            ref_.segments - 1);
  EXPECT_EQ(build.reads[s - 1].summary.damaged_bytes, SegmentEnd(s - 1) - crossing->offset);
  EXPECT_EQ(build.reads[s - 1].summary.records, ref_.settled.at(s - 1).records - 1);
  EXPECT_EQ(build.reads[s].summary.damaged_bytes, std::max(kBlockSize, lost.back().end - s * kSegmentBytes));
  EXPECT_EQ(build.reads[s].summary.records, ref_.settled.at(s).records - (lost.size() - 1));
}

TEST(IndexBuilderDamage, ARecordThatDoesNotDecodeIsDamageNotARecord) {
  TempDir dir("runmon-index-builder");
  const fs::path log = dir.path() / "run.wandb";
  LogOptions options;
  options.undecodable = true;
  options.huge_record = false;
  WriteLog(log, RunPayloads(options));
  const std::string bytes = ReadFileBytes(log);
  const Reference ref = BuildReference(bytes);
  const auto bad = std::find_if(ref.records.begin(), ref.records.end(),
                                [](const auto& r) { return r.payload == std::string("\x08\x01\xff", 3); });
  ASSERT_NE(bad, ref.records.end());
  const SerialBuild build = ReadEverySegment(log, ref.segments);
  EXPECT_EQ(ExpectMatchesReference(build, ref, "undecodable record"), ref.segments - 1);
  EXPECT_EQ(build.reads[SegmentOf(bad->offset)].summary.damaged_bytes, bad->end - bad->offset);
}

// ---- settled or not

TEST_F(IndexBuilderTest, ATornTailIsNotSettled) {
  // A stats record that straddles a segment boundary, cut past the boundary, then cut at its end.
  const auto straddling = std::find_if(ref_.records.begin(), ref_.records.end(), [](const auto& r) {
    return SegmentOf(r.offset) >= 1 && SegmentOf(r.offset) != SegmentOf(r.end - 1) &&
           r.end - r.offset < 8192 && r.end - SegmentEnd(SegmentOf(r.offset)) > 20;
  });
  ASSERT_NE(straddling, ref_.records.end());
  const uint64_t s = SegmentOf(straddling->offset);
  const fs::path cut = dir_.path() / "cut.wandb";
  for (const uint64_t length : {SegmentEnd(s) + 10, straddling->end - 1}) {
    WriteFileBytes(cut, std::string_view(bytes_).substr(0, length));
    const SerialBuild build = ReadEverySegment(cut, s + 2);
    EXPECT_TRUE(build.reads[s - 1].settled) << length;
    EXPECT_EQ(Describe(build.reads[s - 1].summary, build.names),
              Describe(ref_.settled.at(s - 1), ref_.names));
    EXPECT_FALSE(build.reads[s].settled) << length;
    EXPECT_FALSE(build.reads[s].failed) << length;
    EXPECT_FALSE(build.reads[s + 1].settled) << length;
  }
  // Ending cleanly past the segment's end (just after the record) settles it.
  WriteFileBytes(cut, std::string_view(bytes_).substr(0, straddling->end));
  const SerialBuild build = ReadEverySegment(cut, s + 2);
  ASSERT_TRUE(build.reads[s].settled);
  EXPECT_EQ(Describe(build.reads[s].summary, build.names), Describe(ref_.settled.at(s), ref_.names));
  EXPECT_FALSE(build.reads[s + 1].settled);  // the data ends inside it
  // A cut inside a record within one segment, and the data ending before a segment's end.
  const auto inside = std::find_if(ref_.records.begin(), ref_.records.end(), [](const auto& r) {
    return r.offset > SegmentEnd(1) + 10000 && SegmentOf(r.end) == 2;
  });
  ASSERT_NE(inside, ref_.records.end());
  for (const uint64_t length : {inside->offset + 3, inside->end - 1, inside->end}) {
    WriteFileBytes(cut, std::string_view(bytes_).substr(0, length));
    const SerialBuild inner = ReadEverySegment(cut, 3);
    EXPECT_TRUE(inner.reads[1].settled) << length;
    EXPECT_FALSE(inner.reads[2].settled) << length;
  }
}

TEST(IndexBuilderSettled, ShortLogsAndFilesThatAreNotLogs) {
  TempDir dir("runmon-index-builder");
  SharedKeyTable keys;
  StatsValueReader stats;
  const fs::path path = dir.path() / "f.wandb";
  WriteFileBytes(path, ":W&");  // a header being written
  {
    Fd fd(path);
    const SegmentRead read = ReadSegment(fd.get(), 0, SegmentWork::kSummarise, keys, stats);
    EXPECT_FALSE(read.settled);
    EXPECT_FALSE(read.failed);
  }
  WriteFileBytes(path, std::string(kSegmentBytes + 10, 'x'));
  {
    Fd fd(path);
    for (const uint64_t s : {0u, 1u}) {
      const SegmentRead read = ReadSegment(fd.get(), s, SegmentWork::kSummarise, keys, stats);
      EXPECT_TRUE(read.failed) << s;
      EXPECT_FALSE(read.error.empty()) << s;
      EXPECT_FALSE(read.settled) << s;
    }
  }
  // A header alone: segment 0 ends past the data.
  WriteFileBytes(path, std::string(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size()));
  {
    Fd fd(path);
    const SegmentRead read = ReadSegment(fd.get(), 0, SegmentWork::kSummarise, keys, stats);
    EXPECT_FALSE(read.settled);
    EXPECT_FALSE(read.failed);
    // A segment far past the end.
    EXPECT_FALSE(ReadSegment(fd.get(), 1000, SegmentWork::kSummarise, keys, stats).settled);
  }
}

// ---- IndexBuilder

std::vector<SegmentRead> BuildAll(int fd, std::vector<IndexBuilder::Job> jobs, SharedKeyTable& keys,
                                  int threads) {
  IndexBuilder builder(fd, std::move(jobs), keys, threads);
  std::vector<SegmentRead> reads;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!builder.finished() && std::chrono::steady_clock::now() < deadline) {
    builder.Wait(std::chrono::milliseconds(100));
    for (SegmentRead& read : builder.Take()) reads.push_back(std::move(read));
  }
  EXPECT_TRUE(builder.finished());
  for (SegmentRead& read : builder.Take()) reads.push_back(std::move(read));
  EXPECT_EQ(builder.done(), builder.total());
  std::sort(reads.begin(), reads.end(), [](const auto& a, const auto& b) { return a.segment < b.segment; });
  return reads;
}

std::vector<IndexBuilder::Job> Jobs(uint64_t from, uint64_t to, SegmentWork work) {
  std::vector<IndexBuilder::Job> jobs;
  for (uint64_t s = from; s < to; ++s) jobs.push_back({s, work});
  return jobs;
}

TEST_F(IndexBuilderTest, BuilderThreadsGiveTheSerialSummaries) {
  const SerialBuild serial = ReadEverySegment(log_, ref_.segments);
  for (const int threads : {1, 3}) {
    Fd fd(log_);
    SharedKeyTable keys;
    const std::vector<SegmentRead> reads =
        BuildAll(fd.get(), Jobs(0, ref_.segments, SegmentWork::kSummarise), keys, threads);
    const std::vector<std::string> names = keys.names();
    ASSERT_EQ(reads.size(), ref_.segments) << threads;
    for (const SegmentRead& read : reads) {
      const SegmentRead& expected = serial.reads[read.segment];
      EXPECT_EQ(read.settled, expected.settled) << threads << " threads, segment " << read.segment;
      EXPECT_FALSE(read.failed);
      if (!read.settled) continue;
      EXPECT_EQ(Describe(read.summary, names), Describe(expected.summary, serial.names))
          << threads << " threads, segment " << read.segment;
      ExpectSameOthers(read.others, expected.others, read.segment);
    }
    EXPECT_FALSE(reads.back().settled);
    std::vector<std::string> sorted_names = names;
    std::vector<std::string> sorted_serial = serial.names;
    std::sort(sorted_names.begin(), sorted_names.end());
    std::sort(sorted_serial.begin(), sorted_serial.end());
    EXPECT_EQ(sorted_names, sorted_serial) << threads;
  }
}

TEST_F(IndexBuilderTest, BuilderOthersOnlyJobs) {
  const SerialBuild serial = ReadEverySegment(log_, ref_.segments);
  Fd fd(log_);
  SharedKeyTable keys;
  const std::vector<SegmentRead> reads =
      BuildAll(fd.get(), Jobs(0, ref_.segments - 1, SegmentWork::kOthersOnly), keys, 3);
  ASSERT_EQ(reads.size(), ref_.segments - 1);
  for (const SegmentRead& read : reads) {
    ASSERT_TRUE(read.settled);
    EXPECT_EQ(read.summary.records, 0u);
    ExpectSameOthers(read.others, serial.reads[read.segment].others, read.segment);
  }
}

TEST_F(IndexBuilderTest, BuilderStopsAtTheFirstUnsettledSegment) {
  // Jobs far past the end of the log: the first unsettled one ends the work; those after it are skipped.
  Fd fd(log_);
  SharedKeyTable keys;
  const std::vector<SegmentRead> reads =
      BuildAll(fd.get(), Jobs(0, ref_.segments + 40, SegmentWork::kSummarise), keys, 1);
  ASSERT_EQ(reads.size(), ref_.segments);
  EXPECT_FALSE(reads.back().settled);
  EXPECT_EQ(reads.back().segment, ref_.segments - 1);
}

TEST(IndexBuilderLifetime, NoJobsAndAnEarlyStop) {
  TempDir dir("runmon-index-builder");
  const fs::path log = dir.path() / "run.wandb";
  WriteLog(log, RunPayloads(LogOptions{}));
  Fd fd(log);
  SharedKeyTable keys;
  {
    IndexBuilder none(fd.get(), {}, keys, 4);
    EXPECT_TRUE(none.finished());
    EXPECT_EQ(none.total(), 0u);
    none.Wait(std::chrono::milliseconds(1));
    EXPECT_TRUE(none.Take().empty());
  }
  {
    IndexBuilder early(fd.get(), Jobs(0, 6, SegmentWork::kSummarise), keys, 2);
    EXPECT_EQ(early.total(), 6u);
    EXPECT_LE(early.done(), early.total());
  }  // destroyed while it may still be reading: no hang, no leak
}

TEST(IndexBuilderLifetime, WaitFinishedReturnsOnceTheWorkEndsAndNamesTheSpread) {
  TempDir dir("runmon-index-builder");
  const fs::path log = dir.path() / "run.wandb";
  WriteLog(log, RunPayloads(LogOptions{}));
  Fd fd(log);
  SharedKeyTable keys;
  {
    // Jobs past the log's end: the work ends at the first unsettled one, and WaitFinished sees it.
    IndexBuilder builder(fd.get(), Jobs(0, 200, SegmentWork::kSummarise), keys, 1);
    EXPECT_EQ(builder.preview_jobs(), 64u);  // 200 jobs: a spread of 64 goes first
    for (int i = 0; i < 600 && !builder.finished(); ++i) builder.WaitFinished(std::chrono::milliseconds(100));
    EXPECT_TRUE(builder.finished());
    const std::vector<SegmentRead> reads = builder.Take();
    ASSERT_FALSE(reads.empty());
    // One worker reads in the order handed out: the spread's first job, the first segment.
    EXPECT_EQ(reads.front().segment, 0u);
  }
  {
    IndexBuilder short_list(fd.get(), Jobs(0, 128, SegmentWork::kSummarise), keys, 2);
    EXPECT_EQ(short_list.preview_jobs(), 0u);  // too short to spread: read in order
  }
}

// ---- RefiningOrder

TEST(RefiningOrder, IsAPermutationThatStartsWithTheSpread) {
  for (const size_t jobs : {0u, 1u, 2u, 10u, 128u, 129u, 1000u, 5000u}) {
    for (const size_t preview : {0u, 1u, 4u, 64u}) {
      const std::vector<size_t> order = RefiningOrder(jobs, preview);
      ASSERT_EQ(order.size(), jobs) << jobs << "/" << preview;
      std::vector<size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<size_t> identity(jobs);
      std::iota(identity.begin(), identity.end(), size_t{0});
      EXPECT_EQ(sorted, identity) << jobs << "/" << preview;
      if (jobs > 2 * preview && preview > 0) {
        for (size_t i = 0; i < preview; ++i) {
          EXPECT_EQ(order[i], preview == 1 ? 0 : i * (jobs - 1) / (preview - 1)) << jobs << "/" << preview;
        }
        EXPECT_TRUE(std::is_sorted(order.begin() + static_cast<std::ptrdiff_t>(preview), order.end()));
        // The spread covers the whole list: it starts at the first job and, with two picks or more, ends at
        // the last.
        EXPECT_EQ(order[0], 0u);
        if (preview > 1) EXPECT_EQ(order[preview - 1], jobs - 1);
      } else {
        EXPECT_EQ(order, identity) << jobs << "/" << preview;
      }
    }
  }
}

// ---- a growing log

TEST(IndexBuilderGrowing, BuildingAgainFromTheCoveredSegmentsGivesTheWholeLogsBuild) {
  TempDir dir("runmon-index-builder");
  const fs::path log = dir.path() / "run.wandb";
  auto writer = LogWriter::Create(log);
  ASSERT_TRUE(writer.ok());
  LogOptions first;
  first.stats = 450;
  for (const std::string& payload : RunPayloads(first)) ASSERT_TRUE(writer->Append(payload).ok());

  std::map<uint64_t, std::string> built;  // segment -> summary by name
  SummaryIndex index;
  {
    Fd fd(log);
    SharedKeyTable keys;
    const uint64_t size = writer->size();
    const std::vector<SegmentRead> reads =
        BuildAll(fd.get(), Jobs(0, SegmentOf(size) + 1, SegmentWork::kSummarise), keys, 3);
    index.keys = keys.names();
    index.levels.emplace_back();
    for (const SegmentRead& read : reads) {
      if (!read.settled) break;
      built[read.segment] = Describe(read.summary, index.keys);
      index.levels[0].push_back(read.summary);
    }
  }
  const uint64_t covered = index.covered_segments();
  ASSERT_GE(covered, 2u);
  ASSERT_EQ(covered, SegmentOf(writer->size()));  // all but the segment the log ends in

  // The log grows (the same run goes on), and the viewer builds from where the index ends.
  LogOptions second;
  second.stats = 500;
  for (const std::string& payload : RunPayloads(second, first.stats))
    ASSERT_TRUE(writer->Append(payload).ok());
  {
    Fd fd(log);
    SharedKeyTable keys(index.keys);
    const uint64_t size = writer->size();
    const std::vector<SegmentRead> reads =
        BuildAll(fd.get(), Jobs(covered, SegmentOf(size) + 1, SegmentWork::kSummarise), keys, 3);
    const std::vector<std::string> names = keys.names();
    for (size_t i = 0; i < index.keys.size(); ++i) EXPECT_EQ(names[i], index.keys[i]);  // ids kept
    for (const SegmentRead& read : reads) {
      if (read.settled) built[read.segment] = Describe(read.summary, names);
    }
  }
  const std::string bytes = ReadFileBytes(log);
  const Reference whole = BuildReference(bytes);
  ASSERT_EQ(built.size(), whole.settled.size());
  for (const auto& [segment, summary] : whole.settled) {
    ASSERT_TRUE(built.count(segment)) << segment;
    EXPECT_EQ(built[segment], Describe(summary, whole.names)) << segment;
  }
}

}  // namespace
}  // namespace runmon::runlog
