// Console lines into styled spans (see ansi_text.hpp).
#include "tui/ansi_text.hpp"

#include <algorithm>
#include <charconv>

namespace runmon::tui {
namespace {

// The nearest colour of xterm's 6x6x6 cube for a 24-bit colour.
int16_t CubeColor(int red, int green, int blue) {
  const auto level = [](int value) { return std::clamp((value - 35) / 40, 0, 5); };
  return static_cast<int16_t>(16 + 36 * level(red) + 6 * level(green) + level(blue));
}

std::vector<int> Parameters(std::string_view text) {
  std::vector<int> values;
  size_t start = 0;
  while (start <= text.size() && values.size() < 32) {
    const size_t end = std::min(text.find_first_of(";:", start), text.size());
    int value = 0;
    const auto part = text.substr(start, end - start);
    if (!part.empty()) {
      const auto [ptr, error] = std::from_chars(part.data(), part.data() + part.size(), value);
      if (error != std::errc() || ptr != part.data() + part.size()) value = -1;  // not a number: ignored
    }
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

void ApplySgr(std::string_view parameters, Style base, Style& style) {
  const std::vector<int> values = Parameters(parameters);
  for (size_t i = 0; i < values.size(); ++i) {
    const int value = values[i];
    if (value == 0) {
      style = base;
    } else if (value == 1) {
      style.attributes = static_cast<uint8_t>((style.attributes | kBold) & ~kDim);
    } else if (value == 2) {
      style.attributes = static_cast<uint8_t>((style.attributes | kDim) & ~kBold);
    } else if (value == 22) {
      style.attributes = static_cast<uint8_t>(style.attributes & ~(kBold | kDim));
    } else if (value >= 30 && value <= 37) {
      style.fg = static_cast<int16_t>(value - 30);
    } else if (value >= 90 && value <= 97) {
      style.fg = static_cast<int16_t>(value - 90 + 8);
    } else if (value == 39) {
      style.fg = base.fg;
    } else if ((value == 38 || value == 48) && i + 1 < values.size()) {
      // Extended colours: 5;N or 2;R;G;B. Backgrounds are read past, not applied.
      int16_t color = kDefaultColor;
      if (values[i + 1] == 5 && i + 2 < values.size()) {
        if (values[i + 2] >= 0 && values[i + 2] <= 255) color = static_cast<int16_t>(values[i + 2]);
        i += 2;
      } else if (values[i + 1] == 2 && i + 4 < values.size()) {
        color = CubeColor(values[i + 2], values[i + 3], values[i + 4]);
        i += 4;
      } else {
        ++i;
      }
      if (value == 38 && color != kDefaultColor) style.fg = color;
    }
  }
}

}  // namespace

std::vector<StyledSpan> ParseAnsiLine(std::string_view line, Style base, size_t max_bytes) {
  std::vector<StyledSpan> spans;
  Style style = base;
  size_t kept = 0;
  size_t column = 0;  // for tabs: bytes are close enough to columns here
  const auto put = [&](std::string_view text) {
    if (text.empty() || kept >= max_bytes) return;
    text = text.substr(0, max_bytes - kept);
    kept += text.size();
    column += text.size();
    if (!spans.empty() && spans.back().style == style) {
      spans.back().text.append(text);
    } else {
      spans.push_back({std::string(text), style});
    }
  };
  size_t i = 0;
  while (i < line.size() && kept < max_bytes) {
    const char c = line[i];
    if (c == '\t') {
      put(std::string(8 - column % 8, ' '));
      ++i;
      continue;
    }
    if (c != '\x1b') {
      const size_t next = line.find_first_of("\x1b\t", i);
      const size_t end = next == std::string_view::npos ? line.size() : next;
      put(line.substr(i, end - i));
      i = end;
      continue;
    }
    if (i + 1 >= line.size()) break;  // a lone ESC at the end
    const char kind = line[i + 1];
    if (kind == '[') {
      // CSI: parameter bytes 0x30-0x3F, intermediates 0x20-0x2F, a final byte 0x40-0x7E.
      size_t end = i + 2;
      while (end < line.size() && line[end] >= 0x20 && line[end] <= 0x3F) ++end;
      if (end < line.size() && line[end] >= 0x40 && line[end] <= 0x7E) {
        if (line[end] == 'm') ApplySgr(line.substr(i + 2, end - i - 2), base, style);
        i = end + 1;
      } else {
        i = end;  // a broken sequence: dropped up to what ended it
      }
    } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^') {
      // OSC, DCS, APC, PM: up to BEL or ESC \ (or the end of the line).
      size_t end = i + 2;
      while (end < line.size() && line[end] != '\x07' &&
             !(line[end] == '\x1b' && end + 1 < line.size() && line[end + 1] == '\\')) {
        ++end;
      }
      i = end >= line.size() ? end : end + (line[end] == '\x07' ? 1 : 2);
    } else {
      i += 2;  // a two-byte escape (ESC 7, ESC =, ...)
    }
  }
  return spans;
}

}  // namespace runmon::tui
