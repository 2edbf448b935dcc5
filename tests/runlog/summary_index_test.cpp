// The summary index's pure parts (summary_index.hpp): the byte format (checked against a hand-written encoder
// with an independent CRC), KeyTable, SegmentAccumulator (count, min, max, last and the order flag),
// MergeSummary's order flag across segments, PyramidBuilder and RebuildPyramid (which nodes complete when,
// and what they hold), EncodeIndex -> ParseIndex round trips, and ParseIndex on every kind of damage: a
// truncation at every byte length (the valid prefix is exactly the entries wholly present), a flipped byte
// in each entry, another magic or version, an unknown entry type, key ids not named yet, keys out of order
// or listed twice, segments out of order, a node before its segments are settled, counts that do not add
// up, non-finite values and an oversized length field. Inputs are copied into exactly sized heap buffers,
// so the sanitizers see any read past them.
#include "runlog/summary_index.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runlog/log_format.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every field of a summary, exactly (floats print as their shortest round-trip form; -0 stays -0).
std::string Describe(const SegmentSummary& s) {
  std::string out =
      fmt::format("L{} seg {} records {} stats {} other {} damaged {} end {} crc {:08x} time [{}, {}]",
                  s.level, s.first_segment, s.records, s.stats_records, s.other_records, s.damaged_bytes,
                  s.end_offset, s.boundary_crc, s.first_time, s.last_time);
  for (const KeySummary& k : s.keys) {
    out += fmt::format(" | {}: n={} min={} max={} last={} {}", k.key, k.count, k.min, k.max, k.last,
                       k.min_first ? "min-first" : "max-first");
  }
  return out;
}

std::string Describe(const SummaryIndex& index) {
  std::string out = "keys:";
  for (const std::string& key : index.keys) out += " " + key;
  for (size_t level = 0; level < index.levels.size(); ++level) {
    out += fmt::format("\nlevel {} ({} entries)", level, index.levels[level].size());
    for (const SegmentSummary& s : index.levels[level]) out += "\n  " + Describe(s);
  }
  return out;
}

// ParseIndex over an exactly sized heap copy (a read past the end is a sanitizer error).
ParsedIndex Parse(std::string_view bytes) {
  std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  // The +1 keeps new[] from returning the same pointer for 0 bytes; the string_view excludes it.
  return ParseIndex(std::string_view(copy.get(), bytes.size()));
}

// A hand-written encoder of the format (summary_index.hpp), with the test support's bitwise CRC-32.
void PutU32(uint32_t value, std::string& out) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}
void PutU64(uint64_t value, std::string& out) {
  PutU32(static_cast<uint32_t>(value), out);
  PutU32(static_cast<uint32_t>(value >> 32), out);
}
void PutVarint(uint64_t value, std::string& out) {
  do {
    uint8_t byte = value & 0x7F;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value != 0);
}

std::string Header() {
  return std::string("RMIX\x01\x12\x04\x00", 8);
}

std::string Framed(uint8_t type, std::string_view payload) {
  std::string out;
  PutU32(static_cast<uint32_t>(payload.size()), out);
  std::string crc_input(1, static_cast<char>(type));
  crc_input.append(payload);
  PutU32(testing::ReferenceCrc32(crc_input), out);
  out.push_back(static_cast<char>(type));
  out.append(payload);
  return out;
}

std::string KeyEntry(std::string_view name) {
  return Framed(1, name);
}

struct RawKey {
  uint64_t delta = 0;  // id minus the previous key's id
  uint64_t count = 1;
  float min = 0;
  float max = 0;
  float last = 0;
  uint8_t flags = 1;
};

struct RawSummary {
  uint64_t level = 0;
  uint64_t first_segment = 0;
  uint64_t records = 0;
  uint64_t stats_records = 0;
  uint64_t other_records = 0;
  uint64_t damaged_bytes = 0;
  uint64_t end_offset = 0;
  uint32_t boundary_crc = 0;
  double first_time = 0;
  double last_time = 0;
  std::vector<RawKey> keys;
  std::optional<uint64_t> key_count;  // what the key count field says (default: keys.size())
  std::string trailing;               // bytes after the keys

  std::string Payload() const {
    std::string out;
    for (uint64_t value :
         {level, first_segment, records, stats_records, other_records, damaged_bytes, end_offset})
      PutVarint(value, out);
    PutU32(boundary_crc, out);
    PutU64(std::bit_cast<uint64_t>(first_time), out);
    PutU64(std::bit_cast<uint64_t>(last_time), out);
    PutVarint(key_count.value_or(keys.size()), out);
    for (const RawKey& key : keys) {
      PutVarint(key.delta, out);
      PutVarint(key.count, out);
      PutU32(std::bit_cast<uint32_t>(key.min), out);
      PutU32(std::bit_cast<uint32_t>(key.max), out);
      PutU32(std::bit_cast<uint32_t>(key.last), out);
      out.push_back(static_cast<char>(key.flags));
    }
    return out + trailing;
  }
  std::string Entry() const { return Framed(2, Payload()); }
};

// A plain level-0 segment with one stats record and key 0 at `value`.
RawSummary RawSegment(uint64_t segment, float value = 1) {
  RawSummary raw;
  raw.first_segment = segment;
  raw.records = 1;
  raw.stats_records = 1;
  raw.end_offset = segment * kSegmentBytes + 100;
  raw.first_time = raw.last_time = 1000.0 + static_cast<double>(segment);
  raw.keys = {{0, 1, value, value, value, 1}};
  return raw;
}

std::string WithKeys(std::initializer_list<std::string_view> names) {
  std::string out = Header();
  for (std::string_view name : names) out += KeyEntry(name);
  return out;
}

// Expects the bytes to parse up to exactly `valid` with a problem mentioning `problem`.
void ExpectRefusedAt(const std::string& bytes, size_t valid, std::string_view problem) {
  const ParsedIndex parsed = Parse(bytes);
  EXPECT_EQ(parsed.valid_bytes, valid) << parsed.problem;
  EXPECT_NE(parsed.problem.find(problem), std::string::npos) << "problem: '" << parsed.problem << "'";
}

