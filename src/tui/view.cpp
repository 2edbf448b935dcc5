// The TUI's screen: its state and its layout (see view.hpp). Input is view_input.cpp; the chart grids,
// sidebars and status bar draw in view_grid.cpp, view_sidebar.cpp and view_status.cpp.
#include "tui/view.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tui/view_style.hpp"

namespace runmon::tui {

using namespace view_style;

namespace {

constexpr double kMinFraction = 0.05;
constexpr double kMaxFraction = 0.9;

// A sidebar's width: the dragged share of the terminal, else LEET-like defaults.
int SidebarWidth(int width, double fraction, int percent, int low, int high) {
  if (fraction > 0) {
    return static_cast<int>(std::lround(width * std::clamp(fraction, kMinFraction, kMaxFraction)));
  }
  return std::clamp(width * percent / 100, low, high);
}

}  // namespace

LeetView::LeetView(LeetViewSettings settings)
    : settings_(settings),
      left_visible_(settings.left_sidebar_visible),
      right_visible_(settings.right_sidebar_visible),
      metrics_visible_(settings.metrics_grid_visible),
      guides_(static_cast<ChartSpec::Guides>(std::clamp(settings.chart_guides, 0, 2))) {
  if (settings.console_logs_visible) console_.Toggle();
  right_.rows = std::clamp(settings_.system_grid.rows, 1, 9);
  right_.columns = std::clamp(settings_.system_grid.columns, 1, 9);
}

Screen LeetView::CurrentScreen() const {
  if (symon_shown_) return kSymonScreen;
  return shown_mode_ == LeetMode::kWorkspace ? kWorkspaceScreen : kRunScreen;
}

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
  layout_ = {};
  run_count_ = model.mode == LeetMode::kWorkspace ? model.runs.size() : 0;
  symon_shown_ = model.symon;
  // A workspace starts on its runs list; a run that is opened, on its charts. Each screen has its own grid.
  if (!shown_mode_ || *shown_mode_ != model.mode) {
    focus_ = model.mode == LeetMode::kWorkspace ? Pane::kLeft : Pane::kCentre;
    shown_mode_ = model.mode;
    const LeetViewSettings::Grid& size = model.symon ? settings_.symon_grid
                                         : model.mode == LeetMode::kWorkspace
                                             ? settings_.workspace_metrics_grid
                                             : settings_.metrics_grid;
    centre_.rows = std::clamp(size.rows, 1, 9);
    centre_.columns = std::clamp(size.columns, 1, 9);
    centre_.page = centre_.focused = 0;
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

  // Charts after the filters. The centre shows logged metrics when there are any, else system metrics; the
  // right sidebar shows system metrics only when the centre does not already.
  centre_shows_history_ = !history_groups_.empty();
  std::vector<const runview::ChartGroup*> centre_charts;
  const runview::MetricFilter& centre_filter = centre_shows_history_ ? metrics_filter_ : system_filter_;
  for (const auto& group : centre_shows_history_ ? history_groups_ : system_groups_) {
    if (centre_filter.Matches(group)) centre_charts.push_back(&group);
  }
  std::vector<const runview::ChartGroup*> right_charts;
  for (const auto& group : sidebar_groups_) {
    if (system_filter_.Matches(group)) right_charts.push_back(&group);
  }
  const bool right_wanted = right_visible_ && !model.symon && (centre_shows_history_ || !metrics_visible_);

  int left_width = left_visible_ ? SidebarWidth(width, settings_.left_sidebar_fraction, 22, 26, 44) : 0;
  int right_width = right_wanted ? SidebarWidth(width, settings_.right_sidebar_fraction, 26, 26, 64) : 0;
  if (width - left_width - right_width < kMinCentreWidth) right_width = 0;
  if (width - left_width - right_width < kMinCentreWidth) left_width = 0;
  left_shown_ = left_width > 0;
  right_shown_ = right_width > 0;
  const int body_height = height - 1;
  layout_.width = width;
  layout_.body_height = body_height;
  if (left_shown_) layout_.left_edge_x = left_width - 1;
  if (right_shown_) layout_.right_edge_x = width - right_width;

  // The centre column: the metrics grid over the console-logs pane; a pane alone takes the column.
  const int centre_width = width - left_width - right_width;
  int console_height = 0;
  if (console_.visible()) {
    if (!metrics_visible_) {
      console_height = body_height;
    } else {
      const double fraction = settings_.console_logs_fraction > 0
                                  ? std::clamp(settings_.console_logs_fraction, kMinFraction, kMaxFraction)
                                  : ConsolePane::kHeightRatio;
      console_height =
          std::max(ConsolePane::kMinHeight, static_cast<int>(std::lround(body_height * fraction)));
      if (body_height - console_height < kMinChartHeight + 1) console_height = 0;
      if (console_height > 0) layout_.console_edge_y = body_height - console_height;
    }
  }
  const bool metrics_shown = metrics_visible_;
  if ((focus_ == Pane::kLeft && !left_shown_) || (focus_ == Pane::kRight && !right_shown_) ||
      (focus_ == Pane::kConsole && console_height == 0)) {
    focus_ = Pane::kCentre;
  }
  if (focus_ == Pane::kCentre && !metrics_shown && console_height > 0) focus_ = Pane::kConsole;

  if (left_shown_) RenderLeft(grid, {0, 0, left_width, body_height}, model);
  const Rect metrics_area{left_width, 0, centre_width, body_height - console_height};
  if (metrics_shown) {
    RenderGrid(grid, metrics_area, Pane::kCentre, centre_shows_history_ ? "Metrics" : "System metrics",
               centre_charts, centre_filter, centre_);
  } else if (console_height == 0) {
    PutCentred(grid, metrics_area, metrics_area.height / 2, "metrics grid hidden (1 shows it)", kDimStyle);
  }
  if (console_height > 0) {
    console_.Render(grid, {left_width, body_height - console_height, centre_width, console_height},
                    model.console, model.console_label, focus_ == Pane::kConsole);
  } else {
    console_.NotDrawn();
  }
  if (right_shown_) {
    RenderGrid(grid, {width - right_width, 0, right_width, body_height}, Pane::kRight, "System", right_charts,
               system_filter_, right_);
  }
  RenderStatus(grid, {0, height - 1, width, 1}, model);
  if (help_visible_) RenderHelp(grid);
  return grid;
}

}  // namespace runmon::tui
