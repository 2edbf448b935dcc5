// leet's console-logs pane (see console_pane.hpp).
#include "tui/console_pane.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "tui/ansi_text.hpp"

namespace runmon::tui {
namespace {

constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kStderrTimeStyle{203, kDefaultColor, kNoAttributes};

std::string FormatClock(double seconds, bool short_form) {
  const auto whole = static_cast<std::time_t>(std::floor(seconds));
  std::tm local{};
  if (localtime_r(&whole, &local) == nullptr) return short_form ? "--:--" : "--:--:--";
  std::array<char, 16> text{};
  std::strftime(text.data(), text.size(), short_form ? "%H:%M" : "%H:%M:%S", &local);
  return text.data();
}

}  // namespace

void ConsolePane::Reset() {
  following_ = true;
  top_number_ = 0;
}

bool ConsolePane::Contains(int x, int y) const {
  return visible_ && x >= area_.x && x < area_.x + area_.width && y >= area_.y && y < area_.y + area_.height;
}

void ConsolePane::Scroll(int64_t lines) {
  const uint64_t last_top =
      first_number_ +
      (line_count_ > static_cast<uint64_t>(rows_) ? line_count_ - static_cast<uint64_t>(rows_) : 0);
  int64_t top = static_cast<int64_t>(std::clamp(top_number_, first_number_, last_top)) + lines;
  top = std::clamp<int64_t>(top, static_cast<int64_t>(first_number_), static_cast<int64_t>(last_top));
  top_number_ = static_cast<uint64_t>(top);
  following_ = top_number_ >= last_top;  // back at the bottom: follow again
}

void ConsolePane::Home() {
  top_number_ = first_number_;
  following_ = line_count_ <= static_cast<uint64_t>(rows_);
}

void ConsolePane::End() {
  following_ = true;
}

void ConsolePane::Render(CellGrid& grid, Rect area, const runview::ConsoleLog* log, std::string_view label,
                         bool focused) {
  area_ = area;
  if (area.width < 4 || area.height < 3) return;
  const Style border = focused ? Style{75, kDefaultColor, kBold} : kDimStyle;
  rows_ = std::max(1, area.height - 2);
  first_number_ = log != nullptr ? log->first_number() : 0;
  line_count_ = log != nullptr ? log->size() : 0;
  const uint64_t rows = static_cast<uint64_t>(rows_);
  const uint64_t last_top = first_number_ + (line_count_ > rows ? line_count_ - rows : 0);
  if (following_) top_number_ = last_top;
  top_number_ = std::clamp(top_number_, first_number_, last_top);

  std::string title = "Console Logs";
  if (!label.empty()) title += " • " + TruncateToWidth(label, std::max(1, area.width / 3));
  grid.DrawBox(area, border, title);
  const Rect inner{area.x + 1, area.y + 1, area.width - 2, area.height - 2};
  if (line_count_ == 0) {
    grid.PutText(inner.x + 1, inner.y, log == nullptr ? "no run open" : "no console output", kDimStyle,
                 inner.width - 1);
    return;
  }
  const uint64_t first_shown = top_number_ - first_number_;
  const uint64_t shown = std::min(rows, line_count_ - first_shown);
  const std::string position = fmt::format(" [{}-{} of {}{}] ", top_number_ + 1, top_number_ + shown,
                                           first_number_ + line_count_, following_ ? " · following" : "");
  const int position_width = DisplayWidth(position);
  if (position_width + DisplayWidth(title) + 6 < area.width) {
    grid.PutText(area.x + area.width - 1 - position_width, area.y, position, border, position_width);
  }
  // The time column: 12% of the width as LEET gives it, within what the clock needs.
  const bool short_clock = inner.width < 40;
  const int clock_width = short_clock ? 5 : 8;
  for (uint64_t row = 0; row < shown; ++row) {
    const console::ConsoleLine& line = log->at(static_cast<size_t>(first_shown + row));
    const int y = inner.y + static_cast<int>(row);
    int x = inner.x + 1;
    const bool is_stderr = line.stream == console::ConsoleStream::kStderr;
    grid.PutText(x, y, FormatClock(line.timestamp, short_clock), is_stderr ? kStderrTimeStyle : kDimStyle,
                 clock_width);
    x += clock_width + 1;
    const int end = inner.x + inner.width;
    for (const StyledSpan& span : ParseAnsiLine(line.text, {})) {
      if (x >= end) break;
      x += grid.PutText(x, y, span.text, span.style, end - x);
    }
  }
}

}  // namespace runmon::tui
