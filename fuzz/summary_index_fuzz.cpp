// Fuzzes the summary index's parser (ParseIndex, summary_index.hpp) and its encoder. The first input byte
// mod 3 picks the mode:
//   1 (as 'R' = 0x52, a real index's first byte): the whole input is an index file.
//   0: the rest lists entries, each [u8 type][u16 length, little-endian][payload] (the length cut to what is
//     left), which the target frames ([u32 length][u32 CRC-32 of type and payload][u8 type][payload]) after a
//     correct header, so mutations reach the entries' payloads past their checksums.
//   2: the rest describes records in segments (ops: another record, a stats record of up to 8 distinct keys,
//     damaged bytes, a jump of 1 to 250,048 segments; at most 32 segments), summed with KeyTable and
//     SegmentAccumulator, with nodes from RebuildPyramid, encoded with EncodeIndex.
// Checks on whatever ParseIndex returns: the valid prefix lies within the input, the problem is empty
// exactly when every byte checked out, and the prefix alone parses to the same index without a problem, as
// does the file cut after each of its first 64 valid entries, to a prefix of that index (so each entry meets
// the checks against the entries before it: a node settled by the segments already in); key names are
// non-empty and distinct; every entry keeps what the parser checks (level below kMaxLevels, a
// node starting its span, record counts that add up, a finite time range in order, key ids ascending and
// named, 1 <= count <= stats records, finite values with min <= max); a level's entries are in segment
// order without overlap, every node is settled (a segment past it is in) and no level but the last is
// empty. EncodeIndex of the parsed index parses back to the same index (nothing left over) whenever the
// levels' first nodes end in level order (otherwise the encoder may write a coarse node ahead of every finer
// one, which ParseIndex refuses: then only a per-level prefix comes back). Built indexes (mode 2) must in
// addition hold what their records say: per segment and per node the counts, times, end offset, and per
// key the count, min, max, last value and whether the minimum came first, against a model that keeps each
// key's values in order; a node exists exactly for a span holding a segment with a segment past it; the
// encoded file parses back to the same index, and cut at an input-derived point to a prefix of it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "fuzz_check.hpp"
#include "runlog/log_format.hpp"
#include "runlog/summary_index.hpp"

namespace {

using namespace runmon::runlog;

constexpr size_t kMaxBuiltSegments = 32;

bool SameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}
bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

bool SameKey(const KeySummary& a, const KeySummary& b) {
  return a.key == b.key && a.count == b.count && SameBits(a.min, b.min) && SameBits(a.max, b.max) &&
         SameBits(a.last, b.last) && a.min_first == b.min_first;
}

bool SameSummary(const SegmentSummary& a, const SegmentSummary& b) {
  if (a.level != b.level || a.first_segment != b.first_segment || a.records != b.records ||
      a.stats_records != b.stats_records || a.other_records != b.other_records ||
      a.damaged_bytes != b.damaged_bytes || a.end_offset != b.end_offset ||
      a.boundary_crc != b.boundary_crc || !SameBits(a.first_time, b.first_time) ||
      !SameBits(a.last_time, b.last_time) || a.keys.size() != b.keys.size())
    return false;
  for (size_t i = 0; i < a.keys.size(); ++i) {
    if (!SameKey(a.keys[i], b.keys[i])) return false;
  }
  return true;
}

// Levels without the empty ones at the top (ParseIndex may leave one behind the entry that ended it).
size_t UsedLevels(const SummaryIndex& index) {
  size_t used = index.levels.size();
  while (used > 0 && index.levels[used - 1].empty()) --used;
  return used;
}

bool SameIndex(const SummaryIndex& a, const SummaryIndex& b) {
  if (a.keys != b.keys || UsedLevels(a) != UsedLevels(b)) return false;
  for (size_t level = 0; level < UsedLevels(a); ++level) {
    const auto& x = a.levels[level];
    const auto& y = b.levels[level];
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!SameSummary(x[i], y[i])) return false;
    }
  }
  return true;
}

