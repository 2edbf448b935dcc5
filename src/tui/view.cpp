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

// symon's process table: at most this share of the centre column (its rows and frame when fewer), and at
// least this height (a line saying why nothing is listed).
constexpr double kProcessTableRatio = 0.35;
constexpr int kMinProcessTableHeight = 5;

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
  if (settings.media_visible) media_.Toggle();
  media_.SetGrid(std::clamp(settings.media_grid.rows, 1, 9), std::clamp(settings.media_grid.columns, 1, 9));
  right_.rows = std::clamp(settings_.system_grid.rows, 1, 9);
  right_.columns = std::clamp(settings_.system_grid.columns, 1, 9);
}

void LeetView::SourceReplaced() {
  groups_signature_.clear();
  system_groups_.clear();
  sidebar_groups_.clear();
  history_groups_.clear();
  plot_colors_.clear();
  next_history_plot_color_ = next_system_plot_color_ = 0;
  placed_.clear();
  media_.Reset();
  shown_media_ = nullptr;
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
  // Per-plot colours, each chart's for good once it was seen: a chart that appears later takes the next.
  for (const auto& group : history_groups_) {
    if (plot_colors_.try_emplace("m " + group.id, next_history_plot_color_).second)
      ++next_history_plot_color_;
  }
  for (const auto& group : sidebar_groups_) {
    if (plot_colors_.try_emplace("s " + group.id, next_system_plot_color_).second) ++next_system_plot_color_;
  }
}

