// What the view's renderers share (view.cpp, view_grid.cpp, view_sidebar.cpp, view_status.cpp): sizes,
// styles and small layout helpers. Internal to runmon_tui.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "tui/cell_grid.hpp"

namespace runmon::tui::view_style {

constexpr int kMinWidth = 40;
constexpr int kMinHeight = 12;
constexpr int kMinCentreWidth = 28;
constexpr int kMinChartWidth = 20;
constexpr int kMinChartHeight = 6;
constexpr int kMinSidebarWidth = 20;  // a sidebar squeezed below this gives way instead
// The shares of the terminal a pane edge can be dragged to (and a config can give).
constexpr double kMinFraction = 0.05;
constexpr double kMaxFraction = 0.9;

constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kBoldStyle{kDefaultColor, kDefaultColor, kBold};
constexpr Style kFocusStyle{75, kDefaultColor, kBold};
constexpr Style kStatusStyle{252, 236, kNoAttributes};
constexpr Style kWarningStyle{214, kDefaultColor, kBold};

// Splits `total` into `parts` spans as equal as possible (the first ones one cell longer).
inline int SpanStart(int total, int parts, int index) {
  return total / parts * index + std::min(index, total % parts);
}

inline void PutCentred(CellGrid& grid, Rect area, int y, std::string_view text, Style style) {
  const int width = std::min(DisplayWidth(text), area.width);
  grid.PutText(area.x + (area.width - width) / 2, y, text, style, area.width);
}

}  // namespace runmon::tui::view_style
