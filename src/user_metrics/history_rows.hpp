// The command's metrics lines (metric_line.hpp) made into W&B history rows and a summary, as W&B's SDK and
// core make them from wandb.log() calls. Pure: the caller says when each line came.
//   - A line with `_step` s: values for step s. While a row at s is open, they join it; a larger s closes
//     the open row and opens one at s; s equal to the last row's step after that row was closed opens a
//     new row at s (no value is lost); a smaller s is refused ("_step 3 is behind step 9"), as W&B refuses
//     a step that goes back.
//   - A line without `_step` continues from the last: it joins the open row and closes it (W&B's commit),
//     else it is a row of its own at the last step + 1 (step 0 first).
//   - A row open longer than the idle time (no line for it) is closed by FlushIdle, so a run that logs a
//     step and then works for an hour shows it meanwhile; Finish closes the last.
//   - Within a row a key logged twice keeps its last value. A row's time is its first line's `_timestamp`,
//     else when that line came.
//   - The summary is each key's last value in any row, then what summary lines set (runmon.summary()), in
//     the order keys first came. Past kMaxKeys distinct keys a row or the summary takes no new key (the
//     values are counted as dropped), so a writer making up keys cannot grow runmon without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.hpp"
#include "user_metrics/metric_line.hpp"

namespace runmon::user_metrics {

struct HistoryRow {
  int64_t step = 0;
  double timestamp = 0;  // seconds since the epoch
  std::vector<MetricItem> items;
};

class HistoryAssembler {
 public:
  static constexpr size_t kMaxKeys = 100000;

  // The line came at `now_seconds` (since the epoch). Rows it closes are appended to `closed`. An error
  // (a step that goes back) leaves everything as it was.
  Status Add(MetricLine line, double now_seconds, std::vector<HistoryRow>& closed);
  // Closes the open row if no line joined it for `idle_seconds`.
  void FlushIdle(double now_seconds, double idle_seconds, std::vector<HistoryRow>& closed);
  // Closes the open row (the command is done).
  void Finish(std::vector<HistoryRow>& closed);

  std::vector<MetricItem> Summary() const;
  uint64_t rows() const { return rows_; }
  uint64_t values_dropped() const { return values_dropped_; }  // past kMaxKeys

 private:
  struct OpenRow {
    HistoryRow row;
    std::unordered_map<std::string, size_t> index;  // key -> its place in row.items, from kIndexFrom keys
    double last_seconds;                            // when a line last joined it (set as it opens)
  };
  static constexpr size_t kIndexFrom = 16;
  void Join(OpenRow& open, std::vector<MetricItem>& items, double now_seconds);
  void Close(std::vector<HistoryRow>& closed);
  // Keeps the value as the key's latest; false (nothing kept) for a new key past kMaxKeys.
  bool Remember(const MetricItem& item, bool explicit_summary);

  std::optional<OpenRow> open_;
  std::optional<int64_t> last_step_;  // of the last row opened
  uint64_t rows_ = 0;
  uint64_t values_dropped_ = 0;
  // The summary: values by key, and the keys in the order they came; explicit ones win over history's.
  struct SummaryValue {
    std::string history;
    std::optional<std::string> set;
  };
  std::unordered_map<std::string, SummaryValue> summary_;
  std::vector<std::string> summary_order_;
};

}  // namespace runmon::user_metrics
