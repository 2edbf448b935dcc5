// Fuzzes the cell grid's text handling with arbitrary bytes: the first byte is the column limit (0-255),
// the rest is "UTF-8". Checks: PutText writes exactly DisplayWidth columns when the text fits and never more
// than the limit, TruncateToWidth returns valid UTF-8 no wider than the limit (equal to the input when it
// fits), no cell holds a control character, and continuation cells only follow double-width characters.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/utf8.hpp"
#include "fuzz_check.hpp"
#include "tui/cell_grid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int limit = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const int width = runmon::tui::DisplayWidth(text);
  FUZZ_CHECK(width >= 0);

  const std::string truncated = runmon::tui::TruncateToWidth(text, limit);
  FUZZ_CHECK(runmon::IsValidUtf8(truncated));
  FUZZ_CHECK(runmon::tui::DisplayWidth(truncated) <= limit);
  if (width <= limit && runmon::IsValidUtf8(text)) FUZZ_CHECK(runmon::tui::DisplayWidth(truncated) == width);

  runmon::tui::CellGrid grid(64, 2);
  const int written = grid.PutText(3, 1, text, {}, limit);
  FUZZ_CHECK(written >= 0 && written <= limit && written <= 61);
  if (width <= limit && width <= 61) FUZZ_CHECK(written == width);
  for (int x = 0; x < grid.width(); ++x) {
    FUZZ_CHECK(grid.at(x, 0).code_point == U' ');  // nothing outside the line
    const char32_t c = grid.at(x, 1).code_point;
    FUZZ_CHECK(!(c != 0 && (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0))));
    if (c == 0) FUZZ_CHECK(x > 0 && runmon::tui::CodePointWidth(grid.at(x - 1, 1).code_point) == 2);
    if (x < 3 || x >= 3 + written) FUZZ_CHECK(c == U' ');
  }
  return 0;
}
