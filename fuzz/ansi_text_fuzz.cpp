// Fuzzes ParseAnsiLine (src/tui), which reads console lines a command wrote: any bytes give spans whose
// text never holds an ESC (no escape sequence reaches the terminal), within the byte limit, with palette
// colours in range.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "tui/ansi_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t limit = 1 + data[0] * 16u;
  const auto line = runmon::fuzz::AsText(data + 1, size - 1);
  size_t total = 0;
  for (const auto& span : runmon::tui::ParseAnsiLine(line, {}, limit)) {
    FUZZ_CHECK(!span.text.empty());
    FUZZ_CHECK(span.text.find('\x1b') == std::string::npos);
    FUZZ_CHECK(span.style.fg >= runmon::tui::kDefaultColor && span.style.fg <= 255);
    total += span.text.size();
  }
  FUZZ_CHECK(total <= limit + 8);  // a tab's spaces may pass the limit by less than 8
  return 0;
}
