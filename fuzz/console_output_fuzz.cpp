// Fuzzes the console output path (src/console): the first byte picks the line length limit and the
// terminal height, the second seeds where the rest is cut into chunks and where the coalescer's text is
// taken. Checks the coalescer's promise (W&B's terminal emulation of the taken texts gives the lines of
// the raw bytes), that every taken text is valid UTF-8, and that the emulator keeps its bounds (the window
// of open lines, the line limit) on any input, and that TerminalLines::Write (which puts runs of ASCII at
// once) gives what putting each character gives.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "console/output_coalescer.hpp"
#include "console/terminal_lines.hpp"
#include "core/utf8.hpp"
#include "fuzz_check.hpp"

namespace {

using runmon::console::ConsoleStream;
using runmon::console::TerminalLines;

std::vector<std::string> Finished(TerminalLines& lines) {
  lines.FinishAll();
  std::vector<std::string> texts;
  for (const auto& line : lines.TakeFinished()) texts.push_back(line.text);
  return texts;
}

size_t Runes(std::string_view text) {
  size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t limit = 1 + data[0] % 16;
  const size_t window = 1 + (data[0] >> 4);
  uint32_t cut_state = data[1] + 1u;
  const auto raw = runmon::fuzz::AsText(data + 2, size - 2);

  TerminalLines from_raw(window, limit);
  TerminalLines from_taken(window, limit);
  runmon::console::OutputCoalescer coalescer(limit);
  std::string_view rest = raw;
  while (!rest.empty()) {
    cut_state = cut_state * 1103515245u + 12345u;
    // Mostly short chunks (cuts everywhere), some long enough for whole lines checked a word at a time.
    const size_t length = 1 + (cut_state >> 16) % ((cut_state >> 4) % 4 == 0 ? 64 : 8);
    const std::string_view chunk = rest.substr(0, length);
    rest.remove_prefix(chunk.size());
    coalescer.Append(chunk);
    if ((cut_state >> 8) % 3 == 0) {
      const std::string taken = coalescer.Take();
      FUZZ_CHECK(runmon::IsValidUtf8(taken));
      from_taken.Write(ConsoleStream::kStdout, taken, 0);
    }
    FUZZ_CHECK(from_taken.OpenLines().size() <= window);
  }
  coalescer.Finish();
  const std::string taken = coalescer.Take();
  FUZZ_CHECK(runmon::IsValidUtf8(taken));
  from_taken.Write(ConsoleStream::kStdout, taken, 0);

  from_raw.Write(ConsoleStream::kStdout, raw, 0);  // the bytes as one text, as a reader of raw records
  const auto expected = Finished(from_raw);
  // Write's runs of ASCII are what putting each character gives.
  TerminalLines by_character(window, limit);
  runmon::console::Utf8Decoder decoder;
  const auto put = [&](char32_t rune) { by_character.Put(ConsoleStream::kStdout, rune); };
  decoder.Decode(raw, put);
  decoder.Finish(put);
  FUZZ_CHECK(Finished(by_character) == expected);
  FUZZ_CHECK(Finished(from_taken) == expected);
  for (const auto& line : expected) FUZZ_CHECK(Runes(line) <= limit && runmon::IsValidUtf8(line));
  return 0;
}
