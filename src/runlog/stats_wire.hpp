// Reads a serialized W&B Record's stats straight from the protobuf wire format, without building messages:
// the index builder reads every stats record of a week-long log (600,000 records of 200 items), and
// protobuf's parser would allocate every item's strings. Pure function over any bytes: malformed input
// (a truncated varint, a length past the end, a group, a wire type that does not exist) is refused, never
// read past. Only the top level's record type and the stats record's timestamp and items are looked at;
// every other field is skipped by its wire type, as protobuf does with fields it does not know.
#pragma once

#include <cstdint>
#include <string_view>

namespace runmon::runlog {

enum class WireRecordKind {
  kStats,      // the record's type is stats (field 7)
  kOther,      // another type, or none
  kMalformed,  // not a valid protobuf message
};

struct StatsItemView {
  std::string_view key;
  std::string_view value_json;
};

// The record's type without reading its stats.
WireRecordKind PeekRecordKind(std::string_view payload);

// Calls `on_item(StatsItemView)` for each item of a stats record and sets `time` (seconds since the epoch,
// 0 without a timestamp). The items of a malformed record may have been passed before it says kMalformed.
template <typename OnItem>
WireRecordKind ReadStatsWire(std::string_view payload, double& time, OnItem&& on_item);

namespace wire_detail {

// The next field of `bytes` at `at`: its number, wire type and (for length-delimited fields) contents;
// false at the end or when malformed (`malformed` set then).
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};
// Inline, with a one-byte fast path: a stats record of 200 keys is some 800 fields, read by the recorder
// for every record it writes and by the index builder for every record of a log.
inline bool ReadVarint(std::string_view data, size_t& at, uint64_t& value) {
  if (at < data.size() && (static_cast<unsigned char>(data[at]) & 0x80) == 0) {
    value = static_cast<unsigned char>(data[at++]);
    return true;
  }
  // Two bytes: value_json's tag (field 16) and lengths from 128 to 16383.
  if (data.size() - at >= 2 && (static_cast<unsigned char>(data[at + 1]) & 0x80) == 0) {
    value = (static_cast<uint64_t>(static_cast<unsigned char>(data[at])) & 0x7F) |
            (static_cast<uint64_t>(static_cast<unsigned char>(data[at + 1])) << 7);
    at += 2;
    return true;
  }
  value = 0;
  for (int shift = 0; shift < 64 && at < data.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(data[at++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

inline bool NextField(std::string_view data, size_t& at, Field& field, bool& malformed) {
  if (malformed || at >= data.size()) return false;
  uint64_t tag = 0;
  if (!ReadVarint(data, at, tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) {
    malformed = true;
    return false;
  }
  field.number = static_cast<uint32_t>(tag >> 3);
  field.wire_type = static_cast<uint32_t>(tag & 7);
  field.bytes = {};
  switch (field.wire_type) {
    case 0:
      if (!ReadVarint(data, at, field.varint)) break;
      return true;
    case 1:
      if (data.size() - at < 8) break;
      at += 8;
      return true;
    case 2: {
      uint64_t length = 0;
      if (!ReadVarint(data, at, length) || length > data.size() - at) break;
      field.bytes = data.substr(at, static_cast<size_t>(length));
      at += static_cast<size_t>(length);
      return true;
    }
    case 5:
      if (data.size() - at < 4) break;
      at += 4;
      return true;
    default:  // groups (3, 4) are not used by W&B's records; 6 and 7 do not exist
      break;
  }
  malformed = true;
  return false;
}
// Whether a top-level field number is one of Record's record_type oneof.
inline bool IsRecordTypeField(uint32_t number) {
  return (number >= 2 && number <= 13) || number == 17 || number == 18 || (number >= 20 && number <= 27);
}
inline constexpr uint32_t kStatsField = 7;
inline constexpr uint32_t kLengthDelimited = 2;
// The record's kind and, for stats, where its stats fields start. Protobuf's rules: the record's type is
// the last oneof field present, and the same message field present more than once in a row is merged (the
// StatsRecord is every one of those fields' contents, in order).
WireRecordKind FindStats(std::string_view payload, size_t& stats_from);

}  // namespace wire_detail

template <typename OnItem>
WireRecordKind ReadStatsWire(std::string_view payload, double& time, OnItem&& on_item) {
  using wire_detail::Field;
  using wire_detail::kLengthDelimited;
  using wire_detail::NextField;
  time = 0;
  size_t at = 0;
  if (const WireRecordKind kind = wire_detail::FindStats(payload, at); kind != WireRecordKind::kStats) {
    return kind;
  }
  // Merged as protobuf merges: the timestamp's fields are the last given, the items every one in order.
  int64_t seconds = 0;
  int64_t nanos = 0;
  bool malformed = false;
  Field top;
  while (NextField(payload, at, top, malformed)) {
    if (top.number != wire_detail::kStatsField || top.wire_type != kLengthDelimited) continue;
    size_t stats_at = 0;
    Field field;
    while (NextField(top.bytes, stats_at, field, malformed)) {
      if (field.wire_type != kLengthDelimited) continue;
      size_t inner = 0;
      Field part;
      if (field.number == 2) {  // google.protobuf.Timestamp {seconds = 1, nanos = 2}
        while (NextField(field.bytes, inner, part, malformed)) {
          if (part.number == 1 && part.wire_type == 0) seconds = static_cast<int64_t>(part.varint);
          if (part.number == 2 && part.wire_type == 0) nanos = static_cast<int32_t>(part.varint);
        }
      } else if (field.number == 3) {  // StatsItem {key = 1, value_json = 16}
        StatsItemView item;
        while (NextField(field.bytes, inner, part, malformed)) {
          if (part.wire_type != kLengthDelimited) continue;
          if (part.number == 1) item.key = part.bytes;
          if (part.number == 16) item.value_json = part.bytes;
        }
        if (!malformed) on_item(item);
      }
      if (malformed) return WireRecordKind::kMalformed;
    }
  }
  time = static_cast<double>(seconds) + static_cast<double>(nanos) * 1e-9;
  return malformed ? WireRecordKind::kMalformed : WireRecordKind::kStats;
}

}  // namespace runmon::runlog