// `prefix` holds the first keys and, level by level, the first entries of `full`.
bool IsPrefixIndex(const SummaryIndex& prefix, const SummaryIndex& full) {
  if (prefix.keys.size() > full.keys.size() ||
      !std::equal(prefix.keys.begin(), prefix.keys.end(), full.keys.begin()))
    return false;
  if (UsedLevels(prefix) > UsedLevels(full)) return false;
  for (size_t level = 0; level < UsedLevels(prefix); ++level) {
    const auto& x = prefix.levels[level];
    const auto& y = full.levels[level];
    if (x.size() > y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!SameSummary(x[i], y[i])) return false;
    }
  }
  return true;
}

void CheckSummary(const SegmentSummary& s, size_t level, size_t key_names) {
  FUZZ_CHECK(s.level == static_cast<int>(level));
  FUZZ_CHECK(s.level >= 0 && s.level < kMaxLevels);
  FUZZ_CHECK(s.first_segment <= (std::numeric_limits<uint64_t>::max() / kSegmentBytes) / 2);
  FUZZ_CHECK(s.segment_span() >= 1 && s.first_segment % s.segment_span() == 0);
  FUZZ_CHECK(s.stats_records <= s.records && s.records - s.stats_records == s.other_records);
  FUZZ_CHECK(std::isfinite(s.first_time) && std::isfinite(s.last_time) && s.first_time <= s.last_time);
  for (size_t i = 0; i < s.keys.size(); ++i) {
    const KeySummary& key = s.keys[i];
    FUZZ_CHECK(i == 0 || s.keys[i - 1].key < key.key);
    FUZZ_CHECK(key.key < key_names);
    FUZZ_CHECK(key.count >= 1 && key.count <= s.stats_records);
    FUZZ_CHECK(std::isfinite(key.min) && std::isfinite(key.max) && std::isfinite(key.last));
    FUZZ_CHECK(key.min <= key.max);
  }
}

void CheckWellFormed(const SummaryIndex& index) {
  std::unordered_set<std::string_view> names;
  for (const std::string& name : index.keys) {
    FUZZ_CHECK(!name.empty());
    FUZZ_CHECK(names.insert(name).second);
  }
  FUZZ_CHECK(index.levels.size() <= static_cast<size_t>(kMaxLevels));
  FUZZ_CHECK(index.levels.empty() || !index.levels[0].empty());
  const uint64_t covered = index.covered_segments();
  FUZZ_CHECK(covered == (index.segments().empty() ? 0 : index.segments().back().first_segment + 1));
  for (size_t level = 0; level < index.levels.size(); ++level) {
    const auto& entries = index.levels[level];
    FUZZ_CHECK(!entries.empty() || level + 1 == index.levels.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const SegmentSummary& s = entries[i];
      CheckSummary(s, level, index.keys.size());
      if (i > 0) FUZZ_CHECK(s.first_segment >= entries[i - 1].first_segment + entries[i - 1].segment_span());
      if (level > 0) FUZZ_CHECK(s.first_segment + s.segment_span() < covered);  // settled
    }
  }
}

// Whether EncodeIndex's order (a node right after the first segment past it, lowest level first) brings
// each level's first node before the first node of the level above, as ParseIndex needs.
bool EncoderOrderHolds(const SummaryIndex& index) {
  for (size_t level = 2; level < UsedLevels(index); ++level) {
    const SegmentSummary& below = index.levels[level - 1].front();
    const SegmentSummary& above = index.levels[level].front();
    if (below.first_segment + below.segment_span() > above.first_segment + above.segment_span()) return false;
  }
  return true;
}

uint32_t GetU32(std::string_view bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value |= uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return value;
}