SegmentSummary Summary(uint64_t segment, std::vector<KeySummary> keys, uint64_t stats = 1,
                       uint64_t others = 0) {
  SegmentSummary s;
  s.first_segment = segment;
  s.records = stats + others;
  s.stats_records = stats;
  s.other_records = others;
  s.end_offset = segment * kSegmentBytes + 500;
  s.boundary_crc = static_cast<uint32_t>(0x9E3779B9u * (segment + 1));
  if (stats > 0) {
    s.first_time = 1700000000.0 + static_cast<double>(segment) * 10;
    s.last_time = s.first_time + 9.5;
  }
  s.keys = std::move(keys);
  return s;
}

// `segments` level-0 summaries with keys drawn from 10 ids, varied values and order flags.
SummaryIndex SyntheticIndex(uint64_t segments, uint64_t stride = 1) {
  SummaryIndex index;
  for (int i = 0; i < 10; ++i) index.keys.push_back(fmt::format("system.key{}", i));
  index.levels.emplace_back();
  for (uint64_t n = 0; n < segments; ++n) {
    const uint64_t segment = n * stride;
    std::vector<KeySummary> keys;
    for (uint32_t id = 0; id < 10; ++id) {
      if ((segment + id) % 3 == 0) continue;
      const float base = static_cast<float>((segment * 7 + id * 13) % 50) - 10.0f;
      keys.push_back({id, static_cast<uint32_t>(1 + (segment + id) % 5), base - 1.5f, base + 2.25f, base,
                      (segment ^ id) % 2 == 0});
    }
    SegmentSummary s = Summary(segment, std::move(keys), 5, segment % 3);
    s.damaged_bytes = segment % 7 == 0 ? 4096 : 0;
    index.levels[0].push_back(std::move(s));
  }
  RebuildPyramid(index);
  if (segments == 0) index.levels.clear();  // an empty level 0 is no level (as ParseIndex gives it back)
  return index;
}

// ---- constants and small helpers

TEST(SummaryIndexFormat, SegmentArithmetic) {
  EXPECT_EQ(kSegmentBytes, 8 * kBlockSize);
  EXPECT_EQ(SegmentEnd(0), kSegmentBytes);
  EXPECT_EQ(SegmentEnd(3), 4 * kSegmentBytes);
  EXPECT_EQ(SegmentOf(0), 0u);
  EXPECT_EQ(SegmentOf(kSegmentBytes - 1), 0u);
  EXPECT_EQ(SegmentOf(kSegmentBytes), 1u);
  SegmentSummary node;
  EXPECT_EQ(node.segment_span(), 1u);
  node.level = 1;
  EXPECT_EQ(node.segment_span(), 16u);
  node.level = 5;
  EXPECT_EQ(node.segment_span(), 1u << 20);

  SummaryIndex index;
  EXPECT_TRUE(index.segments().empty());
  EXPECT_EQ(index.covered_segments(), 0u);
  index.levels.emplace_back();
  EXPECT_EQ(index.covered_segments(), 0u);
  index.levels[0].push_back(Summary(4, {}));
  index.levels[0].push_back(Summary(9, {}));
  EXPECT_EQ(index.covered_segments(), 10u);
  EXPECT_EQ(index.segments().size(), 2u);
}

TEST(SummaryIndexFormat, HeaderAndEntriesMatchAHandWrittenEncoder) {
  EXPECT_EQ(EncodeIndexHeader(), Header());
  EXPECT_EQ(EncodeIndexHeader().size(), kIndexHeaderSize);

  std::string key;
  AppendKeyEntry("cpu", key);
  EXPECT_EQ(key, KeyEntry("cpu"));
  EXPECT_EQ(key.size(), 9u + 3);

  SegmentSummary s;
  s.level = 0;
  s.first_segment = 300;  // two varint bytes
  s.records = 7;
  s.stats_records = 5;
  s.other_records = 2;
  s.damaged_bytes = 70000;
  s.end_offset = 301 * kSegmentBytes + 12;
  s.boundary_crc = 0xDEADBEEF;
  s.first_time = 1735689600.25;
  s.last_time = 1735689700.5;
  s.keys = {{3, 5, -1.5f, 2.0f, 0.5f, true}, {200, 2, 10.0f, 11.0f, 11.0f, false}};
  std::string entry;
  AppendSummaryEntry(s, entry);
  RawSummary raw;
  raw.first_segment = 300;
  raw.records = 7;
  raw.stats_records = 5;
  raw.other_records = 2;
  raw.damaged_bytes = 70000;
  raw.end_offset = s.end_offset;
  raw.boundary_crc = 0xDEADBEEF;
  raw.first_time = s.first_time;
  raw.last_time = s.last_time;
  raw.keys = {{3, 5, -1.5f, 2.0f, 0.5f, 1}, {197, 2, 10.0f, 11.0f, 11.0f, 0}};  // ids as deltas
  EXPECT_EQ(entry, raw.Entry());
}

// ---- KeyTable

TEST(KeyTable, GivesIdsInOrderOfFirstUse) {
  KeyTable table;
  bool added = false;
  EXPECT_EQ(table.Id("cpu", &added), 0u);
  EXPECT_TRUE(added);
  EXPECT_EQ(table.Id("gpu.0.temp", &added), 1u);
  EXPECT_TRUE(added);
  EXPECT_EQ(table.Id("cpu", &added), 0u);
  EXPECT_FALSE(added);
  EXPECT_EQ(table.Id("memory_percent"), 2u);
  EXPECT_EQ(table.Id("gpu.0.temp"), 1u);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.names(), (std::vector<std::string>{"cpu", "gpu.0.temp", "memory_percent"}));
}

// ---- SegmentAccumulator

