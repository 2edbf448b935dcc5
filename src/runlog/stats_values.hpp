// A stats record's numeric values with key ids, read from its wire bytes for the summary index (the
// recorder's writer and the index builder alike). Stats records repeat their keys in the same order, so the
// key at each item position is remembered and a string compare finds its id without a lookup. Values that
// are not JSON numbers are left out (as the viewers leave them out); values beyond a float's range are
// clamped to it (the index keeps floats, as the charts do); items with an empty key are left out (W&B does
// not accept them, and the index cannot name them). The recorder, which encoded the record itself, hands
// over the keys' places and the values instead (Take): the same values, without parsing them again.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runlog/run_state.hpp"
#include "runlog/stats_wire.hpp"
#include "runlog/summary_index.hpp"

namespace runmon::runlog {

// A stats record as its writer encoded it (EncodeStatsRecord): where each item's key lies in the payload,
// its value, and the record's time as the log holds it (seconds + nanos), so the recorder's index takes
// them without reading the payload back. Every item in the record's order, one with an empty key included.
struct EncodedStatsItems {
  struct Item {
    uint32_t key_offset = 0;
    uint32_t key_size = 0;
    double value = 0;
  };
  double time = 0;
  std::vector<Item> items;
};

class StatsValueReader {
 public:
  // `id_of(std::string_view name)` gives a key's id (adding it when new). `time` is set for stats records.
  template <typename IdOf>
  WireRecordKind Read(std::string_view payload, double& time, IdOf&& id_of) {
    values_.clear();
    size_t position = 0;
    return ReadStatsWire(payload, time, [&](const StatsItemView& item) {
      const size_t at = position++;
      if (item.key.empty()) return;
      const auto value = ParseJsonNumber(item.value_json);
      if (value) Keep(at, item.key, *value, id_of);
    });
  }

  // The same from what the writer knows of a record it encoded (EncodedStatsItems): no bytes read back.
  template <typename IdOf>
  void Take(std::string_view payload, const EncodedStatsItems& encoded, IdOf&& id_of) {
    values_.clear();
    for (size_t at = 0; at < encoded.items.size(); ++at) {
      const EncodedStatsItems::Item& item = encoded.items[at];
      if (item.key_offset > payload.size() || item.key_size > payload.size() - item.key_offset) continue;
      Keep(at, payload.substr(item.key_offset, item.key_size), item.value, id_of);
    }
  }

  const std::vector<SegmentAccumulator::Value>& values() const { return values_; }

 private:
  template <typename IdOf>
  void Keep(size_t at, std::string_view key, double value, IdOf& id_of) {
    if (key.empty()) return;
    if (at >= recent_keys_.size()) recent_keys_.resize(at + 1);
    auto& recent = recent_keys_[at];
    if (recent.first.empty() || recent.first != key) recent = {std::string(key), id_of(key)};
    values_.push_back(
        {recent.second, static_cast<float>(std::clamp(value, -double{FLT_MAX}, double{FLT_MAX}))});
  }

  std::vector<std::pair<std::string, uint32_t>> recent_keys_;
  std::vector<SegmentAccumulator::Value> values_;
};

}  // namespace runmon::runlog
