// The summary index's entries, their parser and the accumulators that fill them (see summary_index.hpp).
#include "runlog/summary_index.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_set>

#include <fmt/format.h>

#include "runlog/log_format.hpp"

namespace runmon::runlog {
namespace {

enum class EntryType : uint8_t { kKey = 1, kSummary = 2 };
constexpr size_t kEntryHeaderSize = 9;

void PutFixed32(uint32_t value, std::string& out) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

void PutVarint(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void PutFloat(float value, std::string& out) {
  PutFixed32(std::bit_cast<uint32_t>(value), out);
}

void PutDouble(double value, std::string& out) {
  const auto bits = std::bit_cast<uint64_t>(value);
  PutFixed32(static_cast<uint32_t>(bits), out);
  PutFixed32(static_cast<uint32_t>(bits >> 32), out);
}

void Frame(EntryType type, std::string_view payload, std::string& out) {
  const char type_byte = static_cast<char>(type);
  PutFixed32(static_cast<uint32_t>(payload.size()), out);
  PutFixed32(Crc32(Crc32(0, std::string_view(&type_byte, 1)), payload), out);
  out.push_back(type_byte);
  out.append(payload);
}

// Reads the fields of an entry's payload; any read past its end makes ok() false.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool done() const { return bytes_.empty(); }
  std::string_view rest() {
    std::string_view all = bytes_;
    bytes_ = {};
    return all;
  }
  uint32_t Fixed32() {
    if (bytes_.size() < 4) return Fail();
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes_[i]);
    bytes_.remove_prefix(4);
    return value;
  }
  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (bytes_.empty()) return Fail();
      const auto byte = static_cast<unsigned char>(bytes_.front());
      bytes_.remove_prefix(1);
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Fail();
  }
  uint8_t Byte() {
    if (bytes_.empty()) return static_cast<uint8_t>(Fail());
    const auto byte = static_cast<uint8_t>(bytes_.front());
    bytes_.remove_prefix(1);
    return byte;
  }
  float Float() { return std::bit_cast<float>(Fixed32()); }
  double Double() {
    const uint64_t low = Fixed32();
    const uint64_t high = Fixed32();
    return std::bit_cast<double>(high << 32 | low);
  }

 private:
  uint32_t Fail() {
    ok_ = false;
    bytes_ = {};
    return 0;
  }
  std::string_view bytes_;
  bool ok_ = true;
};

std::string EncodeSummaryPayload(const SegmentSummary& summary) {
  std::string out;
  out.reserve(64 + summary.keys.size() * 16);
  PutVarint(static_cast<uint64_t>(summary.level), out);
  PutVarint(summary.first_segment, out);
  PutVarint(summary.records, out);
  PutVarint(summary.stats_records, out);
  PutVarint(summary.other_records, out);
  PutVarint(summary.damaged_bytes, out);
  PutVarint(summary.end_offset, out);
  PutFixed32(summary.boundary_crc, out);
  PutDouble(summary.first_time, out);
  PutDouble(summary.last_time, out);
  PutVarint(summary.keys.size(), out);
  uint32_t previous = 0;
  for (const KeySummary& key : summary.keys) {
    PutVarint(key.key - previous, out);  // ids ascend: deltas keep them one byte
    previous = key.key;
    PutVarint(key.count, out);
    PutFloat(key.min, out);
    PutFloat(key.max, out);
    PutFloat(key.last, out);
    out.push_back(key.min_first ? 1 : 0);
  }
  return out;
}

