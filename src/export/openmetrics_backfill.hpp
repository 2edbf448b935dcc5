// A recorded run's values as OpenMetrics 1.0 text with timestamps, for Prometheus' backfill (`promtool tsdb
// create-blocks-from openmetrics FILE DIR`; `runmon dump --format openmetrics`). Names, TYPE, HELP, labels
// and base units are the exporter's (prometheus_names.hpp), so a backfilled run and a scraped one are the
// same series; the constant labels are the run's: host, run_id, job_id and node_rank (an empty one is left
// out).
//
// OpenMetrics wants each family's samples together (families never interleave), each series' samples in
// timestamp order and `# EOF` last, while a run log holds its values in time order, every family in every
// record. So the run is read more than once: a survey counts each series' values, then each later reading
// collects the values of a range of families (in catalog order) whose points fit `points_per_pass`, sorted
// and written before the next reading. Memory is thus the points of one pass (16 bytes each; the default is
// 4 Mi points, 64 MiB) plus one entry per series and per distinct key, whatever the run's length: a week at
// the default 15 s interval with 8 GPUs (11 million values) takes four readings, the survey and three
// passes. One family bigger than the budget gets a pass of its own (its points are all held then).
//
// Odd cases: counters are named as OpenMetrics names them, the family without `_total` and its samples with
// it; UNIT is written where the name ends in the unit, as OpenMetrics requires. Two values of a series at
// the same millisecond (a key given twice in a record, two keys whose label values become the same once made
// valid UTF-8, a clock that stepped back) keep the one read last and count the others as duplicates: the
// TSDB refuses two different values at one time. Keys without a Prometheus name are left out and counted.
// Timestamps are milliseconds (Prometheus' resolution) written as seconds with three decimals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace runmon {

struct BackfillLabels {
  std::string host;
  std::string run_id;
  std::string job_id;
  std::string node_rank;
};

inline constexpr size_t kDefaultBackfillPointsPerPass = size_t{4} << 20;

struct BackfillCounts {
  uint64_t values_written = 0;     // samples in the text
  uint64_t series = 0;             // distinct series (family and label values)
  uint64_t families = 0;           // families with at least one sample
  uint64_t duplicates = 0;         // values replaced by a later one at the same millisecond
  uint64_t unexported_values = 0;  // values of keys without a Prometheus name (counted by the survey)
  uint64_t unexported_keys = 0;    // distinct such keys
};

class OpenMetricsBackfill {
 public:
  // Receives the text in pieces; false stops the writing.
  using Writer = std::function<bool(std::string_view)>;

  explicit OpenMetricsBackfill(size_t points_per_pass = kDefaultBackfillPointsPerPass);

  // The survey: every value's key, in the run's order. False for a key without a Prometheus name (left out).
  bool Survey(std::string_view key);
  // Ends the survey: how many readings the values need (0 when none has a name).
  size_t Plan();
  // Reading `pass` (0 .. Plan()-1): every value again, in the same order, with its time. Values of families
  // another pass writes, and keys the survey did not see, are passed over.
  void Collect(size_t pass, int64_t timestamp_ms, std::string_view key, double value);
  // Writes the families of `pass` from what Collect gathered, and frees their points.
  bool WritePass(size_t pass, const BackfillLabels& labels, const Writer& write);
  // `# EOF`, after the last pass (alone for a run without values).
  bool WriteEnd(const Writer& write);

  const BackfillCounts& counts() const { return counts_; }
  // Up to the first 5 keys without a Prometheus name, for the report.
  const std::vector<std::string>& unexported_examples() const { return unexported_examples_; }

 private:
  struct Point {
    int64_t timestamp_ms;
    double value;
  };
  struct Series {
    size_t family = 0;  // index into PrometheusMetrics()
    std::string label_value = {};
    uint64_t surveyed = 0;
    std::vector<Point> points = {};
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  static constexpr size_t kNoSeries = static_cast<size_t>(-1);

  size_t points_per_pass_;
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> key_series_;  // kNoSeries: no name
  std::vector<Series> series_;
  std::unordered_map<std::string, size_t> series_by_identity_;  // "family\nlabel value" -> series
  std::vector<std::vector<size_t>> family_series_;        // per family, its series in order of appearance
  std::vector<std::pair<size_t, size_t>> pass_families_;  // [first, last) families of each pass
  BackfillCounts counts_;
  std::vector<std::string> unexported_examples_;
};

}  // namespace runmon