TEST(SegmentAccumulator, KeepsCountMinMaxLastAndWhichExtremeCameFirst) {
  SegmentAccumulator acc(3);
  EXPECT_EQ(acc.segment(), 3u);
  // Key 7: 5, 3, 7, 7, 4 (the maximum is the latest extreme: min first). Key 2: 1, 9, 0 (the minimum is the
  // latest: max first). Key 4: once.
  const std::vector<std::vector<SegmentAccumulator::Value>> records = {
      {{7, 5}, {2, 1}}, {{7, 3}, {2, 9}, {4, 2.5f}}, {{7, 7}, {2, 0}}, {{7, 7}}, {{7, 4}},
  };
  const double times[] = {100, 90, 110, 105, 95};
  const uint64_t ends[] = {1000, 2000, 1500, 2100, 2050};
  for (size_t i = 0; i < records.size(); ++i)
    acc.AddStats(ends[i], times[i], records[i].data(), records[i].size());
  acc.AddOther(2600);
  acc.AddOther(2500);
  const SegmentSummary s = acc.Finish(0x1234);
  EXPECT_EQ(s.level, 0);
  EXPECT_EQ(s.first_segment, 3u);
  EXPECT_EQ(s.records, 7u);
  EXPECT_EQ(s.stats_records, 5u);
  EXPECT_EQ(s.other_records, 2u);
  EXPECT_EQ(s.damaged_bytes, 0u);
  EXPECT_EQ(s.end_offset, 2600u);
  EXPECT_EQ(s.boundary_crc, 0x1234u);
  EXPECT_EQ(s.first_time, 90);
  EXPECT_EQ(s.last_time, 110);
  ASSERT_EQ(s.keys.size(), 3u);  // sorted by id
  EXPECT_EQ(Describe(s),
            "L0 seg 3 records 7 stats 5 other 2 damaged 0 end 2600 crc 00001234 time [90, 110]"
            " | 2: n=3 min=0 max=9 last=0 max-first"
            " | 4: n=1 min=2.5 max=2.5 last=2.5 min-first"
            " | 7: n=5 min=3 max=7 last=4 min-first");
}

TEST(SegmentAccumulator, WithoutStatsHasNoTimesAndNoKeys) {
  SegmentAccumulator acc(0);
  acc.AddOther(300);
  acc.AddOther(200);
  const SegmentSummary s = acc.Finish(7);
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.stats_records, 0u);
  EXPECT_EQ(s.other_records, 2u);
  EXPECT_EQ(s.first_time, 0);
  EXPECT_EQ(s.last_time, 0);
  EXPECT_TRUE(s.keys.empty());
  EXPECT_EQ(s.end_offset, 300u);

  SegmentAccumulator empty(5);
  const SegmentSummary none = empty.Finish(0);
  EXPECT_EQ(none.records, 0u);
  EXPECT_EQ(none.first_segment, 5u);
  EXPECT_EQ(none.end_offset, 0u);
}

TEST(SegmentAccumulator, AStatsRecordWithoutValuesStillCountsAndSetsTheTimes) {
  SegmentAccumulator acc(1);
  acc.AddStats(100, 50, nullptr, 0);
  const SegmentAccumulator::Value value{0, -2};
  acc.AddStats(200, 40, &value, 1);
  const SegmentSummary s = acc.Finish(0);
  EXPECT_EQ(s.stats_records, 2u);
  EXPECT_EQ(s.first_time, 40);
  EXPECT_EQ(s.last_time, 50);
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_EQ(s.keys[0].count, 1u);
}

// Whatever a segment's records are, the entry written for it must read back: a stats record that carries
// a key twice (W&B's format does not forbid it) counts once, with the later value, as a dict keeps it.
TEST(SegmentAccumulator, EveryAccumulatedSummaryReadsBack) {
  SegmentAccumulator acc(0);
  const std::vector<SegmentAccumulator::Value> twice = {{0, 5}, {1, 7}, {0, 2}};
  acc.AddStats(100, 1, twice.data(), twice.size());
  const std::vector<SegmentAccumulator::Value> again = {{0, 3}, {0, 9}};
  acc.AddStats(200, 2, again.data(), again.size());
  SummaryIndex index;
  index.keys = {"cpu", "mem"};
  index.levels = {{acc.Finish(0)}};
  const KeySummary& cpu = index.levels[0][0].keys[0];
  EXPECT_EQ(cpu.count, 2u);
  EXPECT_EQ(cpu.min, 2);
  EXPECT_EQ(cpu.max, 9);
  EXPECT_EQ(cpu.last, 9);
  EXPECT_EQ(index.levels[0][0].keys[1].count, 1u);
  const ParsedIndex parsed = Parse(EncodeIndex(index));
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(Describe(parsed.index), Describe(index));
}

TEST(SegmentAccumulator, AKeyTwiceInTheOnlyRecordReadsBack) {
  SegmentAccumulator acc(0);
  const std::vector<SegmentAccumulator::Value> twice = {{0, 1}, {0, 2}};
  acc.AddStats(100, 1, twice.data(), twice.size());
  SummaryIndex index;
  index.keys = {"cpu"};
  index.levels = {{acc.Finish(0)}};
  const ParsedIndex parsed = Parse(EncodeIndex(index));
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(Describe(parsed.index), Describe(index));
}

// ---- MergeSummary

KeySummary Key(uint32_t id, uint32_t count, float min, float max, float last, bool min_first) {
  return {id, count, min, max, last, min_first};
}

KeySummary MergedKey(const KeySummary& earlier, const KeySummary& later) {
  SegmentSummary parent = Summary(0, {earlier}, 10);
  MergeSummary(Summary(1, {later}, 10), parent);
  EXPECT_EQ(parent.keys.size(), 1u);
  return parent.keys.empty() ? KeySummary{} : parent.keys[0];
}

