// The cell grid (see cell_grid.hpp). Text is decoded with core/utf8's sequence check, so overlong forms,
// surrogates and stray bytes each become one U+FFFD; C0 and C1 controls and DEL become U+FFFD too, which
// keeps escape sequences in run names from reaching the terminal. Widths come from a fixed table (not
// wcwidth), so a frame renders the same under any locale. The grid never holds a continuation cell
// without the wide character to its left (or a wide character without its continuation): any write that
// covers half of a wide character blanks the other half, even when that half lies outside the rect being
// drawn.
#include "tui/cell_grid.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/utf8.hpp"

namespace runmon::tui {
namespace {

constexpr char32_t kReplacement = 0xFFFD;
constexpr char32_t kEllipsis = 0x2026;
constexpr char32_t kContinuation = 0;

struct Range {
  char32_t first;
  char32_t last;
};

constexpr std::array<Range, 10> kZeroWidth = {{
    {0x0300, 0x036F},    // combining diacritical marks
    {0x1AB0, 0x1AFF},    // combining diacritical marks extended
    {0x1DC0, 0x1DFF},    // combining diacritical marks supplement
    {0x200B, 0x200D},    // zero width space, ZWNJ, ZWJ
    {0x2060, 0x2060},    // word joiner
    {0x20D0, 0x20FF},    // combining marks for symbols
    {0xFE00, 0xFE0F},    // variation selectors
    {0xFE20, 0xFE2F},    // combining half marks
    {0xFEFF, 0xFEFF},    // zero width no-break space (BOM)
    {0xE0100, 0xE01EF},  // variation selectors supplement
}};

constexpr std::array<Range, 14> kWide = {{
    {0x1100, 0x115F},    // Hangul Jamo initials
    {0x2E80, 0x303E},    // CJK radicals, Kangxi, CJK symbols and punctuation
    {0x3041, 0x33FF},    // Hiragana, Katakana, Bopomofo, CJK compatibility
    {0x3400, 0x4DBF},    // CJK extension A
    {0x4E00, 0x9FFF},    // CJK unified ideographs
    {0xA000, 0xA4CF},    // Yi
    {0xAC00, 0xD7A3},    // Hangul syllables
    {0xF900, 0xFAFF},    // CJK compatibility ideographs
    {0xFE30, 0xFE4F},    // CJK compatibility forms
    {0xFF00, 0xFF60},    // fullwidth forms
    {0xFFE0, 0xFFE6},    // fullwidth signs
    {0x1F300, 0x1F64F},  // pictographs, emoticons
    {0x1F900, 0x1F9FF},  // supplemental symbols and pictographs
    {0x20000, 0x3FFFD},  // CJK extension B and later (planes 2 and 3)
}};

template <size_t N>
bool InRanges(const std::array<Range, N>& ranges, char32_t code_point) {
  for (const Range& range : ranges) {
    if (code_point < range.first) return false;  // the tables are sorted
    if (code_point <= range.last) return true;
  }
  return false;
}

// What a code point becomes in the grid: controls, DEL, surrogates and out-of-range values are U+FFFD.
char32_t Sanitize(char32_t code_point) {
  if (code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F)) return kReplacement;
  if ((code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF) return kReplacement;
  return code_point;
}

// Decodes the code point at text[*i] and moves *i past it; a byte that starts no valid sequence is one
// U+FFFD. The result is sanitized.
char32_t DecodeNext(std::string_view text, size_t* i) {
  const size_t length = Utf8SequenceLength(text, *i);
  if (length == 0) {
    ++*i;
    return kReplacement;
  }
  const auto lead = static_cast<unsigned char>(text[*i]);
  char32_t code_point = length == 1 ? lead : (lead & (0xFFu >> (length + 1)));
  for (size_t k = 1; k < length; ++k) {
    code_point = (code_point << 6) | (static_cast<unsigned char>(text[*i + k]) & 0x3Fu);
  }
  *i += length;
  return Sanitize(code_point);
}

// Lays `utf8` out in at most `max_width` columns and calls emit(code_point, width) for each code point
// that goes out, zero-width ones included. Text wider than `max_width` keeps what fits in max_width - 1
// columns, a space where a double-width character would straddle that limit, and ends in "…", so cut text
// always takes exactly `max_width` columns. Returns the columns laid out. Reads only as much of `utf8` as
// the decision needs.
template <typename Emit>
int LayOut(std::string_view utf8, int max_width, Emit emit) {
  if (max_width <= 0) return 0;
  // Does it fit? Stop reading once it is known not to.
  int total = 0;
  bool fits = true;
  for (size_t i = 0; i < utf8.size();) {
    total += CodePointWidth(DecodeNext(utf8, &i));
    if (total > max_width) {
      fits = false;
      break;
    }
  }
  const int limit = fits ? max_width : max_width - 1;
  int used = 0;
  for (size_t i = 0; i < utf8.size();) {
    const char32_t code_point = DecodeNext(utf8, &i);
    const int width = CodePointWidth(code_point);
    if (used + width > limit) break;
    used += width;
    emit(code_point, width);
  }
  if (fits) return used;
  while (used < limit) {
    emit(U' ', 1);
    ++used;
  }
  emit(kEllipsis, 1);
  return used + 1;
}

const Cell kBlankCell{};

}  // namespace

int CodePointWidth(char32_t code_point) {
  if (code_point < 0x300) return 1;  // ASCII and Latin: the common case first
  if (InRanges(kZeroWidth, code_point)) return 0;
  if (InRanges(kWide, code_point)) return 2;
  return 1;
}

int DisplayWidth(std::string_view utf8) {
  int width = 0;
  for (size_t i = 0; i < utf8.size();) width += CodePointWidth(DecodeNext(utf8, &i));
  return width;
}

std::string TruncateToWidth(std::string_view utf8, int max_width) {
  std::string out;
  LayOut(utf8, max_width, [&out](char32_t code_point, int) { AppendUtf8(out, code_point); });
  return out;
}

CellGrid::CellGrid(int width, int height)
    : width_(std::max(width, 0)),
      height_(std::max(height, 0)),
      cells_(static_cast<size_t>(width_) * static_cast<size_t>(height_)) {}

const Cell& CellGrid::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return kBlankCell;
  return cells_[static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)];
}