CellGrid LeetView::Render(const ViewModel& model, int width, int height) {
  CellGrid grid(width, height);
  placed_.clear();
  layout_ = {};
  run_count_ = model.mode == LeetMode::kWorkspace ? model.runs.size() : 0;
  symon_shown_ = model.symon;
  if (model.symon) metrics_visible_ = true;  // symon is its charts: no key hides them
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
  chart_runs_ = model.chart_runs;
  AssignRunColors(model);

  if (width < kMinWidth || height < kMinHeight) {
    const Rect all = grid.bounds();
    const std::string size = fmt::format("{}x{}", width, height);
    PutCentred(grid, all, height / 2 - 1, "terminal too small", kBoldStyle);
    PutCentred(grid, all, height / 2, size + fmt::format(" (needs {}x{})", kMinWidth, kMinHeight), {});
    left_shown_ = right_shown_ = false;
    console_.NotDrawn();
    media_.NotDrawn();
    processes_.NotDrawn();
    help_visible_ = false;  // nothing to read it on: the next key is not spent closing it
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
  // The centre keeps kMinCentreWidth: a sidebar shrinks to fit (the right first) and gives way under
  // kMinSidebarWidth.
  const auto fit = [&](int& sidebar, int other) {
    sidebar = std::min(sidebar, width - other - kMinCentreWidth);
    if (sidebar < kMinSidebarWidth) sidebar = 0;
  };
  if (width - left_width - right_width < kMinCentreWidth) fit(right_width, left_width);
  if (width - left_width - right_width < kMinCentreWidth) fit(left_width, right_width);
  left_shown_ = left_width > 0;
  right_shown_ = right_width > 0;
  const int body_height = height - 1;
  layout_.width = width;
  layout_.body_height = body_height;
  layout_.left_width = left_width;
  layout_.right_width = right_width;
  if (left_shown_) layout_.left_edge_x = left_width - 1;
  if (right_shown_) layout_.right_edge_x = width - right_width;
  if ((focus_ == Pane::kLeft && !left_shown_) || (focus_ == Pane::kRight && !right_shown_))
    focus_ = Pane::kCentre;

  if (left_shown_) RenderLeft(grid, {0, 0, left_width, body_height}, model);
  RenderCentre(grid, {left_width, 0, width - left_width - right_width, body_height}, model, centre_charts,
               centre_filter);
  if (right_shown_) {
    RenderGrid(grid, {width - right_width, 0, right_width, body_height}, Pane::kRight, "System", right_charts,
               system_filter_, right_);
  }
  RenderStatus(grid, {0, height - 1, width, 1}, model);
  if (help_visible_) RenderHelp(grid);
  return grid;
}

// The centre column: the metrics grid over the media pane over the console-logs pane. The panes below the
// grid take their dragged share or their default; the grid keeps room for a chart, the media pane giving
// way first. Without the grid, the panes shown share the column. symon has the process table there instead.
void LeetView::RenderCentre(CellGrid& grid, Rect area, const ViewModel& model,
                            const std::vector<const runview::ChartGroup*>& charts,
                            const runview::MetricFilter& filter) {
  if (model.media != shown_media_) {
    media_.Reset();
    shown_media_ = model.media;
  }
  const int body = area.height;
  const auto share = [&](double fraction, double fallback) {
    const double used = fraction > 0 ? std::clamp(fraction, kMinFraction, kMaxFraction) : fallback;
    return static_cast<int>(std::lround(body * used));
  };
  const bool media_on = media_.visible() && !model.symon;
  const bool console_on = console_.visible() && !model.symon;
  int media_height = 0;
  int console_height = 0;
  if (model.symon) {
    // symon: the GPU process table below the system charts, a few rows when there is nothing to list.
    const GpuProcessSnapshot* processes = model.gpu_processes;
    const bool listing = processes != nullptr && processes->available && !processes->rows.empty();
    const int wanted = listing ? static_cast<int>(std::min<size_t>(processes->rows.size(), 1000)) + 4 : 0;
    console_height = std::clamp(wanted, kMinProcessTableHeight,
                                std::max(kMinProcessTableHeight, share(0, kProcessTableRatio)));
    if (body - console_height < kMinChartHeight + 1) console_height = 0;
  } else if (!metrics_visible_) {
    console_height = console_on ? (media_on ? share(settings_.console_logs_fraction, 0.5) : body) : 0;
    media_height = media_on ? body - console_height : 0;
  } else {
    if (console_on) {
      console_height = std::max(ConsolePane::kMinHeight, share(settings_.console_logs_fraction,
                                                               media_on ? 0.25 : ConsolePane::kHeightRatio));
    }
    if (media_on) {
      media_height = std::max(MediaPane::kMinHeight,
                              share(settings_.media_fraction, console_on ? 0.3 : MediaPane::kHeightRatio));
    }
    // The grid keeps a chart's height: the media pane shrinks to fit, then the console; one squeezed
    // under its smallest height is not drawn this frame.
    const int room = body - kMinChartHeight - 1;
    media_height = std::min(media_height, room - console_height);
    if (media_height < MediaPane::kMinHeight) media_height = 0;
    console_height = std::min(console_height, room - media_height);
    if (console_height < ConsolePane::kMinHeight) console_height = 0;
  }
  const int metrics_height = body - media_height - console_height;
  const Rect metrics_area{area.x, area.y, area.width, metrics_height};
  const Rect media_area{area.x, area.y + metrics_height, area.width, media_height};
  const Rect console_area{area.x, area.y + metrics_height + media_height, area.width, console_height};
  layout_.media_height = media_height;
  layout_.console_height = console_height;
  if (metrics_visible_ && media_height > 0) layout_.media_edge_y = media_area.y;
  if (console_height > 0 && console_area.y > area.y) layout_.console_edge_y = console_area.y;

  // The focus moves off a pane that is not drawn, and onto one that is when the grid is hidden.
  if ((focus_ == Pane::kConsole && (console_height == 0 || model.symon)) ||
      (focus_ == Pane::kProcesses && (console_height == 0 || !model.symon)) ||
      (focus_ == Pane::kMedia && media_height == 0)) {
    focus_ = Pane::kCentre;
  }
  if (focus_ == Pane::kCentre && !metrics_visible_ && !model.symon) {
    if (media_height > 0) focus_ = Pane::kMedia;
    if (console_height > 0 && media_height == 0) focus_ = Pane::kConsole;
  }

  if (metrics_visible_) {
    RenderGrid(grid, metrics_area, Pane::kCentre, centre_shows_history_ ? "Metrics" : "System metrics",
               charts, filter, centre_);
  } else if (media_height == 0 && console_height == 0) {
    PutCentred(grid, metrics_area, metrics_area.y + metrics_area.height / 2,
               "metrics grid hidden (1 shows it)", kDimStyle);
  }
  if (media_height > 0) {
    media_.Render(grid, media_area, model.media, focus_ == Pane::kMedia);
  } else {
    media_.NotDrawn();
  }
  if (model.symon) {
    console_.NotDrawn();
    if (console_height > 0) {
      processes_.Render(grid, console_area, model.gpu_processes, focus_ == Pane::kProcesses);
    } else {
      processes_.NotDrawn();
    }
    return;
  }
  processes_.NotDrawn();
  if (console_height > 0) {
    console_.Render(grid, console_area, model.console, model.console_label, focus_ == Pane::kConsole);
  } else {
    console_.NotDrawn();
  }
}

}  // namespace runmon::tui