enum class Depth {
  kBasic,      // what ParseIndex returned
  kRoundTrip,  // and the valid prefix alone, and EncodeIndex's file of the index
  kEntries,    // and the file cut after each of its first kMaxCuts valid entries
};
constexpr int kMaxCuts = 64;

void CheckParsed(std::string_view bytes, const ParsedIndex& parsed, Depth depth) {
  FUZZ_CHECK(parsed.valid_bytes <= bytes.size());
  const bool header_ok =
      bytes.size() >= kIndexHeaderSize && bytes.substr(0, kIndexHeaderSize) == EncodeIndexHeader();
  FUZZ_CHECK(header_ok == (parsed.valid_bytes >= kIndexHeaderSize));
  if (!header_ok) {
    FUZZ_CHECK(parsed.valid_bytes == 0);
    FUZZ_CHECK(parsed.index.keys.empty() && parsed.index.levels.empty());
  }
  FUZZ_CHECK(parsed.problem.empty() == (header_ok && parsed.valid_bytes == bytes.size()));
  CheckWellFormed(parsed.index);

  if (depth == Depth::kBasic || !header_ok) return;
  if (parsed.valid_bytes < bytes.size()) {
    const std::string_view prefix = bytes.substr(0, static_cast<size_t>(parsed.valid_bytes));
    const ParsedIndex again = ParseIndex(prefix);
    FUZZ_CHECK(again.problem.empty());
    FUZZ_CHECK(again.valid_bytes == parsed.valid_bytes);
    FUZZ_CHECK(SameIndex(again.index, parsed.index));
  }

  if (depth == Depth::kEntries) {
    // Every entry is checked against the entries before it (a node settled by the segments already in): each
    // cut at an entry's end parses, without a problem, to a prefix of the whole that is well formed itself.
    size_t at = kIndexHeaderSize;
    for (int cut = 0; cut < kMaxCuts && at + 9 <= parsed.valid_bytes; ++cut) {
      at += 9 + GetU32(bytes, at);
      FUZZ_CHECK(at <= parsed.valid_bytes);
      const ParsedIndex part = ParseIndex(bytes.substr(0, at));
      FUZZ_CHECK(part.problem.empty() && part.valid_bytes == at);
      CheckWellFormed(part.index);
      FUZZ_CHECK(IsPrefixIndex(part.index, parsed.index));
    }
  }

  const std::string encoded = EncodeIndex(parsed.index);
  const ParsedIndex back = ParseIndex(encoded);
  CheckParsed(encoded, back, Depth::kBasic);
  if (EncoderOrderHolds(parsed.index)) {
    FUZZ_CHECK(back.problem.empty());
    FUZZ_CHECK(back.valid_bytes == encoded.size());
    FUZZ_CHECK(SameIndex(back.index, parsed.index));
    FUZZ_CHECK(EncodeIndex(back.index) == encoded);
  } else {
    FUZZ_CHECK(back.index.keys == parsed.index.keys);
    FUZZ_CHECK(IsPrefixIndex(back.index, parsed.index));
  }
}

void PutU32(uint32_t value, std::string& out) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

// Mode 0: entries framed with correct checksums.
std::string FrameEntries(std::string_view spec) {
  std::string file = EncodeIndexHeader();
  size_t at = 0;
  while (at + 3 <= spec.size()) {
    const char type = spec[at];
    const size_t length = static_cast<unsigned char>(spec[at + 1]) |
                          static_cast<size_t>(static_cast<unsigned char>(spec[at + 2])) << 8;
    at += 3;
    const std::string_view payload = spec.substr(at, std::min(length, spec.size() - at));
    at += payload.size();
    PutU32(static_cast<uint32_t>(payload.size()), file);
    PutU32(Crc32(Crc32(0, std::string_view(&type, 1)), payload), file);
    file.push_back(type);
    file.append(payload);
  }
  return file;
}

