// The TUI's screen: its state and rendering into a CellGrid (input handling: view_input.cpp). See view.hpp.
#include "tui/view.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "tui/line_chart.hpp"
#include "tui/value_format.hpp"

namespace runmon::tui {
namespace {

constexpr int kMinWidth = 40;
constexpr int kMinHeight = 12;
constexpr int kMinCentreWidth = 28;
constexpr int kMinChartWidth = 20;
constexpr int kMinChartHeight = 6;

// Series colours (xterm-256): distinct on dark and light backgrounds.
constexpr std::array<int16_t, 10> kPalette = {75, 209, 114, 204, 141, 221, 80, 174, 147, 186};

constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kBoldStyle{kDefaultColor, kDefaultColor, kBold};
constexpr Style kStatusStyle{252, 236, kNoAttributes};
constexpr Style kWarningStyle{214, kDefaultColor, kBold};

Style StateStyle(runview::RunState state) {
  switch (state) {
    case runview::RunState::kRunning:
      return {114, kDefaultColor, kBold};
    case runview::RunState::kFinished:
      return {75, kDefaultColor, kBold};
    case runview::RunState::kFailed:
      return {203, kDefaultColor, kBold};
    case runview::RunState::kCrashed:
      return {214, kDefaultColor, kBold};
    case runview::RunState::kNotARunLog:
      return kWarningStyle;
  }
  return {};
}

std::string FormatLocalTime(double seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(seconds));
  std::tm local{};
  if (localtime_r(&whole, &local) == nullptr) return "?";
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S", &local);
  return text.data();
}

std::string GroupedCount(uint64_t count) {
  std::string digits = std::to_string(count);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) {
    digits.insert(static_cast<size_t>(at), ",");
  }
  return digits;
}

// Splits `area` into `parts` spans as equal as possible (the first ones one cell longer).
int SpanStart(int total, int parts, int index) {
  return total / parts * index + std::min(index, total % parts);
}

void PutCentred(CellGrid& grid, Rect area, int y, std::string_view text, Style style) {
  const int width = std::min(DisplayWidth(text), area.width);
  grid.PutText(area.x + (area.width - width) / 2, y, text, style, area.width);
}

}  // namespace

LeetView::LeetView() = default;

// ---- rendering -------------------------------------------------------------------------------------------

void LeetView::RefreshGroups(const ViewModel& model) {
  std::vector<std::pair<const runview::RunModel*, uint64_t>> signature;
  for (const runview::RunModel* run : model.chart_runs) signature.emplace_back(run, run->keys_version());
  if (signature == groups_signature_) return;
  groups_signature_ = std::move(signature);
  system_groups_ = runview::GroupSystemCharts(model.chart_runs, model.chart_run_labels);
  sidebar_groups_ = system_groups_;
  runview::SortForSidebar(sidebar_groups_);
  history_groups_ = runview::GroupHistoryCharts(model.chart_runs, model.chart_run_labels);
}