void CellGrid::Set(int x, int y, char32_t code_point, Style style) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  code_point = Sanitize(code_point);
  int width = CodePointWidth(code_point);
  if (width == 0) {
    code_point = kReplacement;  // a cell cannot hold a lone combining mark
    width = 1;
  } else if (width == 2 && x + 1 >= width_) {
    code_point = U' ';  // a wide character in the last column would straddle the edge
    width = 1;
  }
  Cell* row = &cells_[static_cast<size_t>(y) * static_cast<size_t>(width_)];
  // Blank the halves of wide characters this write cuts: the lead of a continuation being overwritten,
  // and the continuation of a wide character whose lead is the last cell overwritten.
  if (row[x].code_point == kContinuation && x > 0) row[x - 1].code_point = U' ';
  const int last = x + width - 1;
  if (last + 1 < width_ && row[last + 1].code_point == kContinuation) row[last + 1].code_point = U' ';
  row[x] = Cell{code_point, style};
  if (width == 2) row[x + 1] = Cell{kContinuation, style};
}

void CellGrid::SetStyle(Rect area, Style style) {
  const int x0 = std::max(area.x, 0);
  const int y0 = std::max(area.y, 0);
  const int x1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(area.x) + area.width, width_));
  const int y1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(area.y) + area.height, height_));
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      cells_[static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)].style = style;
    }
  }
}

int CellGrid::PutText(int x, int y, std::string_view utf8, Style style, int max_width) {
  if (y < 0 || y >= height_ || x >= width_) return 0;
  const int available = static_cast<int>(std::min<int64_t>(max_width, static_cast<int64_t>(width_) - x));
  int column = x;
  return LayOut(utf8, available, [&](char32_t code_point, int width) {
    if (width == 0) return;  // combining marks and joiners are dropped: one code point per cell
    Set(column, y, code_point, style);
    column += width;
  });
}

void CellGrid::Fill(Rect area, char32_t code_point, Style style) {
  const int x0 = std::max(area.x, 0);
  const int y0 = std::max(area.y, 0);
  const int x1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(area.x) + area.width, width_));
  const int y1 = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(area.y) + area.height, height_));
  const int width = std::max(CodePointWidth(Sanitize(code_point)), 1);
  for (int y = y0; y < y1; ++y) {
    int x = x0;
    for (; x + width <= x1; x += width) Set(x, y, code_point, style);
    for (; x < x1; ++x) Set(x, y, U' ', style);  // a wide fill's odd last column
  }
}

void CellGrid::DrawBox(Rect area, Style style, std::string_view title) {
  if (area.width < 2 || area.height < 2) return;
  const auto clamp = [](int64_t value) { return static_cast<int>(std::clamp<int64_t>(value, -1, 1 << 30)); };
  const int right = clamp(static_cast<int64_t>(area.x) + area.width - 1);
  const int bottom = clamp(static_cast<int64_t>(area.y) + area.height - 1);
  if (area.x >= width_ || area.y >= height_ || right < 0 || bottom < 0) return;  // all outside the grid
  // The edges' loops run over the part inside the grid only.
  for (int x = std::max(area.x + 1, 0); x < std::min(right, width_); ++x) {
    Set(x, area.y, U'─', style);
    Set(x, bottom, U'─', style);
  }
  for (int y = std::max(area.y + 1, 0); y < std::min(bottom, height_); ++y) {
    Set(area.x, y, U'│', style);
    Set(right, y, U'│', style);
  }
  Set(area.x, area.y, U'┌', style);
  Set(right, area.y, U'┐', style);
  Set(area.x, bottom, U'└', style);
  Set(right, bottom, U'┘', style);
  // " title " after the top-left corner, when at least one column of the title fits besides the "…".
  const int title_width = area.width - 4;
  if (title.empty() || title_width < 1 || (title_width == 1 && DisplayWidth(title) > 1)) return;
  std::string text = " ";
  text += TruncateToWidth(title, title_width);
  text += ' ';
  PutText(area.x + 1, area.y, text, style, title_width + 2);
}

std::string CellGrid::ToString() const {
  std::string out;
  out.reserve(cells_.size() + static_cast<size_t>(height_));
  for (int y = 0; y < height_; ++y) {
    if (y > 0) out.push_back('\n');
    for (int x = 0; x < width_; ++x) {
      const char32_t code_point = at(x, y).code_point;
      if (code_point != kContinuation) AppendUtf8(out, code_point);
    }
  }
  return out;
}

}  // namespace runmon::tui
