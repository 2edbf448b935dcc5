// The TUI's input handling: keys, mouse and the filter prompt change the view's state and say what the
// session does next (redraw, open a run, quit). See view.hpp; rendering is view.cpp.
#include "tui/view.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/utf8.hpp"

namespace runmon::tui {
namespace {

constexpr double kZoomStep = 0.6;
constexpr double kMinZoomSpan = 5;  // seconds or steps

}  // namespace

ViewAction LeetView::Handle(const InputEvent& event) {
  if (event.code == KeyCode::kCtrlC) return ViewAction::kQuit;
  if (event.code == KeyCode::kResize) return ViewAction::kRedraw;
  if (filter_editing_) return HandleFilterInput(event);
  if (help_visible_) {
    if (event.code == KeyCode::kCharacter && event.character == U'q') return ViewAction::kQuit;
    if (event.code == KeyCode::kWheelUp || event.code == KeyCode::kWheelDown) return ViewAction::kNone;
    help_visible_ = false;
    return ViewAction::kRedraw;
  }
  if (pending_grid_key_ != 0) {
    const char key = pending_grid_key_;
    pending_grid_key_ = 0;
    if (event.code == KeyCode::kCharacter && event.character >= U'1' && event.character <= U'9') {
      GridState* grid = FocusedGrid();
      if (grid == nullptr) grid = &centre_;
      const int value = static_cast<int>(event.character - U'0');
      (key == 'r' ? grid->rows : grid->columns) = value;
      grid->page = 0;
      grid->focused = 0;
    }
    return ViewAction::kRedraw;
  }
  if (focus_ == Pane::kConsole) {
    switch (event.code) {
      case KeyCode::kUp:
        console_.Scroll(-1);
        return ViewAction::kRedraw;
      case KeyCode::kDown:
        console_.Scroll(1);
        return ViewAction::kRedraw;
      case KeyCode::kPageUp:
        console_.Page(-1);
        return ViewAction::kRedraw;
      case KeyCode::kPageDown:
        console_.Page(1);
        return ViewAction::kRedraw;
      case KeyCode::kHome:
        console_.Home();
        return ViewAction::kRedraw;
      case KeyCode::kEnd:
        console_.End();
        return ViewAction::kRedraw;
      case KeyCode::kCharacter:
        if (event.character == U'w' || event.character == U's') {
          console_.Scroll(event.character == U'w' ? -1 : 1);
          return ViewAction::kRedraw;
        }
        if (event.character == U'N' || event.character == U'n') {
          console_.Page(event.character == U'N' ? -1 : 1);
          return ViewAction::kRedraw;
        }
        break;
      default:
        break;
    }
  }
  if ((event.code == KeyCode::kWheelUp || event.code == KeyCode::kWheelDown ||
       event.code == KeyCode::kMouseClick) &&
      console_.Contains(event.x, event.y)) {
    focus_ = Pane::kConsole;
    if (event.code != KeyCode::kMouseClick) console_.Scroll(event.code == KeyCode::kWheelUp ? -3 : 3);
    return ViewAction::kRedraw;
  }
  switch (event.code) {
    case KeyCode::kCharacter:
      return HandleCharacter(event.character);
    case KeyCode::kUp:
      return Move(0, -1);
    case KeyCode::kDown:
      return Move(0, 1);
    case KeyCode::kLeft:
      return Move(-1, 0);
    case KeyCode::kRight:
      return Move(1, 0);
    case KeyCode::kPageDown:
      return Page(1);
    case KeyCode::kPageUp:
      return Page(-1);
    case KeyCode::kHome:
    case KeyCode::kEnd: {
      const bool end = event.code == KeyCode::kEnd;
      if (focus_ == Pane::kLeft) {
        run_cursor_ = end && run_count_ > 0 ? run_count_ - 1 : 0;
        overview_scroll_ = 0;
        return ViewAction::kRedraw;
      }
      if (GridState* grid = FocusedGrid()) {
        grid->page = end ? grid->pages() - 1 : 0;
        grid->focused = 0;
      }
      return ViewAction::kRedraw;
    }
    case KeyCode::kTab:
      CycleFocus(1);
      return ViewAction::kRedraw;
    case KeyCode::kBackTab:
      CycleFocus(-1);
      return ViewAction::kRedraw;
    case KeyCode::kEnter:
      return run_count_ > 0 && focus_ == Pane::kLeft ? ViewAction::kOpenRun : ViewAction::kNone;
    case KeyCode::kEscape:
      if (!filter_.empty()) {
        filter_.Set("", filter_glob_);
        centre_.page = right_.page = 0;
        return ViewAction::kRedraw;
      }
      return ViewAction::kBack;
    case KeyCode::kCtrlL:
      filter_.Set("", filter_glob_);
      return ViewAction::kRedraw;
    case KeyCode::kWheelUp:
    case KeyCode::kWheelDown:
    case KeyCode::kMouseClick: {
      for (const auto& placed : placed_) {
        const Rect& r = placed.area;
        if (event.x < r.x || event.x >= r.x + r.width || event.y < r.y || event.y >= r.y + r.height) continue;
        focus_ = placed.pane;
        (placed.pane == Pane::kRight ? right_ : centre_).focused = placed.index_in_page;
        if (event.code == KeyCode::kMouseClick) return ViewAction::kRedraw;
        return Zoom(placed.id, event.code == KeyCode::kWheelUp);
      }
      return ViewAction::kNone;
    }
    default:
      return ViewAction::kNone;
  }
}

ViewAction LeetView::HandleFilterInput(const InputEvent& event) {
  switch (event.code) {
    case KeyCode::kEnter:
      filter_editing_ = false;
      return ViewAction::kRedraw;
    case KeyCode::kEscape:
      filter_editing_ = false;
      filter_ = std::move(filter_before_edit_);
      filter_glob_ = filter_.glob();
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
      filter_text_.clear();
      break;
    case KeyCode::kCharacter: {
      if (filter_text_.size() >= 256) return ViewAction::kNone;  // a pattern, not a paste of a file
      const char32_t c = event.character;
      if (c < 0x20 || c == 0x7F || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return ViewAction::kNone;
      AppendUtf8(filter_text_, c);
      break;
    }
    default:
      return ViewAction::kNone;
  }
  // Live: every keystroke narrows the charts.
  filter_.Set(filter_text_, filter_glob_);
  centre_.page = right_.page = 0;
  centre_.focused = right_.focused = 0;
  return ViewAction::kRedraw;
}

ViewAction LeetView::HandleCharacter(char32_t character) {
  switch (character) {
    case U'q':
      return ViewAction::kQuit;
    case U'h':
    case U'?':
      help_visible_ = true;
      return ViewAction::kRedraw;
    case U'/':
      filter_editing_ = true;
      filter_before_edit_.Set(filter_.pattern(), filter_.glob());
      filter_text_ = filter_.pattern();
      filter_glob_ = filter_.glob();
      return ViewAction::kRedraw;
    case U'[':
      left_visible_ = !left_visible_;
      if (!left_visible_ && focus_ == Pane::kLeft) focus_ = Pane::kCentre;
      return ViewAction::kRedraw;
    case U']':
      right_visible_ = !right_visible_;
      if (!right_visible_ && focus_ == Pane::kRight) focus_ = Pane::kCentre;
      return ViewAction::kRedraw;
    case U'4':
      console_.Toggle();
      if (console_.visible()) {
        console_.Reset();
      } else if (focus_ == Pane::kConsole) {
        focus_ = Pane::kCentre;
      }
      return ViewAction::kRedraw;
    case U'n':
      return Page(1);
    case U'N':
      return Page(-1);
    case U'w':
      return Move(0, -1);
    case U's':
      return Move(0, 1);
    case U'a':
      return Move(-1, 0);
    case U'd':
      return Move(1, 0);
    case U' ':
      return run_count_ > 0 && focus_ == Pane::kLeft ? ViewAction::kToggleSelection : ViewAction::kNone;
    case U'y':
      if (const std::string* id = FocusedChartId()) {
        if (!log_scale_.erase(*id)) log_scale_.insert(*id);
        return ViewAction::kRedraw;
      }
      return ViewAction::kNone;
    case U'+':
    case U'=':
    case U'-':
      if (const std::string* id = FocusedChartId()) return Zoom(*id, character != U'-');
      return ViewAction::kNone;
    case U'r':
    case U'c':
      pending_grid_key_ = static_cast<char>(character);
      return ViewAction::kNone;
    default:
      return ViewAction::kNone;
  }
}

LeetView::GridState* LeetView::FocusedGrid() {
  if (focus_ == Pane::kCentre) return &centre_;
  if (focus_ == Pane::kRight) return &right_;
  return nullptr;
}

const std::string* LeetView::FocusedChartId() const {
  for (const auto& placed : placed_) {
    const GridState& grid = placed.pane == Pane::kRight ? right_ : centre_;
    if (placed.pane == focus_ && placed.index_in_page == grid.focused) return &placed.id;
  }
  return nullptr;
}

void LeetView::CycleFocus(int direction) {
  std::vector<Pane> panes;
  if (left_shown_) panes.push_back(Pane::kLeft);
  panes.push_back(Pane::kCentre);
  if (console_.visible() && !console_.area().empty()) panes.push_back(Pane::kConsole);
  if (right_shown_) panes.push_back(Pane::kRight);
  const auto it = std::find(panes.begin(), panes.end(), focus_);
  const auto position = static_cast<int>(it == panes.end() ? 0 : it - panes.begin());
  const int count = static_cast<int>(panes.size());
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