CellGrid LeetView::Render(const ViewModel& model, int width, int height) {
  CellGrid grid(width, height);
  placed_.clear();
  run_count_ = model.mode == LeetMode::kWorkspace ? model.runs.size() : 0;
  // A workspace starts on its runs list; a run that is opened, on its charts.
  if (!shown_mode_ || *shown_mode_ != model.mode) {
    focus_ = model.mode == LeetMode::kWorkspace ? Pane::kLeft : Pane::kCentre;
    shown_mode_ = model.mode;
  }
  if (run_count_ > 0 && run_cursor_ >= run_count_) run_cursor_ = run_count_ - 1;
  RefreshGroups(model);

  if (width < kMinWidth || height < kMinHeight) {
    const Rect all = grid.bounds();
    const std::string size = fmt::format("{}x{}", width, height);
    PutCentred(grid, all, height / 2 - 1, "terminal too small", kBoldStyle);
    PutCentred(grid, all, height / 2, size + fmt::format(" (needs {}x{})", kMinWidth, kMinHeight), {});
    left_shown_ = right_shown_ = false;
    return grid;
  }

  if (model.symon && !symon_grid_set_) {
    centre_.rows = centre_.columns = 3;
    symon_grid_set_ = true;
  }
  int left_width = left_visible_ ? std::clamp(width * 22 / 100, 26, 44) : 0;
  int right_width = right_visible_ && !model.symon ? std::clamp(width * 26 / 100, 26, 64) : 0;
  if (width - left_width - right_width < kMinCentreWidth) right_width = 0;
  if (width - left_width - right_width < kMinCentreWidth) left_width = 0;
  left_shown_ = left_width > 0;
  right_shown_ = right_width > 0;
  if ((focus_ == Pane::kLeft && !left_shown_) || (focus_ == Pane::kRight && !right_shown_)) {
    focus_ = Pane::kCentre;
  }
  const int body_height = height - 1;

  // Charts after the filter. The centre shows logged metrics when there are any, else system metrics.
  centre_shows_history_ = !history_groups_.empty();
  std::vector<const runview::ChartGroup*> centre_charts;
  for (const auto& group : centre_shows_history_ ? history_groups_ : system_groups_) {
    if (filter_.Matches(group)) centre_charts.push_back(&group);
  }
  std::vector<const runview::ChartGroup*> right_charts;
  for (const auto& group : sidebar_groups_) {
    if (filter_.Matches(group)) right_charts.push_back(&group);
  }

  if (left_shown_) RenderLeft(grid, {0, 0, left_width, body_height}, model);
  // The console-logs pane takes the bottom of the centre column, as long as the charts keep a row.
  const int centre_width = width - left_width - right_width;
  int console_height = 0;
  if (console_.visible()) {
    console_height = std::max(ConsolePane::kMinHeight,
                              static_cast<int>(std::lround(body_height * ConsolePane::kHeightRatio)));
    if (body_height - console_height < kMinChartHeight + 1) console_height = 0;
  }
  if (console_height == 0 && focus_ == Pane::kConsole) focus_ = Pane::kCentre;
  RenderGrid(grid, {left_width, 0, centre_width, body_height - console_height}, Pane::kCentre,
             centre_shows_history_ ? "Metrics" : "System metrics", centre_charts, centre_);
  if (console_height > 0) {
    console_.Render(grid, {left_width, body_height - console_height, centre_width, console_height},
                    model.console, model.console_label, focus_ == Pane::kConsole);
  } else {
    console_.NotDrawn();
  }
  if (right_shown_) {
    RenderGrid(grid, {width - right_width, 0, right_width, body_height}, Pane::kRight, "System", right_charts,
               right_);
  }
  RenderStatus(grid, {0, height - 1, width, 1}, model);
  if (help_visible_) RenderHelp(grid);
  return grid;
}

void LeetView::RenderLeft(CellGrid& grid, Rect area, const ViewModel& model) {
  if (model.mode == LeetMode::kWorkspace) {
    RenderRunsList(grid, area, model);
  } else {
    RenderOverview(grid, area, model);
  }
}

void LeetView::RenderOverview(CellGrid& grid, Rect area, const ViewModel& model) {
  const bool focused = focus_ == Pane::kLeft;
  const Style border = focused ? Style{75, kDefaultColor, kBold} : kDimStyle;
  grid.DrawBox(area, border, "Run overview");
  const Rect inner{area.x + 2, area.y + 1, area.width - 4, area.height - 2};
  if (model.overview_run == nullptr) {
    grid.PutText(inner.x, inner.y, "no run open", kDimStyle, inner.width);
    return;
  }
  const runview::RunModel& run = *model.overview_run;
  const runview::RunOverview& overview = run.overview();
  struct Line {
    std::string label;  // empty: a section heading in `value`
    std::string value;
    Style style;
  };
  std::vector<Line> lines;
  lines.push_back(
      {"State", std::string(runview::RunStateName(model.overview_state)), StateStyle(model.overview_state)});
  if (overview.exit_code) lines.push_back({"Exit code", std::to_string(*overview.exit_code), {}});
  lines.push_back({"ID", overview.id.empty() ? "?" : overview.id, {}});
  if (!overview.name.empty()) lines.push_back({"Name", runview::ShortName(overview.name), {}});
  if (!overview.project.empty()) lines.push_back({"Project", overview.project, {}});
  if (!overview.host.empty()) lines.push_back({"Host", overview.host, {}});
  if (overview.start_time) lines.push_back({"Started", FormatLocalTime(*overview.start_time), {}});
  if (const auto runtime = runview::RunRuntime(overview, model.overview_state, model.now_seconds)) {
    lines.push_back({"Runtime", FormatDuration(*runtime), {}});
  }
  lines.push_back({"Samples", GroupedCount(run.stats_records()), {}});
  if (!overview.tags.empty()) {
    std::string tags;
    for (const auto& tag : overview.tags) tags += (tags.empty() ? "" : ", ") + tag;
    lines.push_back({"Tags", tags, {}});
  }
  if (!overview.notes.empty()) lines.push_back({"Notes", overview.notes, {}});
  if (!overview.environment.empty()) {
    lines.push_back({"", "Environment", kBoldStyle});
    for (const auto& [label, value] : overview.environment) lines.push_back({label, value, {}});
  }
  if (!overview.config.empty()) {
    lines.push_back({"", "Config", kBoldStyle});
    for (const auto& [key, value] : overview.config) lines.push_back({key, value, {}});
  }
  if (run.skipped_values() > 0) {
    lines.push_back({"Skipped", fmt::format("{} non-numeric values", run.skipped_values()), kWarningStyle});
  }
  const size_t visible = static_cast<size_t>(std::max(0, inner.height));
  if (lines.size() <= visible) overview_scroll_ = 0;
  overview_scroll_ = std::min(overview_scroll_, lines.size() > visible ? lines.size() - visible : 0);
  constexpr int kLabelWidth = 10;
  for (size_t row = 0; row < visible && overview_scroll_ + row < lines.size(); ++row) {
    const Line& line = lines[overview_scroll_ + row];
    const int y = inner.y + static_cast<int>(row);
    if (line.label.empty()) {
      grid.PutText(inner.x, y, "── " + line.value + " ", line.style, inner.width);
      continue;
    }
    grid.PutText(inner.x, y, line.label, kDimStyle, kLabelWidth - 1);
    grid.PutText(inner.x + kLabelWidth, y, line.value, line.style, inner.width - kLabelWidth);
  }
}

