// The TUI's input handling: keys (looked up in the key table, key_table.hpp), the mouse and the filter
// prompts change the view's state and say what the session does next (redraw, open a run, restart, quit).
// See view.hpp; rendering is view.cpp.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/utf8.hpp"
#include "tui/view.hpp"
#include "tui/view_style.hpp"

namespace runmon::tui {
namespace {

constexpr double kZoomStep = 0.6;
constexpr double kMinZoomSpan = 5;       // seconds or steps
constexpr size_t kMaxFilterBytes = 256;  // a pattern, not a paste of a file

bool Inside(const Rect& r, int x, int y) {
  return x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height;
}

double DragFraction(double cells, double total) {
  return total <= 0 ? 0 : std::clamp(cells / total, view_style::kMinFraction, view_style::kMaxFraction);
}

}  // namespace

ViewAction LeetView::Handle(const InputEvent& event) {
  if (event.code == KeyCode::kCtrlC) return ViewAction::kQuit;
  // A drag ends on its release wherever that comes (over the help, while a filter is typed) and on a resize.
  if (event.code == KeyCode::kMouseRelease || event.code == KeyCode::kResize) {
    const bool was_dragging = dragging_ != Edge::kNone;
    dragging_ = Edge::kNone;
    if (event.code == KeyCode::kResize || was_dragging) return ViewAction::kRedraw;
    return ViewAction::kNone;
  }
  if (editing_ != FilterTarget::kNone) return HandleFilterInput(event);
  if (help_visible_) {
    // Arrows, pages and the wheel scroll the help; q quits; any other key closes it.
    switch (event.code) {
      case KeyCode::kUp:
      case KeyCode::kWheelUp:
        help_scroll_ = help_scroll_ > 0 ? help_scroll_ - 1 : 0;
        return ViewAction::kRedraw;
      case KeyCode::kDown:
      case KeyCode::kWheelDown:
        ++help_scroll_;  // the render keeps it in range
        return ViewAction::kRedraw;
      case KeyCode::kPageUp:
        help_scroll_ = 0;
        return ViewAction::kRedraw;
      case KeyCode::kPageDown:
        help_scroll_ += 10;
        return ViewAction::kRedraw;
      case KeyCode::kMouseDrag:
      case KeyCode::kMouseRelease:
        return ViewAction::kNone;
      default:
        break;
    }
    if (event.code == KeyCode::kCharacter && event.character == U'q') return ViewAction::kQuit;
    help_visible_ = false;
    return ViewAction::kRedraw;
  }
  if (pending_grid_key_ != Command::kNone) {
    const Command key = pending_grid_key_;
    pending_grid_key_ = Command::kNone;
    if (event.code == KeyCode::kCharacter && event.character >= U'1' && event.character <= U'9') {
      GridState* grid = FocusedGrid();
      if (grid == nullptr) grid = &centre_;
      const int value = static_cast<int>(event.character - U'0');
      (key == Command::kGridRows ? grid->rows : grid->columns) = value;
      grid->page = 0;
      grid->focused = 0;
      // Kept as the screen's setting, so a config can keep it and the screen gets it back.
      LeetViewSettings::Grid& kept = grid == &right_                       ? settings_.system_grid
                                     : symon_shown_                        ? settings_.symon_grid
                                     : shown_mode_ == LeetMode::kWorkspace ? settings_.workspace_metrics_grid
                                                                           : settings_.metrics_grid;
      kept = {grid->rows, grid->columns};
    }
    return ViewAction::kRedraw;
  }
  switch (event.code) {
    case KeyCode::kWheelUp:
    case KeyCode::kWheelDown:
    case KeyCode::kMouseClick:
    case KeyCode::kMouseDrag:
    case KeyCode::kMouseRelease:
      return HandleMouse(event);
    default:
      break;
  }
  if (focus_ == Pane::kConsole) {
    const ViewAction action = HandleConsoleInput(event);
    if (action != ViewAction::kNone) return action;
  }
  if (focus_ == Pane::kMedia && media_.HandleKey(event)) return ViewAction::kRedraw;
  if (focus_ == Pane::kProcesses && processes_.Handle(event)) return ViewAction::kRedraw;
  const auto command = FindCommand(event, CurrentScreen());
  return command ? RunCommand(*command) : ViewAction::kNone;
}

ViewAction LeetView::HandleConsoleInput(const InputEvent& event) {
  const auto command = FindCommand(event, CurrentScreen());
  if (!command) return ViewAction::kNone;
  switch (*command) {
    case Command::kUp:
    case Command::kDown:
      console_.Scroll(*command == Command::kUp ? -1 : 1);
      return ViewAction::kRedraw;
    case Command::kPreviousPage:
    case Command::kNextPage:
      console_.Page(*command == Command::kPreviousPage ? -1 : 1);
      return ViewAction::kRedraw;
    case Command::kFirst:
      console_.Home();
      return ViewAction::kRedraw;
    case Command::kLast:
      console_.End();
      return ViewAction::kRedraw;
    default:
      return ViewAction::kNone;
  }
}

ViewAction LeetView::RunCommand(Command command) {
  switch (command) {
    case Command::kNone:
      return ViewAction::kNone;
    case Command::kHelp:
      help_visible_ = true;
      help_scroll_ = 0;
      return ViewAction::kRedraw;
    case Command::kQuit:
      return ViewAction::kQuit;
    case Command::kRestart:
      return ViewAction::kRestart;
    case Command::kEditMetricsFilter:
      return StartFilter(CentreFilterTarget(), "/");
    case Command::kEditSystemFilter:
      return StartFilter(FilterTarget::kSystem, "\\");
    case Command::kEditOverviewFilter:
      return StartFilter(FilterTarget::kOverview, "overview /");
    case Command::kClearMetricsFilter:
      return ClearFilter(CentreFilterTarget());
    case Command::kClearSystemFilter:
      return ClearFilter(FilterTarget::kSystem);
    case Command::kClearOverviewFilter:
      return ClearFilter(FilterTarget::kOverview);
    case Command::kBack:
      if (!metrics_filter_.empty() || !system_filter_.empty() || !overview_filter_.empty()) {
        ClearFilter(FilterTarget::kMetrics);
        ClearFilter(FilterTarget::kSystem);
        ClearFilter(FilterTarget::kOverview);
        return ViewAction::kRedraw;
      }
      return ViewAction::kBack;
    case Command::kToggleLeft:
      left_visible_ = !left_visible_;
      if (!left_visible_ && focus_ == Pane::kLeft) focus_ = Pane::kCentre;
      KeepPanesShown();
      return ViewAction::kRedraw;
    case Command::kToggleRight:
      // With the system charts in the centre there is no sidebar to show or hide.
      if (!centre_shows_history_ && metrics_visible_) return ViewAction::kNone;
      right_visible_ = !right_visible_;
      if (!right_visible_ && focus_ == Pane::kRight) focus_ = Pane::kCentre;
      KeepPanesShown();
      return ViewAction::kRedraw;
    case Command::kToggleMetrics:
      metrics_visible_ = !metrics_visible_;
      if (metrics_visible_ && (focus_ == Pane::kConsole || focus_ == Pane::kMedia)) focus_ = Pane::kCentre;
      KeepPanesShown();
      return ViewAction::kRedraw;
    case Command::kToggleMedia:
      media_.Toggle();
      if (!media_.visible() && focus_ == Pane::kMedia) focus_ = Pane::kCentre;
      KeepPanesShown();
      return ViewAction::kRedraw;
    case Command::kToggleConsole:
      console_.Toggle();
      if (console_.visible()) {
        console_.Reset();
      } else if (focus_ == Pane::kConsole) {
        focus_ = Pane::kCentre;
      }
      KeepPanesShown();
      return ViewAction::kRedraw;
    case Command::kResetLayout:
      settings_.left_sidebar_fraction = settings_.right_sidebar_fraction = 0;
      settings_.console_logs_fraction = settings_.media_fraction = 0;
      return ViewAction::kRedraw;
    case Command::kCycleGuides:
      guides_ = static_cast<ChartSpec::Guides>((static_cast<int>(guides_) + 1) % 3);
      settings_.chart_guides = static_cast<int>(guides_);
      return ViewAction::kRedraw;
    case Command::kCycleChartMode:
      return CycleChartMode();
    case Command::kZoomIn:
    case Command::kZoomOut:
      if (const PlacedChart* chart = FocusedChart()) return Zoom(chart->id, command == Command::kZoomIn);
      return ViewAction::kNone;
    case Command::kGridRows:
    case Command::kGridColumns:
      pending_grid_key_ = command;
      return ViewAction::kNone;
    case Command::kNextPane:
    case Command::kPreviousPane:
      CycleFocus(command == Command::kNextPane ? 1 : -1);
      return ViewAction::kRedraw;
    case Command::kUp:
      return Move(0, -1);
    case Command::kDown:
      return Move(0, 1);
    case Command::kLeft:
      return Move(-1, 0);
    case Command::kRight:
      return Move(1, 0);
    case Command::kNextPage:
    case Command::kPreviousPage: {
      const int delta = command == Command::kNextPage ? 1 : -1;
      if (focus_ == Pane::kMedia) {
        media_.Page(delta);
        return ViewAction::kRedraw;
      }
      if (focus_ == Pane::kProcesses) {
        processes_.Page(delta);
        return ViewAction::kRedraw;
      }
      return Page(delta);
    }
    case Command::kFirst:
    case Command::kLast:
      return FirstOrLast(command == Command::kLast);
    case Command::kOpenRun:
      return run_count_ > 0 && focus_ == Pane::kLeft ? ViewAction::kOpenRun : ViewAction::kNone;
    case Command::kToggleRun:
      return run_count_ > 0 && focus_ == Pane::kLeft ? ViewAction::kToggleSelection : ViewAction::kNone;
  }
  return ViewAction::kNone;
}

// W&B's LEET keeps which panes a run's view shows in its config (a workspace's keys are its own; symon's
// panes are not kept): the settings follow in a single run's view only.
void LeetView::KeepPanesShown() {
  if (symon_shown_ || shown_mode_ != LeetMode::kSingleRun) return;
  settings_.left_sidebar_visible = left_visible_;
  settings_.right_sidebar_visible = right_visible_;
  settings_.metrics_grid_visible = metrics_visible_;
  settings_.console_logs_visible = console_.visible();
  settings_.media_visible = media_.visible();
}

ViewAction LeetView::HandleMouse(const InputEvent& event) {
  const Layout& layout = layout_;
  if (event.code == KeyCode::kMouseDrag) {
    // A pane follows the pointer as far as its neighbours keep their smallest sizes: the centre its width
    // beside the other sidebar, the grid a chart's height beside the other pane below it.
    const int grid_room = layout.body_height - view_style::kMinChartHeight - 1;
    switch (dragging_) {
      case Edge::kNone:
        return ViewAction::kNone;
      case Edge::kLeftSidebar: {
        const int widest = layout.width - layout.right_width - view_style::kMinCentreWidth;
        settings_.left_sidebar_fraction = DragFraction(std::min(event.x + 1, widest), layout.width);
        break;
      }
      case Edge::kRightSidebar: {
        const int widest = layout.width - layout.left_width - view_style::kMinCentreWidth;
        settings_.right_sidebar_fraction =
            DragFraction(std::min(layout.width - event.x, widest), layout.width);
        break;
      }
      case Edge::kConsole: {
        const int tallest = grid_room - layout.media_height;
        settings_.console_logs_fraction =
            DragFraction(std::min(layout.body_height - event.y, tallest), layout.body_height);
        break;
      }
      case Edge::kMedia: {
        // The media pane's top edge: its height is what lies between the pointer and the console pane.
        const int below = layout.body_height - layout.console_height;
        const int tallest = grid_room - layout.console_height;
        settings_.media_fraction = DragFraction(std::min(below - event.y, tallest), layout.body_height);
        break;
      }
    }
    return ViewAction::kRedraw;
  }
  if (event.code == KeyCode::kMouseClick) {
    // A press on a pane's edge starts a drag (a press anywhere else ends one whose release was lost).
    dragging_ = Edge::kNone;
    if (event.y < layout.body_height) {
      if (event.x == layout.left_edge_x) dragging_ = Edge::kLeftSidebar;
      if (event.x == layout.right_edge_x) dragging_ = Edge::kRightSidebar;
    }
    if (event.y == layout.console_edge_y && console_.Contains(event.x, event.y)) dragging_ = Edge::kConsole;
    if (event.y == layout.media_edge_y && media_.Contains(event.x, event.y)) dragging_ = Edge::kMedia;
    if (dragging_ != Edge::kNone) return ViewAction::kRedraw;
  }
  if (processes_.Contains(event.x, event.y)) {
    focus_ = Pane::kProcesses;
    processes_.Handle(event);
    return ViewAction::kRedraw;
  }
  if (media_.Contains(event.x, event.y)) {
    focus_ = Pane::kMedia;
    if (event.code == KeyCode::kMouseClick) {
      media_.Click(event.x, event.y);
    } else {
      media_.Scrub(event.code == KeyCode::kWheelUp ? -1 : 1);
    }
    return ViewAction::kRedraw;
  }
  if (console_.Contains(event.x, event.y)) {
    focus_ = Pane::kConsole;
    if (event.code != KeyCode::kMouseClick) console_.Scroll(event.code == KeyCode::kWheelUp ? -3 : 3);
    return ViewAction::kRedraw;
  }
  for (const auto& placed : placed_) {
    if (!Inside(placed.area, event.x, event.y)) continue;
    focus_ = placed.pane;
    (placed.pane == Pane::kRight ? right_ : centre_).focused = placed.index_in_page;
    if (event.code == KeyCode::kMouseClick) return ViewAction::kRedraw;
    return Zoom(placed.id, event.code == KeyCode::kWheelUp);
  }
  return ViewAction::kNone;
}

FilterTarget LeetView::CentreFilterTarget() const {
  return centre_shows_history_ ? FilterTarget::kMetrics : FilterTarget::kSystem;
}

runview::MetricFilter& LeetView::FilterFor(FilterTarget target) {
  if (target == FilterTarget::kSystem) return system_filter_;
  if (target == FilterTarget::kOverview) return overview_filter_;
  return metrics_filter_;
}

ViewAction LeetView::StartFilter(FilterTarget target, std::string_view prompt) {
  const runview::MetricFilter& filter = FilterFor(target);
  editing_ = target;
  filter_prompt_ = prompt;
  filter_before_edit_.Set(filter.pattern(), filter.glob());
  filter_text_ = filter.pattern();
  filter_glob_ = filter.glob();
  return ViewAction::kRedraw;
}

ViewAction LeetView::ClearFilter(FilterTarget target) {
  runview::MetricFilter& filter = FilterFor(target);
  filter.Set("", filter.glob());
  if (target == FilterTarget::kOverview) {
    overview_scroll_ = 0;
  } else {
    centre_.page = right_.page = 0;
  }
  return ViewAction::kRedraw;
}

ViewAction LeetView::HandleFilterInput(const InputEvent& event) {
  runview::MetricFilter& filter = FilterFor(editing_);
  switch (event.code) {
    case KeyCode::kEnter:
      editing_ = FilterTarget::kNone;
      return ViewAction::kRedraw;
    case KeyCode::kEscape:
      filter = std::move(filter_before_edit_);
      editing_ = FilterTarget::kNone;
      return ViewAction::kRedraw;
    case KeyCode::kTab:
      filter_glob_ = !filter_glob_;
      break;
    case KeyCode::kBackspace:
      if (!filter_text_.empty()) {
        // Drop the last code point, not the last byte.
        size_t cut = filter_text_.size() - 1;
        while (cut > 0 && (static_cast<unsigned char>(filter_text_[cut]) & 0xC0) == 0x80) --cut;
        filter_text_.resize(cut);
      }
      break;
    case KeyCode::kCtrlL:
    case KeyCode::kCtrlSlash:
    case KeyCode::kCtrlBackslash:
    case KeyCode::kCtrlO:
      filter_text_.clear();
      break;
    case KeyCode::kCharacter: {
      if (filter_text_.size() >= kMaxFilterBytes) return ViewAction::kNone;
      const char32_t c = event.character;
      if (c < 0x20 || c == 0x7F || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return ViewAction::kNone;
      AppendUtf8(filter_text_, c);
      break;
    }
    default:
      return ViewAction::kNone;
  }
  // Live: every keystroke narrows what the filter applies to.
  filter.Set(filter_text_, filter_glob_);
  if (editing_ == FilterTarget::kOverview) {
    overview_scroll_ = 0;
  } else {
    centre_.page = right_.page = 0;
    centre_.focused = right_.focused = 0;
  }
  return ViewAction::kRedraw;
}

ViewAction LeetView::CycleChartMode() {
  const PlacedChart* chart = FocusedChart();
  if (chart == nullptr) return ViewAction::kNone;
  const auto group_of = [&](const std::vector<runview::ChartGroup>& groups) -> const runview::ChartGroup* {
    const auto it = std::find_if(groups.begin(), groups.end(),
                                 [&](const runview::ChartGroup& group) { return group.id == chart->id; });
    return it == groups.end() ? nullptr : &*it;
  };
  const runview::ChartGroup* group = chart->pane == Pane::kCentre && centre_shows_history_
                                         ? group_of(history_groups_)
                                         : group_of(system_groups_);
  if (group == nullptr) return ViewAction::kNone;
  // Linear, log, heatmap (percentages only), and round again.
  const ChartMode mode = ModeOf(*group);
  ChartMode next = ChartMode::kLinear;
  if (mode == ChartMode::kLinear) next = ChartMode::kLog;
  if (mode == ChartMode::kLog && chart->percent) next = ChartMode::kHeatmap;
  chart_modes_[chart->id] = next;
  return ViewAction::kRedraw;
}

LeetView::GridState* LeetView::FocusedGrid() {
  if (focus_ == Pane::kCentre) return &centre_;
  if (focus_ == Pane::kRight) return &right_;
  return nullptr;
}

const LeetView::PlacedChart* LeetView::FocusedChart() const {
  for (const auto& placed : placed_) {
    const GridState& grid = placed.pane == Pane::kRight ? right_ : centre_;
    if (placed.pane == focus_ && placed.index_in_page == grid.focused) return &placed;
  }
  return nullptr;
}

void LeetView::CycleFocus(int direction) {
  std::vector<Pane> panes;
  if (left_shown_) panes.push_back(Pane::kLeft);
  if (metrics_visible_) panes.push_back(Pane::kCentre);
  if (media_.visible() && !media_.area().empty()) panes.push_back(Pane::kMedia);
  if (console_.visible() && !console_.area().empty()) panes.push_back(Pane::kConsole);
  if (!processes_.area().empty()) panes.push_back(Pane::kProcesses);
  if (right_shown_) panes.push_back(Pane::kRight);
  if (panes.empty()) return;
  const auto it = std::find(panes.begin(), panes.end(), focus_);
  const int count = static_cast<int>(panes.size());
  // From a pane not in the cycle, tab goes to the first pane and shift+tab to the last.
  const int position = it != panes.end() ? static_cast<int>(it - panes.begin()) : direction > 0 ? -1 : count;
  focus_ = panes[static_cast<size_t>(((position + direction) % count + count) % count)];
}

ViewAction LeetView::Move(int dx, int dy) {
  if (focus_ == Pane::kLeft) {
    if (dy == 0) return ViewAction::kNone;
    if (run_count_ > 0) {
      if (dy < 0 && run_cursor_ > 0) --run_cursor_;
      if (dy > 0 && run_cursor_ + 1 < run_count_) ++run_cursor_;
    } else {
      if (dy < 0 && overview_scroll_ > 0) --overview_scroll_;
      if (dy > 0) ++overview_scroll_;
    }
    return ViewAction::kRedraw;
  }
  GridState* grid = FocusedGrid();
  if (grid == nullptr || grid->chart_count == 0) return ViewAction::kNone;
  const auto page_size = static_cast<long>(grid->page_size());
  const long on_page = std::min<long>(
      page_size, static_cast<long>(grid->chart_count) - static_cast<long>(grid->page) * page_size);
  long index = static_cast<long>(grid->focused) + dx + dy * grid->shown_columns;
  if (index < 0) {
    if (grid->page == 0) return ViewAction::kNone;
    --grid->page;
    index = std::max(0L, index + page_size);
  } else if (index >= on_page) {
    if (grid->page + 1 >= grid->pages()) return ViewAction::kNone;
    ++grid->page;
    const long next_on_page = std::min<long>(
        page_size, static_cast<long>(grid->chart_count) - static_cast<long>(grid->page) * page_size);
    index = std::min(index - on_page, next_on_page - 1);
  }
  grid->focused = static_cast<size_t>(index);
  return ViewAction::kRedraw;
}

ViewAction LeetView::Page(int delta) {
  GridState* grid = FocusedGrid();
  if (grid == nullptr) grid = &centre_;
  const size_t pages = grid->pages();
  if (delta > 0 && grid->page + 1 < pages) ++grid->page;
  if (delta < 0 && grid->page > 0) --grid->page;
  grid->focused = 0;
  return ViewAction::kRedraw;
}

ViewAction LeetView::FirstOrLast(bool last) {
  if (focus_ == Pane::kLeft) {
    run_cursor_ = last && run_count_ > 0 ? run_count_ - 1 : 0;
    overview_scroll_ = 0;
    return ViewAction::kRedraw;
  }
  if (GridState* grid = FocusedGrid()) {
    grid->page = last ? grid->pages() - 1 : 0;
    grid->focused = 0;
  }
  return ViewAction::kRedraw;
}

ViewAction LeetView::Zoom(const std::string& chart_id, bool in) {
  const auto placed = std::find_if(placed_.begin(), placed_.end(),
                                   [&](const PlacedChart& chart) { return chart.id == chart_id; });
  if (placed == placed_.end() || placed->full_span <= 0) return ViewAction::kNone;
  const double span =
      in ? std::max(kMinZoomSpan, placed->shown_span * kZoomStep) : placed->shown_span / kZoomStep;
  // Several wheel events may come before the next frame: each one scales what the previous one chose.
  if (span >= placed->full_span * 0.999) {
    zoom_.erase(chart_id);
    placed->shown_span = placed->full_span;
  } else {
    zoom_[chart_id] = span;
    placed->shown_span = span;
  }
  return ViewAction::kRedraw;
}

}  // namespace runmon::tui