TEST(MergeSummary, TheLaterSidesNewExtremeDecidesTheOrder) {
  // Only a new minimum: it came after the maximum.
  KeySummary k = MergedKey(Key(0, 2, 1, 5, 5, true), Key(0, 3, 0, 4, 2, true));
  EXPECT_EQ(k.min, 0);
  EXPECT_EQ(k.max, 5);
  EXPECT_FALSE(k.min_first);
  EXPECT_EQ(k.count, 5u);
  EXPECT_EQ(k.last, 2);
  // Only a new maximum: it came after the minimum.
  k = MergedKey(Key(0, 2, 1, 5, 1, false), Key(0, 1, 3, 9, 9, false));
  EXPECT_EQ(k.min, 1);
  EXPECT_EQ(k.max, 9);
  EXPECT_TRUE(k.min_first);
  // Both new: the later side's own order.
  EXPECT_FALSE(MergedKey(Key(0, 1, 1, 5, 1, true), Key(0, 1, 0, 9, 0, false)).min_first);
  EXPECT_TRUE(MergedKey(Key(0, 1, 1, 5, 1, false), Key(0, 1, 0, 9, 9, true)).min_first);
  // Neither new: the earlier order stands (ties are not new extremes).
  EXPECT_FALSE(MergedKey(Key(0, 1, 0, 9, 0, false), Key(0, 1, 0, 9, 9, true)).min_first);
  EXPECT_TRUE(MergedKey(Key(0, 1, 0, 9, 9, true), Key(0, 1, 2, 3, 2, false)).min_first);
}

TEST(MergeSummary, MergesKeyListsInIdOrderAndSumsTheCounts) {
  SegmentSummary parent = Summary(0, {Key(1, 2, 0, 1, 1, true), Key(5, 1, 3, 3, 3, true)}, 4, 1);
  parent.damaged_bytes = 10;
  SegmentSummary child =
      Summary(1, {Key(0, 1, 7, 7, 7, false), Key(5, 2, -1, 2, 2, true), Key(9, 1, 4, 4, 4, false)}, 3, 2);
  child.damaged_bytes = 5;
  child.end_offset = 3 * kSegmentBytes;  // a record reaching into segment 2
  MergeSummary(child, parent);
  EXPECT_EQ(parent.records, 10u);
  EXPECT_EQ(parent.stats_records, 7u);
  EXPECT_EQ(parent.other_records, 3u);
  EXPECT_EQ(parent.damaged_bytes, 15u);
  EXPECT_EQ(parent.end_offset, 3 * kSegmentBytes);
  EXPECT_EQ(parent.first_time, 1700000000.0);
  EXPECT_EQ(parent.last_time, 1700000019.5);
  ASSERT_EQ(parent.keys.size(), 4u);
  EXPECT_EQ(Describe(parent).substr(Describe(parent).find(" | ")),
            " | 0: n=1 min=7 max=7 last=7 max-first"
            " | 1: n=2 min=0 max=1 last=1 min-first"
            " | 5: n=3 min=-1 max=3 last=2 max-first"
            " | 9: n=1 min=4 max=4 last=4 max-first");
}

TEST(MergeSummary, TimesComeOnlyFromSidesWithStats) {
  SegmentSummary parent;  // a fresh node
  SegmentSummary others = Summary(0, {}, 0, 3);
  others.first_time = 5;  // not stats times: ignored
  others.last_time = 6;
  MergeSummary(others, parent);
  EXPECT_EQ(parent.first_time, 0);
  EXPECT_EQ(parent.last_time, 0);
  MergeSummary(Summary(1, {}, 2), parent);
  EXPECT_EQ(parent.first_time, 1700000010.0);
  EXPECT_EQ(parent.last_time, 1700000019.5);
  SegmentSummary early = Summary(2, {}, 1);
  early.first_time = 1600000000;  // clocks go back
  early.last_time = 1600000001;
  MergeSummary(early, parent);
  EXPECT_EQ(parent.first_time, 1600000000.0);
  EXPECT_EQ(parent.last_time, 1700000019.5);
  MergeSummary(Summary(3, {}, 0, 1), parent);
  EXPECT_EQ(parent.first_time, 1600000000.0);
  EXPECT_EQ(parent.records, 7u);
}

TEST(MergeSummary, CountsSaturate) {
  const KeySummary k = MergedKey(Key(0, UINT32_MAX - 1, 0, 1, 1, true), Key(0, 5, 0, 1, 1, true));
  EXPECT_EQ(k.count, UINT32_MAX);
}

// ---- PyramidBuilder and RebuildPyramid

TEST(PyramidBuilder, CompletesANodeWhenASegmentPastItArrives) {
  PyramidBuilder pyramid;
  SegmentSummary expected_first;
  expected_first.level = 1;
  std::vector<SegmentSummary> segments;
  for (uint64_t segment = 0; segment <= 40; ++segment) {
    segments.push_back(
        Summary(segment, {Key(0, 1, static_cast<float>(segment), static_cast<float>(segment) + 1,
                              static_cast<float>(segment), true)}));
    if (segment < 16) MergeSummary(segments.back(), expected_first);
  }
  for (uint64_t segment = 0; segment <= 40; ++segment) {
    std::vector<SegmentSummary> completed;
    pyramid.Add(segments[segment], completed);
    if (segment == 16 || segment == 32) {
      ASSERT_EQ(completed.size(), 1u) << segment;
      EXPECT_EQ(completed[0].level, 1);
      EXPECT_EQ(completed[0].first_segment, segment - 16);
      if (segment == 16) EXPECT_EQ(Describe(completed[0]), Describe(expected_first));
    } else {
      EXPECT_TRUE(completed.empty()) << segment;
    }
  }
  EXPECT_EQ(expected_first.records, 16u);
  ASSERT_EQ(expected_first.keys.size(), 1u);
  EXPECT_EQ(expected_first.keys[0].count, 16u);
  EXPECT_EQ(expected_first.keys[0].min, 0);
  EXPECT_EQ(expected_first.keys[0].max, 16);
  EXPECT_EQ(expected_first.keys[0].last, 15);
  EXPECT_TRUE(expected_first.keys[0].min_first);
  EXPECT_EQ(expected_first.end_offset, 15 * kSegmentBytes + 500);
}

