// Which chart a metric key belongs to, and under what series name. System keys are grouped by base key
// through the metric catalog (each descriptor's merge partner, sidebar rank and series label): gpu.0.temp and
// gpu.1.temp are the series "GPU 0" and "GPU 1" of the chart "GPU temperature (°C)"; pairs that read best
// together share a chart (a device's read and write, network sent and received, PCIe and NVLink sent and
// received). Keys may end in W&B's "/l:<label>" suffix (x_label; the DCGM exporter's node, so a key can have
// two): the key without it has the catalog meaning, and the label joins the series name, while the full key
// stays the series' identity (two nodes' gpu.0.temp are two series of one chart). Keys the catalog does
// not know are never dropped: they go to the "Other" section, grouped by their name without a trailing
// numeric index (openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.0 and .1 share a chart). Logged (history) keys get one
// chart each, in key order.
//
// The user's filter (`/`) is matched against chart titles and keys, case-insensitively and unanchored: a
// regular expression (RE2, linear time, so a hostile pattern cannot hang the UI), or a glob (* and ?) when
// glob mode is on; a pattern without metacharacters, or an invalid regex, is a plain substring test.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runview/run_model.hpp"
#include "runview/time_series.hpp"

namespace re2 {
class RE2;
}

namespace runmon::runview {

enum class ChartSection { kSystem, kOther, kLogged };

struct KeyIdentity {
  std::string chart_id;  // what charts group by: a catalog pattern, a merged id, or an unknown key's base
  std::string title;     // chart title without the unit
  std::string unit;      // catalog unit ("" when unknown)
  std::string series;    // series name within the chart ("" when the chart has one series)
  int order = 0;         // charts sort by this, then by id
  ChartSection section = ChartSection::kSystem;
};

// A key without its "/l:" suffixes, and their labels joined by spaces ("gpu.0.temp/l:n1/l:a" -> "gpu.0.temp",
// "n1 a"); a key without one is its own base.
struct LabelledKey {
  std::string_view base;
  std::string label;
};
LabelledKey SplitKeyLabel(std::string_view key);

KeyIdentity IdentifySystemKey(std::string_view key);
KeyIdentity IdentifyHistoryKey(std::string_view key);

struct ChartMember {
  std::string key;
  std::string series;  // display name (prefixed with the run's label when several runs are overlaid)
  size_t run = 0;      // index into the runs the groups were built from
  const TimeSeries* data = nullptr;
};

struct ChartGroup {
  std::string id;
  std::string title;
  std::string unit;
  ChartSection section = ChartSection::kSystem;
  int order = 0;
  XAxisKind x_axis = XAxisKind::kElapsedSeconds;
  std::vector<ChartMember> members;
};

// Charts over the runs' system metrics (system charts, then "Other"), or over their logged metrics.
// `run_labels` name the runs for series names when there is more than one.
std::vector<ChartGroup> GroupSystemCharts(std::span<const RunModel* const> runs,
                                          std::span<const std::string> run_labels);
std::vector<ChartGroup> GroupHistoryCharts(std::span<const RunModel* const> runs,
                                           std::span<const std::string> run_labels);
// The system charts in the order the system sidebar shows them: GPU utilisation and memory, CPU, RAM, disk
// I/O, network first, then the rest in catalog order.
void SortForSidebar(std::vector<ChartGroup>& groups);

class MetricFilter {
 public:
  MetricFilter();
  ~MetricFilter();
  MetricFilter(MetricFilter&&) noexcept;
  MetricFilter& operator=(MetricFilter&&) noexcept;

  // An empty pattern matches everything.
  void Set(std::string_view pattern, bool glob);
  const std::string& pattern() const { return pattern_; }
  bool glob() const { return glob_; }
  bool empty() const { return pattern_.empty(); }
  bool Matches(std::string_view text) const;
  bool Matches(const ChartGroup& group) const;

 private:
  std::string pattern_;
  bool glob_ = false;
  std::string lowered_;              // the substring form
  std::unique_ptr<re2::RE2> regex_;  // null: substring test
};

}  // namespace runmon::runview
