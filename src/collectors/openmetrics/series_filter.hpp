// The user's OpenMetrics filters (setting x_stats_open_metrics_filters) and the W&B-style keys
// openmetrics.<endpoint>.<metric>.<index> (spec/metrics.md B §9). Pure: no I/O, so unit tests and the fuzzer
// drive it directly.
//
// Filters: the setting is a JSON list of regexes (keep a series when any matches the full name
// "<endpoint>.<metric>") or a JSON object {metricRegex: {labelName: valueRegex}} (keep when some entry's
// metric regex matches the full name and that entry has no label filters, or every named label exists and
// its value matches). No setting, null, [] or {} keeps everything. Regexes are RE2 (linear time, like Go's),
// unanchored: a match anywhere counts.
//
// Keys (SeriesKeys, one per endpoint), choices where runmon differs or W&B is unspecific:
//  - The <metric> part is the sample name (e.g. "foo_total" for an OpenMetrics counter family "foo"): W&B's
//    Prometheus text parser reads each such sample as its own family, so the keys agree with W&B's.
//  - Counter and gauge samples are used (W&B); runmon also uses untyped/unknown samples (a plain exporter
//    without # TYPE lines still yields data). Histogram, summary, gaugehistogram, stateset and info samples
//    are skipped, and so is a counter's "<family>_created" sample (a timestamp, not a value).
//  - Endpoint and metric names go into the key verbatim, as W&B does: no escaping, even when they hold '.',
//    '/', spaces or other UTF-8 (quoted names); "openmetrics.a.b.c.0" can thus come from more than one
//    endpoint/metric split. The index table (Table) stays exact.
//  - Series identity is the exact sorted label set (W&B hashes "k=v;" with MD5, which can merge label sets
//    whose values contain ';' or '='; runmon does not). Indices per metric are 0, 1, 2, ... in order of first
//    appearance over the object's lifetime and never change.
//  - At most max_series distinct series per endpoint (all metrics together); later new series get no key
//    and are counted in DroppedSeries (W&B has no cap).
//  - The index -> labels table is exposed (Table) so it can be written into the run (W&B keeps it in memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/openmetrics/text_parse.hpp"
#include "config/openmetrics_settings.hpp"
#include "core/result.hpp"

namespace re2 {
class RE2;
}

namespace runmon::openmetrics {

class SeriesFilter {
 public:
  static constexpr int64_t kMaxRegexMemory = kOpenMetricsMaxRegexMemory;  // RE2 max_mem per regex

  // Keeps everything.
  SeriesFilter();
  ~SeriesFilter();
  SeriesFilter(SeriesFilter&&) noexcept;
  SeriesFilter& operator=(SeriesFilter&&) noexcept;

  // json: the setting's JSON text; nullopt, "null", "[]" or "{}" keep everything. Errors name the bad part:
  // not JSON, a wrong shape (number, list of non-strings, object values that are not objects of strings), a
  // regex that does not compile.
  static Result<SeriesFilter> FromSetting(std::optional<std::string_view> json);
  // The same from the setting already parsed (config/openmetrics_settings.hpp).
  static Result<SeriesFilter> FromSpec(const OpenMetricsFilterSpec& spec);

  // full_name: "<endpoint>.<metric>"; labels as ParseExposition returns them (sorted by name).
  bool Keep(std::string_view full_name, const Labels& labels) const;

  bool KeepsAll() const { return kind_ == Kind::kAll; }

 private:
  struct LabelRule {
    std::string label;
    std::unique_ptr<re2::RE2> value;
  };
  struct DictEntry {
    std::unique_ptr<re2::RE2> metric;
    std::vector<LabelRule> labels;
  };
  enum class Kind { kAll, kList, kDict };

  Kind kind_ = Kind::kAll;
  std::vector<std::unique_ptr<re2::RE2>> list_;
  std::vector<DictEntry> dict_;
};

struct SeriesKeysOptions {
  size_t max_series = 10'000;  // distinct series per endpoint, all metrics together
};

class SeriesKeys {
 public:
  // filter may be shared by several endpoints and must outlive this object; nullptr keeps everything.
  SeriesKeys(std::string endpoint, const SeriesFilter* filter, SeriesKeysOptions options = {});

  // "openmetrics.<endpoint>.<sample name>.<index>", or nullopt when the sample's type is not used, the
  // filter drops it, or it is a new series beyond max_series.
  std::optional<std::string> KeyFor(const MetricSample& sample);

  // metric (sample name) -> labels of index 0, 1, 2, ...
  const std::map<std::string, std::vector<Labels>>& Table() const { return table_; }
  size_t SeriesCount() const { return series_count_; }
  // New series not given a key because of max_series (counted once per sample seen).
  size_t DroppedSeries() const { return dropped_series_; }
  const std::string& Endpoint() const { return endpoint_; }

  // Whether runmon keys samples of this type (counter, gauge, untyped, unknown).
  static bool UsesType(MetricType type);

 private:
  std::string endpoint_;
  const SeriesFilter* filter_;
  SeriesKeysOptions options_;
  std::map<std::string, std::vector<Labels>> table_;
  std::map<std::string, std::map<Labels, size_t>, std::less<>> index_;
  size_t series_count_ = 0;
  size_t dropped_series_ = 0;
};

}  // namespace runmon::openmetrics