void LeetView::RenderRunsList(CellGrid& grid, Rect area, const ViewModel& model) {
  const bool focused = focus_ == Pane::kLeft;
  const Style border = focused ? Style{75, kDefaultColor, kBold} : kDimStyle;
  grid.DrawBox(area, border, fmt::format("Runs ({})", model.runs.size()));
  const Rect inner{area.x + 1, area.y + 1, area.width - 2, area.height - 2};
  if (model.runs.empty()) {
    grid.PutText(inner.x + 1, inner.y, "no runs yet", kDimStyle, inner.width - 1);
    return;
  }
  // Two lines a run: marker and name; state and start time.
  const size_t per_page = static_cast<size_t>(std::max(1, inner.height / 2));
  if (run_cursor_ < runs_scroll_) runs_scroll_ = run_cursor_;
  if (run_cursor_ >= runs_scroll_ + per_page) runs_scroll_ = run_cursor_ + 1 - per_page;
  for (size_t row = 0; row < per_page && runs_scroll_ + row < model.runs.size(); ++row) {
    const size_t index = runs_scroll_ + row;
    const RunListEntry& entry = model.runs[index];
    const int y = inner.y + static_cast<int>(row) * 2;
    const bool cursor = index == run_cursor_;
    Style name_style = cursor ? Style{kDefaultColor, kDefaultColor, focused ? kReverse : kBold} : Style{};
    grid.PutText(inner.x, y, cursor ? "▶" : " ", name_style, 1);
    grid.PutText(inner.x + 1, y, entry.selected ? "●" : "○",
                 entry.selected ? Style{75, kDefaultColor, kBold} : kDimStyle, 1);
    const bool marked = entry.damaged || (entry.summarised && entry.state == runview::RunState::kNotARunLog);
    const int name_x = inner.x + 3 + (marked ? grid.PutText(inner.x + 3, y, "⚠ ", kWarningStyle, 2) : 0);
    grid.PutText(name_x, y, entry.name, name_style, inner.x + inner.width - name_x);
    int x = inner.x + 3;
    x += grid.PutText(x, y + 1, entry.summarised ? runview::RunStateName(entry.state) : "…",
                      entry.summarised ? StateStyle(entry.state) : kDimStyle, inner.width - 3);
    grid.PutText(x, y + 1, " · " + entry.started, kDimStyle, inner.x + inner.width - x);
  }
}

