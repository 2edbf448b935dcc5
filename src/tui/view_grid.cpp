// The view's chart grids (see view.hpp): a page of charts in rows and columns, one x range for the page,
// each chart drawn in its mode (line, log, heatmap) with the guides chosen, in the config's colours. The
// colour rules are W&B LEET's: runs overlaid in a workspace each take the run's own colour (its id hashed
// into color_scheme, the next free one when two overlaid runs would share it); in one run's view a
// logged metric's chart takes the run's colour (per_series) or its own from per_plot_color_scheme
// (per_plot), and system charts start from system_color_scheme's first colour (per_series) or their own
// (per_plot); the series of a multi-series chart follow the palette from there.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tui/color_scheme.hpp"
#include "tui/heatmap_chart.hpp"
#include "tui/line_chart.hpp"
#include "tui/view.hpp"
#include "tui/view_style.hpp"

namespace runmon::tui {

using namespace view_style;

namespace {

// Percentage charts with this many series or more start as heatmaps: a many-core CPU, a node of 8 GPUs.
// (W&B's LEET starts every chart as lines and offers the heatmap through `y` alone.)
constexpr size_t kHeatmapSeries = 8;

}  // namespace

ChartMode LeetView::ModeOf(const runview::ChartGroup& group) const {
  if (const auto chosen = chart_modes_.find(group.id); chosen != chart_modes_.end()) return chosen->second;
  return group.unit == "%" && group.members.size() >= kHeatmapSeries ? ChartMode::kHeatmap
                                                                     : ChartMode::kLinear;
}

void LeetView::AssignRunColors(const ViewModel& model) {
  const std::span<const int16_t> palette = SchemeColors(settings_.color_scheme);
  run_colors_.clear();
  run_color_ids_.clear();
  std::vector<bool> taken(palette.size(), false);
  for (size_t i = 0; i < model.chart_runs.size(); ++i) {
    const std::string& id = model.chart_runs[i]->overview().id;
    run_color_ids_.push_back(!id.empty()                         ? id
                             : i < model.chart_run_labels.size() ? model.chart_run_labels[i]
                                                                 : std::string());
    size_t index = StableColorIndex(run_color_ids_.back(), palette.size());
    // Overlaid runs keep apart while the palette has colours to spare.
    if (i < palette.size()) {
      while (taken[index]) index = (index + 1) % palette.size();
      taken[index] = true;
    }
    run_colors_.push_back(palette[index]);
  }
}

void LeetView::ColorSeries(const runview::ChartGroup& group, ChartSpec& spec) const {
  spec.heat_ramp = SchemeColors(settings_.french_fries_color_scheme);
  const bool logged = group.section == runview::ChartSection::kLogged;
  // Several runs, at most one series each: a series is its run.
  if (run_colors_.size() > 1) {
    std::vector<bool> seen(run_colors_.size(), false);
    bool one_each = true;
    for (const runview::ChartMember& member : group.members) {
      if (member.run >= seen.size() || seen[member.run]) one_each = false;
      if (member.run < seen.size()) seen[member.run] = true;
    }
    if (one_each) {
      for (size_t m = 0; m < group.members.size(); ++m)
        spec.series[m].color = run_colors_[group.members[m].run];
      return;
    }
  }
  const ColorMode mode = logged ? settings_.single_run_color_mode : settings_.system_color_mode;
  const std::span<const int16_t> palette =
      SchemeColors(!logged                       ? settings_.system_color_scheme
                   : mode == ColorMode::kPerPlot ? settings_.per_plot_color_scheme
                                                 : settings_.color_scheme);
  size_t base = 0;
  if (mode == ColorMode::kPerPlot) {
    const auto it = plot_colors_.find((logged ? "m " : "s ") + group.id);
    if (it != plot_colors_.end()) base = it->second;
  }
  for (size_t m = 0; m < spec.series.size(); ++m) {
    spec.series[m].color = palette[(base + m) % palette.size()];
  }
  // A logged metric of one run, per series: the run's own colour.
  if (logged && mode == ColorMode::kPerSeries && spec.series.size() == 1 && run_colors_.size() == 1) {
    spec.series[0].color = run_colors_[0];
  }
}

void LeetView::UseDetail(const runview::ChartGroup& group, double x0, double x1, ChartSpec& spec) {
  uint64_t data_version = 0;
  bool any = false;
  for (const runview::RunModel* run : chart_runs_) {
    data_version += run->data_version();
    any = any ||
          (run->detail() && run->detail()->SegmentsIn(x0, x1) <= runview::DetailReader::kMaxWindowSegments);
  }
  if (!any) {
    detail_.erase(group.id);
    return;
  }
  ChartDetail& detail = detail_[group.id];
  if (detail.x0 != x0 || detail.x1 != x1 || detail.data_version != data_version ||
      detail.windows.size() != chart_runs_.size()) {
    detail = {x0, x1, data_version,
              std::vector<std::shared_ptr<const runview::DetailWindow>>(chart_runs_.size())};
    for (size_t run = 0; run < chart_runs_.size(); ++run) {
      const auto& reader = chart_runs_[run]->detail();
      if (!reader) continue;
      std::vector<std::string> keys;
      for (const runview::ChartMember& member : group.members) {
        if (member.run == run) keys.push_back(member.key);
      }
      detail.windows[run] = reader->Window(x0, x1, keys, *chart_runs_[run]);
    }
  }
  for (size_t m = 0; m < group.members.size() && m < spec.series.size(); ++m) {
    const runview::ChartMember& member = group.members[m];
    if (member.run >= detail.windows.size() || !detail.windows[member.run]) continue;
    const auto& series = detail.windows[member.run]->series;
    if (const auto found = series.find(member.key); found != series.end())
      spec.series[m].data = &found->second;
  }
}

void LeetView::RenderGrid(CellGrid& grid, Rect area, Pane pane, const std::string& heading,
                          const std::vector<const runview::ChartGroup*>& charts,
                          const runview::MetricFilter& filter, GridState& state) {
  if (area.empty()) return;
  const bool focused = focus_ == pane;
  state.chart_count = charts.size();
  const Rect chart_area{area.x, area.y + 1, area.width, area.height - 1};
  state.shown_columns = std::clamp(std::min(state.columns, chart_area.width / kMinChartWidth), 1, 9);
  state.shown_rows = std::clamp(std::min(state.rows, chart_area.height / kMinChartHeight), 1, 9);
  // Charts that fit on one page share the height among the rows they use.
  const int rows_needed = static_cast<int>((charts.size() + static_cast<size_t>(state.shown_columns) - 1) /
                                           static_cast<size_t>(state.shown_columns));
  if (rows_needed > 0 && rows_needed < state.shown_rows) state.shown_rows = rows_needed;
  if (state.page >= state.pages()) state.page = state.pages() - 1;
  const size_t first = state.page * state.page_size();
  const size_t on_page = std::min(state.page_size(), charts.size() - std::min(first, charts.size()));
  if (on_page > 0 && state.focused >= on_page) state.focused = on_page - 1;

  // The page comes before the count: a narrow pane cuts the end of the line.
  std::string header = " " + heading;
  if (state.pages() > 1) header += fmt::format(" [{}/{}]", state.page + 1, state.pages());
  header += fmt::format(" · {} chart{}", charts.size(), charts.size() == 1 ? "" : "s");
  if (!filter.empty()) header += " · filter: " + filter.pattern();
  grid.PutText(area.x, area.y, header, focused ? kFocusStyle : kBoldStyle, area.width);

  if (charts.empty()) {
    const std::string message =
        filter.empty() ? "no metrics yet" : fmt::format("no charts match \"{}\"", filter.pattern());
    PutCentred(grid, chart_area, chart_area.y + chart_area.height / 2, message, kDimStyle);
    return;
  }
  // One x range for the whole grid: charts line up, and a key that starts late shows where it started.
  double range_min = 0;
  double range_max = 0;
  bool any = false;
  for (const runview::ChartGroup* group : charts) {
    for (const runview::ChartMember& member : group->members) {
      if (member.data->empty()) continue;
      range_min = any ? std::min(range_min, member.data->first_x()) : member.data->first_x();
      range_max = any ? std::max(range_max, member.data->last_x()) : member.data->last_x();
      any = true;
    }
  }
  if (range_max <= range_min) range_max = range_min + 1;
  for (size_t i = 0; i < on_page; ++i) {
    const runview::ChartGroup& group = *charts[first + i];
    const int row = static_cast<int>(i) / state.shown_columns;
    const int column = static_cast<int>(i) % state.shown_columns;
    const int x0 = SpanStart(chart_area.width, state.shown_columns, column);
    const int x1 = SpanStart(chart_area.width, state.shown_columns, column + 1);
    const int y0 = SpanStart(chart_area.height, state.shown_rows, row);
    const int y1 = SpanStart(chart_area.height, state.shown_rows, row + 1);
    const Rect cell{chart_area.x + x0, chart_area.y + y0, x1 - x0, y1 - y0};

    ChartSpec spec;
    spec.title = group.section == runview::ChartSection::kOther ? "other: " + group.title : group.title;
    spec.unit = group.unit;
    spec.x_axis = group.x_axis;
    const ChartMode mode = ModeOf(group);
    spec.log_scale = mode == ChartMode::kLog;
    spec.guides = guides_;
    spec.focused = focused && i == state.focused;
    for (const runview::ChartMember& member : group.members) {
      spec.series.push_back({member.series.empty() ? "last" : member.series, member.data});
    }
    ColorSeries(group, spec);
    double x_min = range_min;
    double x_max = range_max;
    // Zoom: a span ending at the newest point, so a zoomed chart still follows a live run.
    const double full_span = x_max - x_min;
    if (auto zoom = zoom_.find(group.id); zoom != zoom_.end() && zoom->second < full_span) {
      x_min = x_max - zoom->second;
    }
    if (group.section != runview::ChartSection::kLogged) UseDetail(group, x_min, x_max, spec);
    spec.x_start = x_min;
    spec.x_end = x_max;
    if (mode == ChartMode::kHeatmap) {
      DrawHeatmapChart(grid, cell, spec);
    } else {
      DrawLineChart(grid, cell, spec);
    }
    placed_.push_back({cell, pane, i, group.id, group.unit == "%", any ? full_span : 0, x_max - x_min});
  }
}

}  // namespace runmon::tui
