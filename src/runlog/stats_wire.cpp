// The protobuf wire format's field reader behind ReadStatsWire (stats_wire.hpp).
#include "runlog/stats_wire.hpp"

namespace runmon::runlog::wire_detail {
namespace {

bool ReadVarint(std::string_view data, size_t& at, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < data.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(data[at++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

bool NextField(std::string_view data, size_t& at, Field& field, bool& malformed) {
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

WireRecordKind FindStats(std::string_view payload, size_t& stats_from) {
  bool is_stats = false;
  bool malformed = false;
  size_t at = 0;
  Field field;
  for (size_t field_start = 0; NextField(payload, at, field, malformed); field_start = at) {
    // A oneof number with another wire type is a field protobuf does not know: it changes nothing.
    if (!IsRecordTypeField(field.number) || field.wire_type != kLengthDelimited) continue;
    const bool stats = field.number == kStatsField;
    // Another member clears the oneof; the same message member again is merged into the one before.
    if (stats && !is_stats) stats_from = field_start;
    is_stats = stats;
  }
  if (malformed) return WireRecordKind::kMalformed;
  return is_stats ? WireRecordKind::kStats : WireRecordKind::kOther;
}

}  // namespace runmon::runlog::wire_detail

namespace runmon::runlog {

WireRecordKind PeekRecordKind(std::string_view payload) {
  size_t stats_from = 0;
  return wire_detail::FindStats(payload, stats_from);
}

}  // namespace runmon::runlog