// Mode 2's model of a summary: every key's values in record order.
struct Model {
  uint64_t first_segment = 0;
  uint64_t records = 0;
  uint64_t stats_records = 0;
  uint64_t other_records = 0;
  uint64_t damaged_bytes = 0;
  uint64_t end_offset = 0;
  uint32_t boundary_crc = 0;
  std::optional<double> first_time;
  double last_time = 0;
  std::map<uint32_t, std::vector<float>> values;

  void Merge(const Model& later) {
    records += later.records;
    stats_records += later.stats_records;
    other_records += later.other_records;
    damaged_bytes += later.damaged_bytes;
    end_offset = std::max(end_offset, later.end_offset);
    if (later.first_time) {
      first_time = first_time ? std::min(*first_time, *later.first_time) : *later.first_time;
      last_time = std::max(last_time, later.last_time);
    }
    for (const auto& [key, list] : later.values) {
      auto& mine = values[key];
      mine.insert(mine.end(), list.begin(), list.end());
    }
  }
};

void CheckAgainstModel(const SegmentSummary& s, const Model& model, bool level0) {
  FUZZ_CHECK(s.records == model.records);
  FUZZ_CHECK(s.stats_records == model.stats_records);
  FUZZ_CHECK(s.other_records == model.other_records);
  FUZZ_CHECK(s.damaged_bytes == model.damaged_bytes);
  FUZZ_CHECK(s.end_offset == model.end_offset);
  if (level0) FUZZ_CHECK(s.boundary_crc == model.boundary_crc);
  FUZZ_CHECK(s.first_time == model.first_time.value_or(0));
  FUZZ_CHECK(s.last_time == (model.first_time ? model.last_time : 0));
  FUZZ_CHECK(s.keys.size() == model.values.size());
  size_t i = 0;
  for (const auto& [id, list] : model.values) {
    const KeySummary& key = s.keys[i++];
    FUZZ_CHECK(key.key == id);
    FUZZ_CHECK(key.count == list.size());
    const auto min = std::min_element(list.begin(), list.end());  // the first of equal minima
    const auto max = std::max_element(list.begin(), list.end());  // the first of equal maxima
    FUZZ_CHECK(key.min == *min);
    FUZZ_CHECK(key.max == *max);
    FUZZ_CHECK(key.last == list.back());
    FUZZ_CHECK(key.min_first == (min <= max));
  }
}

