// A terminal frame as a plain grid of cells: the TUI renders into this (pure, testable as text) and only
// the terminal layer (terminal.hpp) turns it into screen updates. Text is UTF-8 in, code points out; each
// cell holds one code point and a style. A double-width character (CJK, most emoji) takes two cells: the
// second is a continuation cell (code point 0) that the terminal layer skips. Text that is not valid UTF-8
// and control characters become U+FFFD, so a hostile run name can never move the cursor or change colours.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runmon::tui {

// Colours are xterm-256 palette indices; kDefaultColor is the terminal's own foreground or background.
inline constexpr int16_t kDefaultColor = -1;

enum Attribute : uint8_t {
  kNoAttributes = 0,
  kBold = 1 << 0,
  kDim = 1 << 1,
  kReverse = 1 << 2,
  kUnderline = 1 << 3,
};

struct Style {
  int16_t fg = kDefaultColor;
  int16_t bg = kDefaultColor;
  uint8_t attributes = kNoAttributes;
  friend bool operator==(const Style&, const Style&) = default;
};

struct Cell {
  char32_t code_point = U' ';  // 0: the right half of the double-width character to its left
  Style style;
  friend bool operator==(const Cell&, const Cell&) = default;
};

struct Rect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool empty() const { return width <= 0 || height <= 0; }
  friend bool operator==(const Rect&, const Rect&) = default;
};

// Columns a code point takes: 0 for combining marks and zero-width characters, 2 for East Asian wide and
// fullwidth characters and emoji, 1 otherwise. Independent of the locale (tests render the same anywhere).
int CodePointWidth(char32_t code_point);
// Columns `utf8` takes when put into a grid (invalid bytes and control characters count as one U+FFFD).
int DisplayWidth(std::string_view utf8);
// `utf8` cut to at most `max_width` columns, ending in "…" when it was cut (valid UTF-8 out).
std::string TruncateToWidth(std::string_view utf8, int max_width);

class CellGrid {
 public:
  CellGrid(int width, int height);  // negative sizes are taken as 0

  int width() const { return width_; }
  int height() const { return height_; }
  Rect bounds() const { return {0, 0, width_, height_}; }

  // Out-of-grid reads return a blank cell; out-of-grid writes are ignored.
  const Cell& at(int x, int y) const;
  void Set(int x, int y, char32_t code_point, Style style = {});
  // Sets the style of the cells in `area` (inside the grid), keeping their code points.
  void SetStyle(Rect area, Style style);

  // Writes `utf8` from (x, y) on one line, clipped to `max_width` columns (and the grid): text that does
  // not fit ends in "…". Invalid UTF-8 and control characters show as U+FFFD; a double-width character
  // that would straddle the limit is replaced by a space. Returns the columns written.
  int PutText(int x, int y, std::string_view utf8, Style style = {}, int max_width = 1 << 30);
  void Fill(Rect area, char32_t code_point, Style style = {});
  // A box drawn with light box-drawing lines around `area` (its outer cells), with `title` in the top
  // edge when it fits.
  void DrawBox(Rect area, Style style = {}, std::string_view title = {});

  // The code points as UTF-8 lines joined by '\n' (continuation cells omitted, trailing spaces kept), for
  // golden tests.
  std::string ToString() const;

 private:
  int width_;
  int height_;
  std::vector<Cell> cells_;
};

}  // namespace runmon::tui