TEST(PyramidBuilder, CompletesTheLowerLevelFirstAndSkipsGaps) {
  PyramidBuilder pyramid;
  std::vector<SegmentSummary> completed;
  for (uint64_t segment = 0; segment < 256; ++segment) pyramid.Add(Summary(segment, {}), completed);
  EXPECT_EQ(completed.size(), 15u);  // [0,16) ... [224,240)
  completed.clear();
  pyramid.Add(Summary(256, {}), completed);
  ASSERT_EQ(completed.size(), 2u);
  EXPECT_EQ(completed[0].level, 1);
  EXPECT_EQ(completed[0].first_segment, 240u);
  EXPECT_EQ(completed[1].level, 2);
  EXPECT_EQ(completed[1].first_segment, 0u);
  EXPECT_EQ(completed[1].records, 256u);

  // Sparse segments: 0, 5, then 300 completes [0,16) and [0,256) at once.
  PyramidBuilder sparse;
  completed.clear();
  sparse.Add(Summary(0, {}), completed);
  sparse.Add(Summary(5, {}), completed);
  EXPECT_TRUE(completed.empty());
  sparse.Add(Summary(300, {}), completed);
  ASSERT_EQ(completed.size(), 2u);
  EXPECT_EQ(completed[0].level, 1);
  EXPECT_EQ(completed[0].first_segment, 0u);
  EXPECT_EQ(completed[0].records, 2u);
  EXPECT_EQ(completed[1].level, 2);
  EXPECT_EQ(completed[1].records, 2u);
}

TEST(RebuildPyramid, ReplacesTheUpperLevelsWithTheCompletedNodes) {
  SummaryIndex index = SyntheticIndex(300);
  ASSERT_EQ(index.levels.size(), 3u);
  EXPECT_EQ(index.levels[1].size(), 18u);  // [0,16) ... [272,288); [288,304) is open
  EXPECT_EQ(index.levels[2].size(), 1u);   // [0,256)
  for (size_t i = 0; i < index.levels[1].size(); ++i) {
    SegmentSummary expected;
    expected.level = 1;
    expected.first_segment = i * 16;
    for (uint64_t s = i * 16; s < i * 16 + 16; ++s) MergeSummary(index.levels[0][s], expected);
    EXPECT_EQ(Describe(index.levels[1][i]), Describe(expected));
  }
  SegmentSummary top;
  top.level = 2;
  for (size_t i = 0; i < 256; ++i) MergeSummary(index.levels[0][i], top);
  EXPECT_EQ(Describe(index.levels[2][0]), Describe(top));
  // A node built from the nodes below equals the one built from the segments.
  SegmentSummary from_nodes;
  from_nodes.level = 2;
  for (size_t i = 0; i < 16; ++i) MergeSummary(index.levels[1][i], from_nodes);
  EXPECT_EQ(Describe(from_nodes), Describe(top));

  SummaryIndex junk = index;
  junk.levels[1].resize(3);
  junk.levels.emplace_back(1, Summary(0, {}));
  RebuildPyramid(junk);
  EXPECT_EQ(Describe(junk), Describe(index));

  SummaryIndex none;
  RebuildPyramid(none);
  EXPECT_TRUE(none.levels.empty());
  SummaryIndex few = SyntheticIndex(16);
  EXPECT_EQ(few.levels.size(), 1u);
}

// ---- EncodeIndex and ParseIndex round trips

TEST(SummaryIndexRoundTrip, EncodeThenParseGivesBackTheIndex) {
  for (const uint64_t segments : {0u, 1u, 15u, 16u, 17u, 300u}) {
    const SummaryIndex index = SyntheticIndex(segments);
    const std::string bytes = EncodeIndex(index);
    const ParsedIndex parsed = Parse(bytes);
    EXPECT_EQ(parsed.problem, "") << segments;
    EXPECT_EQ(parsed.valid_bytes, bytes.size()) << segments;
    EXPECT_EQ(Describe(parsed.index), Describe(index)) << segments;
  }
  // Sparse segments and a pyramid over them.
  const SummaryIndex sparse = SyntheticIndex(40, 11);
  ASSERT_GE(sparse.levels.size(), 3u);
  const ParsedIndex parsed = Parse(EncodeIndex(sparse));
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(Describe(parsed.index), Describe(sparse));
}

TEST(SummaryIndexRoundTrip, KeysOnlyAndEmpty) {
  SummaryIndex keys_only;
  keys_only.keys = {"cpu", "memory_percent", "gpu.0.gpu"};
  ParsedIndex parsed = Parse(EncodeIndex(keys_only));
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(parsed.index.keys, keys_only.keys);
  EXPECT_TRUE(parsed.index.levels.empty());

  parsed = Parse(Header());
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(parsed.valid_bytes, kIndexHeaderSize);
  EXPECT_TRUE(parsed.index.keys.empty());
  EXPECT_TRUE(parsed.index.levels.empty());
}

TEST(SummaryIndexRoundTrip, ExtremeButValidValuesSurvive) {
  SummaryIndex index;
  index.keys = {"a", "b"};
  SegmentSummary s =
      Summary(1000000,
              {Key(0, UINT32_MAX, -std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
                   -0.0f, false),
               Key(1, 1, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::denorm_min(),
                   std::numeric_limits<float>::denorm_min(), true)},
              UINT32_MAX, 3);
  s.damaged_bytes = UINT64_MAX;
  s.end_offset = UINT64_MAX;
  s.boundary_crc = UINT32_MAX;
  s.first_time = -1e300;
  s.last_time = 1e300;
  index.levels = {{s}};
  const ParsedIndex parsed = Parse(EncodeIndex(index));
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(Describe(parsed.index), Describe(index));
  ASSERT_EQ(parsed.index.segments().size(), 1u);
  EXPECT_TRUE(std::signbit(parsed.index.segments()[0].keys[0].last));
}