// Decodes a summary payload; an error message when it does not check out against `key_count` keys.
std::string DecodeSummaryPayload(std::string_view payload, size_t key_count, SegmentSummary& summary) {
  Cursor in(payload);
  const uint64_t level = in.Varint();
  summary.first_segment = in.Varint();
  summary.records = in.Varint();
  summary.stats_records = in.Varint();
  summary.other_records = in.Varint();
  summary.damaged_bytes = in.Varint();
  summary.end_offset = in.Varint();
  summary.boundary_crc = in.Fixed32();
  summary.first_time = in.Double();
  summary.last_time = in.Double();
  const uint64_t keys = in.Varint();
  if (!in.ok()) return "a truncated summary";
  if (level >= static_cast<uint64_t>(kMaxLevels)) return fmt::format("level {} is too high", level);
  summary.level = static_cast<int>(level);
  if (summary.first_segment > (std::numeric_limits<uint64_t>::max() / kSegmentBytes) / 2)
    return "a segment number beyond any log";
  if (summary.first_segment % summary.segment_span() != 0) return "a node that does not start its span";
  // Compared without the sum, which a hostile pair of counts could wrap around to `records`.
  if (summary.stats_records > summary.records ||
      summary.records - summary.stats_records != summary.other_records)
    return "record counts do not add up";
  if (keys > key_count) return "more keys than the index names";
  if (!std::isfinite(summary.first_time) || !std::isfinite(summary.last_time) ||
      summary.last_time < summary.first_time)
    return "an impossible time range";
  summary.keys.resize(static_cast<size_t>(keys));
  uint64_t id = 0;
  for (size_t i = 0; i < summary.keys.size(); ++i) {
    KeySummary& key = summary.keys[i];
    const uint64_t delta = in.Varint();
    if (i > 0 && delta == 0) return "a key listed twice";
    // A delta past the names would wrap the id back to one listed already (or out of order).
    if (delta >= key_count || id + delta >= key_count) return "a key id the index has not named";
    id += delta;
    const uint64_t count = in.Varint();
    key.min = in.Float();
    key.max = in.Float();
    key.last = in.Float();
    const uint8_t flags = in.Byte();
    if (!in.ok()) return "a truncated summary";
    if (id >= key_count) return "a key id the index has not named";
    if (count == 0 || count > summary.stats_records) return "a key count beyond the stats records";
    if (count > std::numeric_limits<uint32_t>::max()) return "a key count beyond 32 bits";
    if (!(key.min <= key.max) || !std::isfinite(key.min) || !std::isfinite(key.max) ||
        !std::isfinite(key.last) || flags > 1)
      return "impossible key values";
    key.key = static_cast<uint32_t>(id);
    key.count = static_cast<uint32_t>(count);
    key.min_first = flags == 1;
  }
  if (!in.done()) return "bytes after a summary";
  return {};
}

}  // namespace

uint64_t SegmentSummary::segment_span() const {
  uint64_t span = 1;
  for (int l = 0; l < level; ++l) span *= kFanout;
  return span;
}

const std::vector<SegmentSummary>& SummaryIndex::segments() const {
  static const std::vector<SegmentSummary> kNone;
  return levels.empty() ? kNone : levels[0];
}

uint64_t SummaryIndex::covered_segments() const {
  const auto& level0 = segments();
  return level0.empty() ? 0 : level0.back().first_segment + 1;
}

std::string EncodeIndexHeader() {
  std::string out(kIndexMagic);
  out.push_back(static_cast<char>(kIndexVersion));
  out.push_back(static_cast<char>(std::countr_zero(kSegmentBytes)));
  out.push_back(static_cast<char>(std::countr_zero(kFanout)));
  out.push_back(0);
  return out;
}

void AppendKeyEntry(std::string_view name, std::string& out) {
  Frame(EntryType::kKey, name, out);
}

void AppendSummaryEntry(const SegmentSummary& summary, std::string& out) {
  Frame(EntryType::kSummary, EncodeSummaryPayload(summary), out);
}

