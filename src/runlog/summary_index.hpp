// The summary index beside a run log (`run-<id>.wandb.idx`, docs/run-log.md): what a viewer needs to draw a
// week-long run at the screen's resolution without decoding its gigabytes. The log is cut into segments of
// kSegmentBytes (8 blocks); a record belongs to the segment its first chunk starts in. Each segment's
// summary holds its record counts, the time range of its stats records and, per system-metric key, the
// count, minimum, maximum and last value (and whether the minimum came first, so a coarse line rises and
// falls in the right order). Above the segments sit coarser levels, each node summing kFanout nodes of the
// level below (a pyramid): a first frame reads a level of a few hundred nodes, not every segment.
//
// The file is append-only, so runmon's recorder writes it as the log grows: an 8-byte header, then entries
// framed as [u32 length][u32 CRC-32 of type and payload][u8 type][payload]. A key entry names the next key
// id; a summary entry carries a level, its first segment and its numbers. An entry is written only once its
// segments are settled: a record has started past its end, so nothing it covers can change. The index is
// never needed for correctness: whatever does not check out (a bad checksum, a torn or unknown entry, a key
// id out of order, a segment the log no longer holds or whose bytes differ) ends the valid prefix, and the
// rest is rebuilt from the log, which stays the only source of truth. Pure functions here; index_file.hpp
// reads, checks and writes files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace runmon::runlog {

inline constexpr uint64_t kSegmentBytes = 256 * 1024;
inline constexpr uint32_t kFanout = 16;
inline constexpr int kMaxLevels = 6;  // 16^5 segments of 256 KiB: 256 TiB of log
// The bytes before a segment's end whose CRC-32 an entry keeps, so a replaced or rewritten log is noticed.
inline constexpr uint64_t kBoundaryCheckBytes = 4096;
inline constexpr std::string_view kIndexMagic = "RMIX";
inline constexpr uint8_t kIndexVersion = 1;
inline constexpr size_t kIndexHeaderSize = 8;
// An entry longer than this is damage (a segment of 200 keys is ~3 KB; a hostile file must not make the
// reader allocate without end).
inline constexpr uint32_t kMaxIndexEntryBytes = 16u << 20;

// One key over a segment or a node.
struct KeySummary {
  uint32_t key = 0;  // the index's key id
  uint32_t count = 0;
  float min = 0;
  float max = 0;
  float last = 0;
  bool min_first = true;  // the minimum came before the maximum
};

struct SegmentSummary {
  int level = 0;               // 0: one segment; L: kFanout^L segments
  uint64_t first_segment = 0;  // the node covers segments [first_segment, first_segment + kFanout^level)
  uint64_t records = 0;        // records starting in it
  uint64_t stats_records = 0;
  uint64_t other_records = 0;  // records that are not stats (run, history, console, exit, ...)
  uint64_t damaged_bytes = 0;  // bytes the reader skipped in it
  uint64_t end_offset = 0;     // just after its last record (may lie in the next segment)
  uint32_t boundary_crc = 0;   // level 0: CRC-32 of the kBoundaryCheckBytes before the segment's end
                               // (segment 0: the log's first kBoundaryCheckBytes)
  double first_time = 0;       // stats timestamps, seconds since the epoch (0 and 0 without stats)
  double last_time = 0;
  std::vector<KeySummary> keys;  // sorted by key id

  uint64_t segment_span() const;  // kFanout^level
};

// Where segment `segment` ends in the log (and the next starts).
inline constexpr uint64_t SegmentEnd(uint64_t segment) {
  return (segment + 1) * kSegmentBytes;
}
inline constexpr uint64_t SegmentOf(uint64_t offset) {
  return offset / kSegmentBytes;
}

// The index's contents: its key names (id = position) and every entry, level by level, in segment order.
struct SummaryIndex {
  std::vector<std::string> keys;
  std::vector<std::vector<SegmentSummary>> levels;  // levels[0]: segments; may be empty

  const std::vector<SegmentSummary>& segments() const;
  // One past the last level-0 segment, or 0.
  uint64_t covered_segments() const;
};

// What parsing an index file's bytes found: the entries of its valid prefix and where that prefix ends.
struct ParsedIndex {
  SummaryIndex index;
  uint64_t valid_bytes = 0;  // the header and the entries that checked out
  std::string problem;       // empty when every byte checked out; else why the rest was not used
};

// The file header.
std::string EncodeIndexHeader();
// Appends one framed key entry (the key's id is the next: keys.size() before it).
void AppendKeyEntry(std::string_view name, std::string& out);
// Appends one framed summary entry.
void AppendSummaryEntry(const SegmentSummary& summary, std::string& out);
// Parses an index file's bytes (any bytes: never throws, never reads past them). Entries must come in order:
// a level-0 segment after the previous one, a node only once its level-0 segments are in, each key id named
// before it is used.
ParsedIndex ParseIndex(std::string_view bytes);

// The names of an index's keys; an id is a position.
class KeyTable {
 public:
  // The key's id, adding it the first time (`added` says whether it was new).
  uint32_t Id(std::string_view name, bool* added = nullptr);
  const std::vector<std::string>& names() const { return names_; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;
};

// Fills one segment's summary from its records, in log order.
class SegmentAccumulator {
 public:
  explicit SegmentAccumulator(uint64_t segment);
  struct Value {
    uint32_t key;
    float value;
  };
  // A record starting in the segment and ending at `end`; a stats record with its time (seconds
  // since the epoch) and values (finite numbers only).
  void AddStats(uint64_t end, double time, const Value* values, size_t count);
  void AddOther(uint64_t end);
  uint64_t segment() const { return summary_.first_segment; }
  // The summary (keys sorted by id); the accumulator is spent.
  SegmentSummary Finish(uint32_t boundary_crc);

 private:
  SegmentSummary summary_;
  std::vector<uint32_t> slots_;           // key id -> position in summary_.keys + 1 (0: not seen yet)
  std::vector<uint64_t> seen_in_record_;  // key id -> the stats record (1-based) that last carried it
};

// The levels above the segments, fed level-0 summaries in segment order: a node is complete (and returned)
// once a segment past it arrives, since every segment it covers is settled by then.
class PyramidBuilder {
 public:
  // Adds a level-0 summary; appends to `completed` the nodes it completes, lowest level first.
  void Add(const SegmentSummary& segment, std::vector<SegmentSummary>& completed);

 private:
  std::vector<std::optional<SegmentSummary>> open_;  // open_[L-1]: the open level-L node
};

// Every node of `index`'s levels above 0, from its segments (those the pyramid builder has completed).
void RebuildPyramid(SummaryIndex& index);
// The whole file for `index`: the header, every key, then the summaries in an order ParseIndex accepts.
std::string EncodeIndex(const SummaryIndex& index);

// Merges `child` (the next in segment order) into `parent`, whose key list is kept sorted by key id.
void MergeSummary(const SegmentSummary& child, SegmentSummary& parent);

}  // namespace runmon::runlog