// The recorder's order: the keys a segment first uses just before its entry, the nodes it completes after.
TEST(SummaryIndexRoundTrip, EntriesAppendedAsTheRecorderDoesParseToTheSameIndex) {
  const SummaryIndex index = SyntheticIndex(40);
  std::string appended = EncodeIndexHeader();
  std::string keys_first = EncodeIndexHeader();
  for (const std::string& key : index.keys) AppendKeyEntry(key, keys_first);
  size_t named = 0;
  PyramidBuilder pyramid;
  for (const SegmentSummary& segment : index.segments()) {
    for (const KeySummary& key : segment.keys) {
      while (named <= key.key) AppendKeyEntry(index.keys[named++], appended);
    }
    AppendSummaryEntry(segment, appended);
    AppendSummaryEntry(segment, keys_first);
    std::vector<SegmentSummary> completed;
    pyramid.Add(segment, completed);
    for (const SegmentSummary& node : completed) {
      AppendSummaryEntry(node, appended);
      AppendSummaryEntry(node, keys_first);
    }
  }
  EXPECT_EQ(keys_first, EncodeIndex(index));  // EncodeIndex puts a node where the recorder does
  const ParsedIndex parsed = Parse(appended);
  EXPECT_EQ(parsed.problem, "");
  EXPECT_EQ(Describe(parsed.index), Describe(index));
}

// ---- ParseIndex on damage

// A small index and where each of its entries ends, with what the index holds up to there.
struct SmallIndex {
  std::string bytes;
  std::vector<size_t> boundaries;  // after the header and after each entry
  std::vector<size_t> keys_at;     // keys named up to each boundary
  std::vector<size_t> segments_at;
  SummaryIndex index;
};

SmallIndex MakeSmallIndex() {
  SmallIndex small;
  small.index.keys = {"cpu", "memory_percent", "disk.in"};
  small.index.levels = {{Summary(0, {Key(0, 2, 1, 2, 2, true), Key(1, 2, 40, 41, 40, false)}, 2),
                         Summary(1, {Key(0, 1, 3, 3, 3, true), Key(2, 1, 0, 0, 0, true)}, 1, 1),
                         Summary(3, {}, 0, 2)}};
  small.bytes = EncodeIndexHeader();
  auto mark = [&](size_t keys, size_t segments) {
    small.boundaries.push_back(small.bytes.size());
    small.keys_at.push_back(keys);
    small.segments_at.push_back(segments);
  };
  mark(0, 0);
  AppendKeyEntry("cpu", small.bytes);
  mark(1, 0);
  AppendKeyEntry("memory_percent", small.bytes);
  mark(2, 0);
  AppendSummaryEntry(small.index.levels[0][0], small.bytes);
  mark(2, 1);
  AppendKeyEntry("disk.in", small.bytes);
  mark(3, 1);
  AppendSummaryEntry(small.index.levels[0][1], small.bytes);
  mark(3, 2);
  AppendSummaryEntry(small.index.levels[0][2], small.bytes);
  mark(3, 3);
  return small;
}

TEST(ParseIndexDamage, TruncatedAtEveryLengthKeepsExactlyTheWholeEntries) {
  const SmallIndex small = MakeSmallIndex();
  ASSERT_EQ(Describe(Parse(small.bytes).index), Describe(small.index));
  for (size_t length = 0; length <= small.bytes.size(); ++length) {
    const ParsedIndex parsed = Parse(std::string_view(small.bytes).substr(0, length));
    if (length < kIndexHeaderSize) {
      EXPECT_EQ(parsed.valid_bytes, 0u) << length;
      EXPECT_FALSE(parsed.problem.empty()) << length;
      EXPECT_TRUE(parsed.index.keys.empty() && parsed.index.levels.empty()) << length;
      continue;
    }
    size_t at = 0;
    while (at + 1 < small.boundaries.size() && small.boundaries[at + 1] <= length) ++at;
    EXPECT_EQ(parsed.valid_bytes, small.boundaries[at]) << length;
    EXPECT_EQ(parsed.problem.empty(), length == small.boundaries[at]) << length << ": " << parsed.problem;
    EXPECT_EQ(parsed.index.keys.size(), small.keys_at[at]) << length;
    EXPECT_EQ(parsed.index.segments().size(), small.segments_at[at]) << length;
    for (size_t i = 0; i < parsed.index.segments().size(); ++i) {
      EXPECT_EQ(Describe(parsed.index.segments()[i]), Describe(small.index.segments()[i])) << length;
    }
  }
}

TEST(ParseIndexDamage, AFlippedByteEndsThePrefixAtItsEntry) {
  const SmallIndex small = MakeSmallIndex();
  for (size_t at = kIndexHeaderSize; at < small.bytes.size(); ++at) {
    for (const int mask : {0x01, 0x80, 0xFF}) {
      std::string bytes = small.bytes;
      bytes[at] = static_cast<char>(bytes[at] ^ mask);
      size_t entry = 0;
      while (small.boundaries[entry + 1] <= at) ++entry;
      const ParsedIndex parsed = Parse(bytes);
      EXPECT_EQ(parsed.valid_bytes, small.boundaries[entry]) << "byte " << at << " ^ " << mask;
      EXPECT_FALSE(parsed.problem.empty()) << "byte " << at;
      EXPECT_EQ(parsed.index.keys.size(), small.keys_at[entry]) << "byte " << at;
      EXPECT_EQ(parsed.index.segments().size(), small.segments_at[entry]) << "byte " << at;
    }
  }
}

TEST(ParseIndexDamage, AnotherFileOrVersionIsRefusedWhole) {
  const SmallIndex small = MakeSmallIndex();
  std::string bytes = small.bytes;
  bytes[0] = 'X';
  ParsedIndex parsed = Parse(bytes);
  EXPECT_EQ(parsed.valid_bytes, 0u);
  EXPECT_EQ(parsed.problem, "not a runmon summary index");
  EXPECT_TRUE(parsed.index.keys.empty());
  for (const size_t at : {4, 5, 6, 7}) {  // version, segment size, fanout, reserved
    bytes = small.bytes;
    bytes[at] = static_cast<char>(bytes[at] + 1);
    parsed = Parse(bytes);
    EXPECT_EQ(parsed.valid_bytes, 0u) << at;
    EXPECT_EQ(parsed.problem, "another version or segment size") << at;
    EXPECT_TRUE(parsed.index.keys.empty() && parsed.index.levels.empty()) << at;
  }
  parsed = Parse("");
  EXPECT_EQ(parsed.problem, "shorter than its header");
  parsed = Parse(std::string(1 << 16, '\0'));
  EXPECT_EQ(parsed.valid_bytes, 0u);
  EXPECT_FALSE(parsed.problem.empty());
}