ParsedIndex ParseIndex(std::string_view bytes) {
  ParsedIndex parsed;
  const std::string header = EncodeIndexHeader();
  if (bytes.size() < kIndexHeaderSize) {
    parsed.problem = "shorter than its header";
    return parsed;
  }
  if (bytes.substr(0, kIndexHeaderSize) != header) {
    parsed.problem =
        bytes.substr(0, 4) == kIndexMagic ? "another version or segment size" : "not a runmon summary index";
    return parsed;
  }
  parsed.valid_bytes = kIndexHeaderSize;
  SummaryIndex& index = parsed.index;
  std::string_view rest = bytes.substr(kIndexHeaderSize);
  std::unordered_set<std::string_view> names;  // views into `bytes`
  while (!rest.empty()) {
    Cursor head(rest.substr(0, kEntryHeaderSize));
    const uint32_t length = head.Fixed32();
    const uint32_t checksum = head.Fixed32();
    const uint8_t type = head.Byte();
    if (!head.ok() || rest.size() - kEntryHeaderSize < length) {
      parsed.problem = "a torn last entry";
      break;
    }
    if (length > kMaxIndexEntryBytes) {
      parsed.problem = "an entry longer than any index writes";
      break;
    }
    const std::string_view payload = rest.substr(kEntryHeaderSize, length);
    const char type_byte = static_cast<char>(type);
    if (Crc32(Crc32(0, std::string_view(&type_byte, 1)), payload) != checksum) {
      parsed.problem = "an entry's checksum does not match";
      break;
    }
    if (type == static_cast<uint8_t>(EntryType::kKey)) {
      if (payload.empty()) {
        parsed.problem = "an empty key name";
        break;
      }
      // Readers map a name back to one id: a name given twice would shift every later id.
      if (!names.insert(payload).second) {
        parsed.problem = "a key named twice";
        break;
      }
      index.keys.emplace_back(payload);
    } else if (type == static_cast<uint8_t>(EntryType::kSummary)) {
      SegmentSummary summary;
      if (std::string problem = DecodeSummaryPayload(payload, index.keys.size(), summary); !problem.empty()) {
        parsed.problem = std::move(problem);
        break;
      }
      const auto level = static_cast<size_t>(summary.level);
      if (level > index.levels.size() || (level > 0 && index.levels.empty())) {
        parsed.problem = "a node above a level that is missing";
        break;
      }
      if (index.levels.size() == level) index.levels.emplace_back();
      auto& entries = index.levels[level];
      if (!entries.empty() &&
          summary.first_segment < entries.back().first_segment + entries.back().segment_span()) {
        parsed.problem = "entries out of order";
        break;
      }
      if (level > 0 && index.covered_segments() <= summary.first_segment + summary.segment_span()) {
        parsed.problem = "a node before its segments are settled";
        break;
      }
      entries.push_back(std::move(summary));
    } else {
      parsed.problem = fmt::format("an entry of unknown type {}", type);
      break;
    }
    rest.remove_prefix(kEntryHeaderSize + length);
    parsed.valid_bytes += kEntryHeaderSize + length;
  }
  return parsed;
}

uint32_t KeyTable::Id(std::string_view name, bool* added) {
  auto [it, inserted] = ids_.try_emplace(std::string(name), static_cast<uint32_t>(names_.size()));
  if (inserted) names_.emplace_back(name);
  if (added != nullptr) *added = inserted;
  return it->second;
}

SegmentAccumulator::SegmentAccumulator(uint64_t segment) {
  summary_.first_segment = segment;
}

void SegmentAccumulator::AddStats(uint64_t end, double time, const Value* values, size_t count) {
  ++summary_.records;
  ++summary_.stats_records;
  summary_.end_offset = std::max(summary_.end_offset, end);
  if (summary_.stats_records == 1) {
    summary_.first_time = time;
    summary_.last_time = time;
  } else {
    summary_.first_time = std::min(summary_.first_time, time);
    summary_.last_time = std::max(summary_.last_time, time);
  }
  // A key a record carries twice counts once, with its later value (W&B's readers keep the stats of a
  // record as a dict): walked from the end, the first sight of a key in this record is the one kept.
  for (size_t i = count; i-- > 0;) {
    const Value& value = values[i];
    if (value.key >= slots_.size()) {
      slots_.resize(value.key + 1, 0);
      seen_in_record_.resize(value.key + 1, 0);
    }
    if (seen_in_record_[value.key] == summary_.stats_records) continue;
    seen_in_record_[value.key] = summary_.stats_records;
    uint32_t& slot = slots_[value.key];
    if (slot == 0) {
      summary_.keys.push_back({value.key, 1, value.value, value.value, value.value, true});
      slot = static_cast<uint32_t>(summary_.keys.size());
      continue;
    }
    KeySummary& key = summary_.keys[slot - 1];
    ++key.count;
    key.last = value.value;
    // The latest extreme decides the order, as a line drawn through the points would.
    if (value.value < key.min) {
      key.min = value.value;
      key.min_first = false;
    } else if (value.value > key.max) {
      key.max = value.value;
      key.min_first = true;
    }
  }
}

void SegmentAccumulator::AddOther(uint64_t end) {
  ++summary_.records;
  ++summary_.other_records;
  summary_.end_offset = std::max(summary_.end_offset, end);
}

