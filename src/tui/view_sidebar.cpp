// The view's left sidebar (see view.hpp): the run overview, narrowed by the overview filter (`o`), or a
// workspace's runs list. Tags and the charted runs' markers are in their colours (color_scheme.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tui/color_scheme.hpp"
#include "tui/value_format.hpp"
#include "tui/view.hpp"
#include "tui/view_style.hpp"

namespace runmon::tui {

using namespace view_style;

namespace {

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

}  // namespace

void LeetView::RenderLeft(CellGrid& grid, Rect area, const ViewModel& model) {
  if (model.mode == LeetMode::kWorkspace) {
    RenderRunsList(grid, area, model);
  } else {
    RenderOverview(grid, area, model);
  }
}

void LeetView::RenderTags(CellGrid& grid, int x, int y, int end_x,
                          const std::vector<std::string>& tags) const {
  const std::span<const int16_t> palette = SchemeColors(settings_.tag_color_scheme);
  for (size_t i = 0; i < tags.size() && x < end_x; ++i) {
    if (i > 0) x += grid.PutText(x, y, ", ", kDimStyle, end_x - x);
    const Style style{palette[StableColorIndex(tags[i], palette.size())], kDefaultColor, kBold};
    x += grid.PutText(x, y, tags[i], style, end_x - x);
  }
}

void LeetView::RenderOverview(CellGrid& grid, Rect area, const ViewModel& model) {
  const bool focused = focus_ == Pane::kLeft;
  const Style border = focused ? kFocusStyle : kDimStyle;
  grid.DrawBox(area, border,
               overview_filter_.empty() ? std::string("Run overview")
                                        : "Run overview · filter: " + overview_filter_.pattern());
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
    bool tags = false;  // the run's tags, each drawn in its colour (tag_color_scheme)
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
    lines.push_back({"Tags", tags, {}, /*tags=*/true});
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
  if (!overview_filter_.empty()) {
    // A line stays when its label or value matches; a heading, when a line under it stays.
    std::vector<Line> kept;
    size_t heading = lines.size();
    for (size_t i = 0; i < lines.size(); ++i) {
      Line& line = lines[i];
      if (line.label.empty()) {
        heading = i;
        continue;
      }
      if (!overview_filter_.Matches(line.label) && !overview_filter_.Matches(line.value)) continue;
      if (heading < lines.size()) {
        kept.push_back(std::move(lines[heading]));
        heading = lines.size();
      }
      kept.push_back(std::move(line));
    }
    lines = std::move(kept);
    if (lines.empty()) {
      grid.PutText(inner.x, inner.y, "nothing matches \"" + overview_filter_.pattern() + "\"", kDimStyle,
                   inner.width);
      return;
    }
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
    if (line.tags) {
      RenderTags(grid, inner.x + kLabelWidth, y, inner.x + inner.width, overview.tags);
      continue;
    }
    grid.PutText(inner.x + kLabelWidth, y, line.value, line.style, inner.width - kLabelWidth);
  }
}

void LeetView::RenderRunsList(CellGrid& grid, Rect area, const ViewModel& model) {
  const bool focused = focus_ == Pane::kLeft;
  const Style border = focused ? kFocusStyle : kDimStyle;
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
    // A charted run's marker is in the colour its series have.
    Style marker_style = entry.selected ? kFocusStyle : kDimStyle;
    if (entry.selected && !entry.id.empty()) {
      const auto charted = std::find(run_color_ids_.begin(), run_color_ids_.end(), entry.id);
      if (charted != run_color_ids_.end()) {
        marker_style = {run_colors_[static_cast<size_t>(charted - run_color_ids_.begin())], kDefaultColor,
                        kBold};
      }
    }
    grid.PutText(inner.x + 1, y, entry.selected ? "●" : "○", marker_style, 1);
    const bool marked = entry.damaged || (entry.summarised && entry.state == runview::RunState::kNotARunLog);
    const int name_x = inner.x + 3 + (marked ? grid.PutText(inner.x + 3, y, "⚠ ", kWarningStyle, 2) : 0);
    grid.PutText(name_x, y, entry.name, name_style, inner.x + inner.width - name_x);
    int x = inner.x + 3;
    x += grid.PutText(x, y + 1, entry.summarised ? runview::RunStateName(entry.state) : "…",
                      entry.summarised ? StateStyle(entry.state) : kDimStyle, inner.width - 3);
    grid.PutText(x, y + 1, " · " + entry.started, kDimStyle, inner.x + inner.width - x);
  }
}

}  // namespace runmon::tui