TEST(ParseIndexDamage, UnknownEntryTypeAndEmptyKey) {
  const std::string base = WithKeys({"cpu"});
  ExpectRefusedAt(base + Framed(3, "future"), base.size(), "unknown type 3");
  ExpectRefusedAt(base + Framed(0, ""), base.size(), "unknown type 0");
  ExpectRefusedAt(base + KeyEntry(""), base.size(), "an empty key name");
  // A good entry after the bad one is not used either.
  ExpectRefusedAt(base + Framed(9, "x") + KeyEntry("mem"), base.size(), "unknown type");
}

TEST(ParseIndexDamage, KeyIdsMustBeNamedFirst) {
  const std::string base = WithKeys({"cpu", "mem"});
  RawSummary raw = RawSegment(0);
  raw.keys = {{0, 1, 1, 1, 1, 1}, {2, 1, 1, 1, 1, 1}};  // ids 0 and 2: 2 is not named
  ExpectRefusedAt(base + raw.Entry(), base.size(), "a key id the index has not named");
  raw.keys = {{1, 1, 1, 1, 1, 1}};
  EXPECT_EQ(Parse(base + raw.Entry()).problem, "");
  // Named later is too late.
  raw.keys = {{2, 1, 1, 1, 1, 1}};
  ExpectRefusedAt(base + raw.Entry() + KeyEntry("disk"), base.size(), "not named");
  // More keys than named.
  raw.keys = {{0, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}};
  ExpectRefusedAt(base + raw.Entry(), base.size(), "more keys than the index names");
  raw.keys = {};
  raw.key_count = 1000000000;  // no allocation for a count the index cannot hold
  ExpectRefusedAt(base + raw.Entry(), base.size(), "more keys than the index names");
}

TEST(ParseIndexDamage, KeysListedTwiceAreRefused) {
  const std::string base = WithKeys({"cpu", "mem", "disk"});
  RawSummary raw = RawSegment(0);
  raw.keys = {{1, 1, 1, 1, 1, 1}, {0, 1, 2, 2, 2, 1}};
  ExpectRefusedAt(base + raw.Entry(), base.size(), "a key listed twice");
}

// Ids are written as deltas; a delta that wraps around 2^64 must not take an id back (out of order) or to
// one listed already.
TEST(ParseIndexDamage, KeysOutOfOrderAreRefused) {
  const std::string base = WithKeys({"cpu", "mem", "disk"});
  RawSummary raw = RawSegment(0);
  raw.keys = {{2, 1, 1, 1, 1, 1}, {UINT64_MAX, 1, 2, 2, 2, 1}};  // ids 2, then 1
  ParsedIndex parsed = Parse(base + raw.Entry());
  EXPECT_EQ(parsed.valid_bytes, base.size()) << Describe(parsed.index);
  EXPECT_FALSE(parsed.problem.empty());
  raw.keys = {{1, 1, 1, 1, 1, 1}, {UINT64_MAX, 1, 2, 2, 2, 1}, {1, 1, 3, 3, 3, 1}};  // ids 1, 0, 1
  parsed = Parse(base + raw.Entry());
  EXPECT_EQ(parsed.valid_bytes, base.size()) << Describe(parsed.index);
  EXPECT_FALSE(parsed.problem.empty());
}

TEST(ParseIndexDamage, AKeyNamedTwiceIsRefused) {
  // Readers map names back to ids with a KeyTable, which gives a name one id: a second entry of the same
  // name would shift every later id.
  const std::string base = WithKeys({"cpu", "mem"});
  ExpectRefusedAt(base + KeyEntry("cpu") + KeyEntry("disk"), base.size(), "");
  EXPECT_FALSE(Parse(base + KeyEntry("cpu")).problem.empty());
}

TEST(ParseIndexDamage, SegmentsMustComeInOrder) {
  const std::string base = WithKeys({"cpu"});
  const std::string three = base + RawSegment(3).Entry();
  ExpectRefusedAt(three + RawSegment(2).Entry(), three.size(), "entries out of order");
  ExpectRefusedAt(three + RawSegment(3).Entry(), three.size(), "entries out of order");
  EXPECT_EQ(Parse(three + RawSegment(4).Entry() + RawSegment(100).Entry()).problem, "");
}

TEST(ParseIndexDamage, NodesOnlyOnceTheirSegmentsAreSettled) {
  std::string bytes = WithKeys({"cpu"});
  for (uint64_t s = 0; s < 16; ++s) bytes += RawSegment(s).Entry();
  RawSummary node = RawSegment(0);
  node.level = 1;
  node.records = node.stats_records = 16;
  node.keys = {{0, 16, 1, 1, 1, 1}};
  // Segment 15 is the last in: the node could still change (segment 15 is not settled by the index).
  ExpectRefusedAt(bytes + node.Entry(), bytes.size(), "a node before its segments are settled");
  const std::string settled = bytes + RawSegment(16).Entry();
  ParsedIndex parsed = Parse(settled + node.Entry());
  EXPECT_EQ(parsed.problem, "");
  ASSERT_EQ(parsed.index.levels.size(), 2u);
  EXPECT_EQ(parsed.index.levels[1].size(), 1u);
  // A second node of the same span, and a node over segments not in yet.
  const std::string with_node = settled + node.Entry();
  ExpectRefusedAt(with_node + node.Entry(), with_node.size(), "entries out of order");
  RawSummary next = node;
  next.first_segment = 16;
  ExpectRefusedAt(with_node + next.Entry(), with_node.size(), "a node before its segments are settled");
  // A node above a level that has no node yet.
  RawSummary high = node;
  high.level = 2;
  ExpectRefusedAt(settled + high.Entry(), settled.size(), "a node above a level that is missing");
  // A node before any segment.
  const std::string keys = WithKeys({"cpu"});
  ExpectRefusedAt(keys + node.Entry(), keys.size(), "");
  // A node that does not start its span, and a level past the top.
  RawSummary misaligned = node;
  misaligned.first_segment = 8;
  ExpectRefusedAt(settled + misaligned.Entry(), settled.size(), "a node that does not start its span");
  RawSummary too_high = node;
  too_high.level = kMaxLevels;
  ExpectRefusedAt(settled + too_high.Entry(), settled.size(), "level 6 is too high");
  RawSummary far = RawSegment(0);
  far.first_segment = UINT64_MAX / 2;
  const std::string base = WithKeys({"cpu"});
  ExpectRefusedAt(base + far.Entry(), base.size(), "a segment number beyond any log");
}

