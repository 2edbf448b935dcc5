// A stats record's numeric values with key ids, read from its wire bytes for the summary index (the
// recorder's writer and the index builder alike). Stats records repeat their keys in the same order, so the
// key at each item position is remembered and a string compare finds its id without a lookup. Values that
// are not JSON numbers are left out (as the viewers leave them out); values beyond a float's range are
// clamped to it (the index keeps floats, as the charts do); items with an empty key are left out (W&B does
// not accept them, and the index cannot name them).
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
      if (!value) return;
      if (at >= recent_keys_.size()) recent_keys_.resize(at + 1);
      auto& recent = recent_keys_[at];
      if (recent.first.empty() || recent.first != item.key) recent = {std::string(item.key), id_of(item.key)};
      values_.push_back(
          {recent.second, static_cast<float>(std::clamp(*value, -double{FLT_MAX}, double{FLT_MAX}))});
    });
  }
  const std::vector<SegmentAccumulator::Value>& values() const { return values_; }

 private:
  std::vector<std::pair<std::string, uint32_t>> recent_keys_;
  std::vector<SegmentAccumulator::Value> values_;
};

}  // namespace runmon::runlog
