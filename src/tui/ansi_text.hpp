// A console line as leet draws it: the escape sequences a command's output holds (W&B keeps them in the
// text) are read, never passed to the terminal. SGR colours and weights become cell styles (foreground
// 30-37, 90-97, 38;5;N and 38;2;R;G;B mapped to the xterm-256 palette, 39 default, 1 bold, 2 dim, 22
// normal, 0 reset; backgrounds are left out so text stays readable on the pane); every other sequence
// (cursor moves, screen clears, OSC titles and hyperlinks, two-byte escapes) is dropped; a tab becomes
// spaces to the next multiple of 8 columns; other control characters are left to the cell grid, which shows
// them as U+FFFD. Pure and fuzzed (fuzz/ansi_text_fuzz.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tui/cell_grid.hpp"

namespace runmon::tui {

struct StyledSpan {
  std::string text;  // UTF-8 as it came (the grid sanitizes what is not)
  Style style;
};

// At most `max_bytes` of text are kept (a 1 MB line is drawn from its start).
std::vector<StyledSpan> ParseAnsiLine(std::string_view line, Style base, size_t max_bytes = 4096);

}  // namespace runmon::tui