void Build(std::string_view spec) {
  KeyTable table;
  SummaryIndex index;
  index.levels.emplace_back();
  std::vector<Model> models;
  uint64_t segment = 0;
  std::optional<SegmentAccumulator> open;
  Model model;
  model.first_segment = 0;
  auto finish = [&] {
    if (!open) return;
    model.boundary_crc = static_cast<uint32_t>(segment * 2654435761u) ^ 0x5A5A5A5Au;
    SegmentSummary summary = open->Finish(model.boundary_crc);
    summary.damaged_bytes = model.damaged_bytes;
    index.levels[0].push_back(std::move(summary));
    models.push_back(std::move(model));
    open.reset();
  };
  size_t at = 0;
  auto next = [&]() -> uint8_t { return at < spec.size() ? static_cast<uint8_t>(spec[at++]) : 0; };
  while (at < spec.size() && models.size() < kMaxBuiltSegments) {
    const uint8_t op = next();
    if ((op & 3) == 2) {
      finish();
      const uint64_t step = op >> 2;
      const uint64_t jump = 1 + step * step * step;
      segment += jump;
      continue;
    }
    if (!open) {
      open.emplace(segment);
      model = Model{};
      model.first_segment = segment;
      FUZZ_CHECK(open->segment() == segment);
    }
    const uint64_t end = segment * kSegmentBytes + 7 + uint64_t{next()} * 1031;
    if ((op & 3) == 0) {
      open->AddOther(end);
      ++model.records;
      ++model.other_records;
      model.end_offset = std::max(model.end_offset, end);
    } else if ((op & 3) == 1) {
      const uint8_t mask = next();
      const double time = 1.7e9 + next() * 0.25;
      std::vector<SegmentAccumulator::Value> values;
      for (int bit = 0; bit < 8; ++bit) {
        if ((mask >> bit & 1) == 0) continue;
        const std::string name = "key." + std::to_string(((op >> 2) & 3) * 8 + bit);
        bool added = false;
        const size_t before = table.size();
        const uint32_t id = table.Id(name, &added);
        FUZZ_CHECK(added == (table.size() == before + 1));
        FUZZ_CHECK(id < table.size() && table.names()[id] == name);
        FUZZ_CHECK(table.Id(name) == id);
        const float value = static_cast<float>(static_cast<int8_t>(next())) * 0.5f;
        values.push_back({id, value});
        model.values[id].push_back(value);
      }
      open->AddStats(end, time, values.data(), values.size());
      ++model.records;
      ++model.stats_records;
      model.end_offset = std::max(model.end_offset, end);
      model.first_time = model.first_time ? std::min(*model.first_time, time) : time;
      model.last_time = std::max(model.last_time, time);
    } else {
      model.damaged_bytes += uint64_t{next()} + 1;
    }
  }
  finish();
  if (index.levels[0].empty()) index.levels.clear();
  index.keys = table.names();

  for (size_t i = 0; i < models.size(); ++i) CheckAgainstModel(index.levels[0][i], models[i], true);

  RebuildPyramid(index);
  CheckWellFormed(index);
  // The nodes: one per span holding a segment, once a segment past the span is in.
  size_t expected_levels = index.levels.empty() ? 0 : 1;
  for (int level = 1; level < kMaxLevels && !models.empty(); ++level) {
    uint64_t span = 1;
    for (int l = 0; l < level; ++l) span *= kFanout;
    std::vector<Model> nodes;
    for (const Model& m : models) {
      const uint64_t first = m.first_segment - m.first_segment % span;
      if (first + span > models.back().first_segment) break;  // not settled
      if (nodes.empty() || nodes.back().first_segment != first) {
        nodes.emplace_back();
        nodes.back().first_segment = first;
      }
      nodes.back().Merge(m);
    }
    if (!nodes.empty()) expected_levels = static_cast<size_t>(level) + 1;
    const size_t have = static_cast<size_t>(level) < index.levels.size() ? index.levels[level].size() : 0;
    FUZZ_CHECK(have == nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      FUZZ_CHECK(index.levels[level][i].first_segment == nodes[i].first_segment);
      CheckAgainstModel(index.levels[level][i], nodes[i], false);
    }
  }
  FUZZ_CHECK(index.levels.size() == expected_levels);

  const std::string encoded = EncodeIndex(index);
  const ParsedIndex parsed = ParseIndex(encoded);
  FUZZ_CHECK(parsed.problem.empty());
  FUZZ_CHECK(parsed.valid_bytes == encoded.size());
  FUZZ_CHECK(SameIndex(parsed.index, index));
  CheckParsed(encoded, parsed, Depth::kBasic);

  uint64_t hash = 1469598103934665603ULL;
  for (char c : spec) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  const size_t cut = static_cast<size_t>(hash % (encoded.size() + 1));
  const std::string_view torn = std::string_view(encoded).substr(0, cut);
  const ParsedIndex prefix = ParseIndex(torn);
  CheckParsed(torn, prefix, Depth::kRoundTrip);
  FUZZ_CHECK(IsPrefixIndex(prefix.index, index));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);
  const int mode = size == 0 ? 1 : data[0] % 3;
  if (mode == 1) {
    CheckParsed(input, ParseIndex(input), Depth::kEntries);
  } else if (mode == 0) {
    const std::string file = FrameEntries(input.substr(1));
    CheckParsed(file, ParseIndex(file), Depth::kEntries);
  } else {
    Build(input.substr(1));
  }
  return 0;
}
