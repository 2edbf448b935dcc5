// The record kind behind ReadStatsWire and PeekRecordKind (stats_wire.hpp).
#include "runlog/stats_wire.hpp"

namespace runmon::runlog::wire_detail {

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
