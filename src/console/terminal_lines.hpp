// Console output assembled into lines the way W&B's terminal emulator does it (core/internal/
// terminalemulator, used by W&B's core for output.log and by LEET's console-logs pane), so runmon's
// output.log, leet and dashboard show what W&B's tools show for the same records:
//  - each stream (stdout, stderr) has a terminal of `window` rows: `\n` moves to the next row (scrolling
//    at the bottom) and to column 0, `\r` to column 0, ESC [ A and ESC [ B one row up and down (no further
//    up than the top row), and a character is put at the cursor, overwriting what is there;
//  - every other escape sequence is kept as its characters (colours stay in the text, as in W&B's
//    output.log), and so is every other control character: a renderer sanitizes what it shows;
//  - a line is started when a character is first put on its row, numbered across both streams in that
//    order, and keeps the timestamp of the output that started it;
//  - the last `window` lines may still change; older ones are finished; a line holds at most
//    `max_line_runes` characters (what goes past is dropped, as W&B drops it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace runmon::console {

enum class ConsoleStream : uint8_t { kStdout, kStderr };

struct ConsoleLine {
  uint64_t number = 0;
  ConsoleStream stream = ConsoleStream::kStdout;
  double timestamp = 0;  // seconds since the epoch
  std::string text;      // UTF-8
};

class TerminalLines {
 public:
  static constexpr size_t kDefaultMaxLineRunes = 65536;

  TerminalLines(size_t window, size_t max_line_runes = kDefaultMaxLineRunes);

  // `text` is UTF-8; each byte of an invalid sequence counts as U+FFFD (the caller keeps sequences whole).
  void Write(ConsoleStream stream, std::string_view text, double timestamp);
  void Put(ConsoleStream stream, char32_t rune);  // one character of the stream (timestamp: the last one's)

  // Lines finished since the last call, oldest first.
  std::vector<ConsoleLine> TakeFinished();
  // The lines that may still change, oldest first.
  std::vector<ConsoleLine> OpenLines() const;
  // Finishes every open line (the output ended).
  void FinishAll();

  uint64_t lines_started() const { return next_number_; }
  // The text bytes of the lines finished and not yet taken (a writer takes them once they add up).
  size_t finished_bytes() const { return finished_bytes_; }
  // Changes with every change of a line (a reader redraws when it moves).
  uint64_t version() const { return version_; }

 private:
  enum class Escape : uint8_t { kNone, kEscape, kBracket };
  struct Terminal {
    std::vector<uint64_t> view;  // line numbers, top row first
    size_t row = 0;
    size_t column = 0;
    Escape escape = Escape::kNone;
  };
  struct OpenLine {
    uint64_t number = 0;
    ConsoleStream stream = ConsoleStream::kStdout;
    double timestamp = 0;
    std::u32string runes;
  };

  Terminal& TerminalOf(ConsoleStream stream) { return terminals_[stream == ConsoleStream::kStderr ? 1 : 0]; }
  void PutCharacter(ConsoleStream stream, Terminal& terminal, char32_t rune);
  void PutRun(ConsoleStream stream, Terminal& terminal, std::string_view ascii);  // printable ASCII
  void LineFeed(Terminal& terminal);
  void Finish(OpenLine&& line);

  const size_t window_;
  const size_t max_line_runes_;
  Terminal terminals_[2];
  std::deque<OpenLine> open_;  // numbers open_.front().number ... next_number_ - 1
  std::vector<ConsoleLine> finished_;
  size_t finished_bytes_ = 0;
  uint64_t next_number_ = 0;
  uint64_t version_ = 0;
  double timestamp_ = 0;
};

}  // namespace runmon::console
