// Fuzzes LineSplitter (src/host): the first byte is the line limit, the second seeds where the rest is cut
// into pieces. Whatever the cuts, the lines and over-long reports equal those of splitting the whole text
// at its newlines, no more than the limit is ever held, and Reset reports the unfinished tail's length.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "host/line_splitter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t limit = data[0];
  uint32_t cut_state = data[1] + 1u;
  const auto text = runmon::fuzz::AsText(data + 2, size - 2);

  std::vector<std::string> expected_lines;
  std::vector<size_t> expected_overlong;
  size_t start = 0;
  for (size_t newline = text.find('\n'); newline != std::string_view::npos;
       newline = text.find('\n', start)) {
    const size_t length = newline - start;
    if (length > limit) {
      expected_overlong.push_back(length);
    } else {
      expected_lines.emplace_back(text.substr(start, length));
    }
    start = newline + 1;
  }
  const size_t expected_tail = text.size() - start;

  runmon::LineSplitter splitter(limit);
  std::vector<std::string> lines;
  std::vector<size_t> overlong;
  std::string_view rest = text;
  while (!rest.empty()) {
    cut_state = cut_state * 1103515245u + 12345u;
    const size_t piece = 1 + (cut_state >> 16) % 64;
    splitter.Append(
        rest.substr(0, piece), [&](std::string_view line) { lines.emplace_back(line); },
        [&](size_t bytes) { overlong.push_back(bytes); });
    FUZZ_CHECK(splitter.pending_bytes() <= limit);
    rest.remove_prefix(std::min(piece, rest.size()));
  }
  FUZZ_CHECK(lines == expected_lines);
  FUZZ_CHECK(overlong == expected_overlong);
  FUZZ_CHECK(splitter.Reset() == expected_tail);
  FUZZ_CHECK(splitter.pending_bytes() == 0);
  return 0;
}
