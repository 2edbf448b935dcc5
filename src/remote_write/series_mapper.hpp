// runmon keys as Prometheus series: the exporter's names, types, base units and placeholder labels
// (export/prometheus_names.hpp), with the constant labels that say where a series comes from. The catalog's
// matching walks every pattern, far too slow for each value of each tick, so each key's answer is cached;
// keys that map to the same metric and label value (a key and the W&B spelling the catalog also accepts)
// share one series, since a request must not hold two series with the same labels.
//
// The key cache is bounded (keys without a Prometheus name, such as openmetrics.* series scraped from other
// exporters, may churn without end): past the bound it is emptied and filled again. The series themselves
// are numbered once and kept for the mapper's life, so a series' number is stable; their count is bounded
// by the catalog's patterns times the devices, paths and labels the machine has.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "export/prometheus_names.hpp"
#include "remote_write/constant_labels.hpp"

namespace runmon::remote_write {

struct SeriesLabel {
  std::string name;
  std::string value;  // valid UTF-8
};

struct Series {
  uint32_t id = 0;  // 0, 1, ... in the order the mapper first saw them
  const PrometheusMetric* metric = nullptr;
  std::vector<SeriesLabel> labels;  // __name__ and the others, sorted by name, each name once
};

class SeriesMapper {
 public:
  static constexpr size_t kDefaultMaxCachedKeys = 65536;
  static constexpr size_t kMaxPositions = 4096;  // positions remembered per tick

  explicit SeriesMapper(ConstantLabels labels, size_t max_cached_keys = kDefaultMaxCachedKeys);
  SeriesMapper(const SeriesMapper&) = delete;
  SeriesMapper& operator=(const SeriesMapper&) = delete;

  // The series `key` belongs to, or nullptr when it has no Prometheus name (or is longer than a queued
  // tick's keys may be). Valid for the mapper's life.
  const Series* Map(std::string_view key);
  // The same for the key at `position` in a tick. Ticks name their keys in the same order one after the
  // other, so the key at a position is most often the one the tick before had there: one comparison then,
  // instead of hashing the key (the writer and the sender map every value of every tick).
  const Series* Map(std::string_view key, size_t position);

  size_t series_count() const { return series_.size(); }
  size_t cached_keys() const { return keys_.size(); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  const Series* Resolve(std::string_view key);

  ConstantLabels constant_labels_;
  size_t max_cached_keys_;
  std::unordered_map<std::string, const Series*, StringHash, std::equal_to<>> keys_;
  // Interned by metric and placeholder value ("<metric index>\n<value>").
  std::unordered_map<std::string, const Series*, StringHash, std::equal_to<>> by_identity_;
  std::vector<std::unique_ptr<Series>> series_;
  std::vector<std::pair<std::string, const Series*>> by_position_;  // the key last mapped at each position
};

}  // namespace runmon::remote_write
