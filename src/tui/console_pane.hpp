// leet's console-logs pane (W&B LEET's key 4): the run's console lines below the metrics grid, each with
// the local time of the output that started it (HH:MM:SS, HH:MM when narrow), stderr's times in red, SGR
// colours kept and every other escape sequence dropped (ansi_text.hpp). It follows the end while the
// run writes; scrolling up stops following and `end` (or scrolling back to the bottom) starts it again.
// The scroll position is a line number, so it stays on the same line when old lines are dropped from the
// front of the log (runview keeps the newest 100,000).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runview/console_log.hpp"
#include "tui/cell_grid.hpp"

namespace runmon::tui {

class ConsolePane {
 public:
  // The share of the centre column the pane takes (LEET's ratio), and its smallest height.
  static constexpr double kHeightRatio = 0.382;
  static constexpr int kMinHeight = 4;

  bool visible() const { return visible_; }
  void Toggle() { visible_ = !visible_; }
  void Reset();
  bool following() const { return following_; }

  // `log` may be null (no run open). `label` names the run (empty: none).
  void Render(CellGrid& grid, Rect area, const runview::ConsoleLog* log, std::string_view label,
              bool focused);
  // From the last render:
  const Rect& area() const { return area_; }
  bool Contains(int x, int y) const;
  void NotDrawn() { area_ = {}; }  // no room for it in this frame

  void Scroll(int64_t lines);  // negative: up
  void Page(int pages) { Scroll(static_cast<int64_t>(pages) * std::max(1, rows_ - 1)); }
  void Home();
  void End();

 private:
  bool visible_ = false;
  bool following_ = true;
  uint64_t top_number_ = 0;  // the first line shown, as a line number of the whole run
  // From the last render:
  Rect area_{};
  int rows_ = 1;
  uint64_t first_number_ = 0;
  uint64_t line_count_ = 0;
};

}  // namespace runmon::tui