void LeetView::RenderGrid(CellGrid& grid, Rect area, Pane pane, const std::string& heading,
                          const std::vector<const runview::ChartGroup*>& charts, GridState& state) {
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
  if (!filter_.empty()) header += " · filter: " + filter_.pattern();
  grid.PutText(area.x, area.y, header, focused ? Style{75, kDefaultColor, kBold} : kBoldStyle, area.width);

  if (charts.empty()) {
    const std::string message =
        filter_.empty() ? "no metrics yet" : fmt::format("no charts match \"{}\"", filter_.pattern());
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
    spec.log_scale = log_scale_.count(group.id) > 0;
    spec.focused = focused && i == state.focused;
    for (size_t m = 0; m < group.members.size(); ++m) {
      const runview::ChartMember& member = group.members[m];
      spec.series.push_back(
          {member.series.empty() ? "last" : member.series, member.data, kPalette[m % kPalette.size()]});
    }
    double x_min = range_min;
    double x_max = range_max;
    // Zoom: a span ending at the newest point, so a zoomed chart still follows a live run.
    const double full_span = x_max - x_min;
    if (auto zoom = zoom_.find(group.id); zoom != zoom_.end() && zoom->second < full_span) {
      x_min = x_max - zoom->second;
    }
    spec.x_start = x_min;
    spec.x_end = x_max;
    DrawLineChart(grid, cell, spec);
    placed_.push_back({cell, pane, i, group.id, any ? full_span : 0, x_max - x_min});
  }
}

void LeetView::RenderStatus(CellGrid& grid, Rect area, const ViewModel& model) {
  grid.Fill(area, U' ', kStatusStyle);
  if (filter_editing_) {
    const std::string prompt = fmt::format("/{}", filter_text_);
    int x = area.x;
    x += grid.PutText(x, area.y, prompt, Style{255, 236, kBold}, area.width - 1);
    grid.Set(x, area.y, U'▏', Style{255, 236, kBold});
    grid.PutText(x + 2, area.y,
                 fmt::format("{} · tab: {} · enter applies · esc cancels", filter_glob_ ? "glob" : "regex",
                             filter_glob_ ? "regex" : "glob"),
                 kStatusStyle, area.x + area.width - x - 2);
    return;
  }
  std::string left;
  Style left_style = kStatusStyle;
  if (model.mode == LeetMode::kWorkspace) {
    left =
        fmt::format(" {} · {} run{}", model.location, model.runs.size(), model.runs.size() == 1 ? "" : "s");
  } else if (model.overview_run != nullptr) {
    const runview::RunOverview& overview = model.overview_run->overview();
    left = fmt::format(" {} · {}", runview::ShortName(overview.name.empty() ? overview.id : overview.name),
                       runview::RunStateName(model.overview_state));
  }
  if (model.loading) left += fmt::format(" · loading {:.0f}%", model.loaded_fraction * 100);
  const std::string right = "h help · q quit ";
  const int right_width = DisplayWidth(right);
  int x = area.x + grid.PutText(area.x, area.y, left, left_style, area.width - right_width - 1);
  if (!model.warnings.empty()) {
    const int room = area.x + area.width - right_width - x - 3;
    if (room > 4)
      x += grid.PutText(x + 2, area.y, "⚠ " + model.warnings.front(), Style{214, 236, kBold}, room) + 2;
  }
  grid.PutText(area.x + area.width - right_width, area.y, right, kStatusStyle, right_width);
}

void LeetView::RenderHelp(CellGrid& grid) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kKeys = {{
      {"h ?", "this help (any key closes it)"},
      {"q ctrl+c", "quit"},
      {"/", "filter charts (regex; tab: glob)"},
      {"esc", "clear the filter / back to runs"},
      {"ctrl+l", "clear the filter"},
      {"[ ]", "left / right sidebar"},
      {"4", "console logs (arrows scroll, end follows)"},
      {"tab", "next pane"},
      {"arrows wasd", "move focus"},
      {"n N pgdn pgup", "next / previous page"},
      {"home end", "first / last page"},
      {"y", "log scale of the focused chart"},
      {"+ - wheel", "zoom the focused chart"},
      {"r c then 1-9", "grid rows / columns"},
      {"enter", "open the run (runs list)"},
      {"space", "overlay the run (runs list)"},
      {"click", "focus a chart"},
  }};
  const int width = std::min(grid.width() - 2, 56);
  const int height = std::min(grid.height() - 2, static_cast<int>(kKeys.size()) + 4);
  const Rect box{(grid.width() - width) / 2, (grid.height() - height) / 2, width, height};
  grid.Fill(box, U' ', {});
  grid.DrawBox(box, Style{75, kDefaultColor, kBold}, "Keys");
  for (int i = 0; i < static_cast<int>(kKeys.size()) && i < height - 3; ++i) {
    grid.PutText(box.x + 2, box.y + 1 + i, kKeys[static_cast<size_t>(i)].first, kBoldStyle, 16);
    grid.PutText(box.x + 18, box.y + 1 + i, kKeys[static_cast<size_t>(i)].second, {}, width - 20);
  }
  grid.PutText(box.x + 2, box.y + height - 2, "runmon leet: charts of a run log, live", kDimStyle, width - 4);
}

}  // namespace runmon::tui