SegmentSummary SegmentAccumulator::Finish(uint32_t boundary_crc) {
  summary_.boundary_crc = boundary_crc;
  std::sort(summary_.keys.begin(), summary_.keys.end(),
            [](const KeySummary& a, const KeySummary& b) { return a.key < b.key; });
  slots_.clear();
  return std::move(summary_);
}

void MergeSummary(const SegmentSummary& child, SegmentSummary& parent) {
  if (child.stats_records > 0) {
    if (parent.stats_records == 0) {
      parent.first_time = child.first_time;
      parent.last_time = child.last_time;
    } else {
      parent.first_time = std::min(parent.first_time, child.first_time);
      parent.last_time = std::max(parent.last_time, child.last_time);
    }
  }
  parent.records += child.records;
  parent.stats_records += child.stats_records;
  parent.other_records += child.other_records;
  parent.damaged_bytes += child.damaged_bytes;
  parent.end_offset = std::max(parent.end_offset, child.end_offset);
  std::vector<KeySummary> merged;
  merged.reserve(std::max(parent.keys.size(), child.keys.size()));
  auto a = parent.keys.begin();
  auto b = child.keys.begin();
  while (a != parent.keys.end() || b != child.keys.end()) {
    if (b == child.keys.end() || (a != parent.keys.end() && a->key < b->key)) {
      merged.push_back(*a++);
    } else if (a == parent.keys.end() || b->key < a->key) {
      merged.push_back(*b++);
    } else {
      KeySummary key = *a++;
      const KeySummary& later = *b++;
      key.count = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{key.count} + later.count, UINT32_MAX));
      key.last = later.last;
      // Each side's extremes keep their own order; across sides the later one comes after.
      const bool new_min = later.min < key.min;
      const bool new_max = later.max > key.max;
      if (new_min) key.min = later.min;
      if (new_max) key.max = later.max;
      if (new_min && new_max) {
        key.min_first = later.min_first;
      } else if (new_min) {
        key.min_first = false;
      } else if (new_max) {
        key.min_first = true;
      }
      merged.push_back(key);
    }
  }
  parent.keys = std::move(merged);
}

void PyramidBuilder::Add(const SegmentSummary& segment, std::vector<SegmentSummary>& completed) {
  for (int level = 1; level < kMaxLevels; ++level) {
    auto& open = open_.size() >= static_cast<size_t>(level) ? open_[level - 1] : open_.emplace_back();
    uint64_t span = 1;
    for (int l = 0; l < level; ++l) span *= kFanout;
    const uint64_t first = segment.first_segment - segment.first_segment % span;
    if (open && open->first_segment != first) {
      completed.push_back(std::move(*open));
      open.reset();
    }
    if (!open) {
      open.emplace();
      open->level = level;
      open->first_segment = first;
    }
    MergeSummary(segment, *open);
  }
}

void RebuildPyramid(SummaryIndex& index) {
  if (index.levels.empty()) return;
  index.levels.resize(1);
  PyramidBuilder pyramid;
  std::vector<SegmentSummary> completed;
  for (const SegmentSummary& segment : index.levels[0]) pyramid.Add(segment, completed);
  for (SegmentSummary& node : completed) {
    const auto level = static_cast<size_t>(node.level);
    if (index.levels.size() <= level) index.levels.resize(level + 1);
    index.levels[level].push_back(std::move(node));
  }
}

std::string EncodeIndex(const SummaryIndex& index) {
  std::string out = EncodeIndexHeader();
  for (const std::string& key : index.keys) AppendKeyEntry(key, out);
  // A node goes right after the first segment past it (where the recorder writes it too).
  std::vector<size_t> next(index.levels.size(), 0);
  const auto& segments = index.segments();
  for (const SegmentSummary& segment : segments) {
    AppendSummaryEntry(segment, out);
    for (size_t level = 1; level < index.levels.size(); ++level) {
      const auto& nodes = index.levels[level];
      while (next[level] < nodes.size() &&
             nodes[next[level]].first_segment + nodes[next[level]].segment_span() <= segment.first_segment) {
        AppendSummaryEntry(nodes[next[level]++], out);
      }
    }
  }
  return out;
}

}  // namespace runmon::runlog