TEST(ParseIndexDamage, CountsThatDoNotAddUp) {
  const std::string base = WithKeys({"cpu"});
  RawSummary raw = RawSegment(0);
  raw.records = 2;  // 1 stats + 0 others
  ExpectRefusedAt(base + raw.Entry(), base.size(), "record counts do not add up");
  raw = RawSegment(0);
  raw.keys[0].count = 2;  // more values than stats records
  ExpectRefusedAt(base + raw.Entry(), base.size(), "a key count beyond the stats records");
  raw.keys[0].count = 0;
  ExpectRefusedAt(base + raw.Entry(), base.size(), "a key count beyond the stats records");
  raw = RawSegment(0);
  raw.stats_records = 0;
  raw.records = 0;
  ExpectRefusedAt(base + raw.Entry(), base.size(), "a key count beyond the stats records");
}

TEST(ParseIndexDamage, CountsThatOnlyAddUpByWrappingAroundAreRefused) {
  const std::string base = WithKeys({"cpu"});
  RawSummary raw = RawSegment(0);
  raw.stats_records = UINT64_MAX;
  raw.other_records = 2;
  raw.records = 1;  // UINT64_MAX + 2 wraps to 1
  raw.keys[0].count = 1000;
  const ParsedIndex parsed = Parse(base + raw.Entry());
  EXPECT_EQ(parsed.valid_bytes, base.size()) << Describe(parsed.index);
  EXPECT_FALSE(parsed.problem.empty());
}

TEST(ParseIndexDamage, AKeyCountBeyond32BitsIsRefused) {
  // The count is kept in 32 bits: 2^32 would read back as 0 (and the entry re-encoded would not parse).
  const std::string base = WithKeys({"cpu"});
  RawSummary raw = RawSegment(0);
  raw.stats_records = raw.records = uint64_t{1} << 33;
  raw.keys[0].count = uint64_t{1} << 32;
  const ParsedIndex parsed = Parse(base + raw.Entry());
  EXPECT_EQ(parsed.valid_bytes, base.size()) << Describe(parsed.index);
  EXPECT_FALSE(parsed.problem.empty());
}

TEST(ParseIndexDamage, NonFiniteOrImpossibleValues) {
  const std::string base = WithKeys({"cpu"});
  for (const RawKey& key : std::vector<RawKey>{{0, 1, kNaN, 1, 1, 1},
                                               {0, 1, 0, kNaN, 0, 1},
                                               {0, 1, 0, 1, kNaN, 1},
                                               {0, 1, -kInf, 1, 0, 1},
                                               {0, 1, 0, kInf, 0, 1},
                                               {0, 1, 0, 1, kInf, 1},
                                               {0, 1, 2, 1, 1, 1},  // min > max
                                               {0, 1, 1, 1, 1, 2}}) {
    RawSummary raw = RawSegment(0);
    raw.keys = {key};
    ExpectRefusedAt(base + raw.Entry(), base.size(), "impossible key values");
  }
  for (const auto& [first, last] : std::vector<std::pair<double, double>>{
           {std::nan(""), 1}, {1, std::nan("")}, {-HUGE_VAL, 1}, {1, HUGE_VAL}, {5, 4}}) {
    RawSummary raw = RawSegment(0);
    raw.first_time = first;
    raw.last_time = last;
    ExpectRefusedAt(base + raw.Entry(), base.size(), "an impossible time range");
  }
}

TEST(ParseIndexDamage, MalformedPayloads) {
  const std::string base = WithKeys({"cpu"});
  const std::string payload = RawSegment(0).Payload();
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    ExpectRefusedAt(base + Framed(2, payload.substr(0, cut)), base.size(), "a truncated summary");
  }
  RawSummary raw = RawSegment(0);
  raw.trailing = "x";
  ExpectRefusedAt(base + raw.Entry(), base.size(), "bytes after a summary");
  // A varint of 11 bytes.
  ExpectRefusedAt(base + Framed(2, std::string(11, '\x80') + payload), base.size(), "a truncated summary");
}

TEST(ParseIndexDamage, OversizedLengthFields) {
  const std::string base = WithKeys({"cpu"}) + RawSegment(0).Entry();
  std::string huge = base;
  PutU32(0xFFFFFFFF, huge);
  PutU32(0, huge);
  huge.push_back(1);
  huge += "abc";
  ExpectRefusedAt(huge, base.size(), "a torn last entry");

  // Longer than any entry the index writes, with that many bytes present (16 MiB and a byte).
  std::string long_entry = base;
  PutU32(kMaxIndexEntryBytes + 1, long_entry);
  PutU32(0, long_entry);
  long_entry.push_back(1);
  long_entry.resize(long_entry.size() + kMaxIndexEntryBytes + 1, 'k');
  ExpectRefusedAt(long_entry, base.size(), "an entry longer than any index writes");

  // A header cut inside the 9 bytes of an entry's frame.
  for (size_t part = 1; part < 9; ++part) {
    ExpectRefusedAt(base + KeyEntry("mem").substr(0, part), base.size(), "a torn last entry");
  }
}

}  // namespace
}  // namespace runmon::runlog
