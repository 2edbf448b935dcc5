// The text of a stream's OutputRawRecords, made from what the command wrote: a progress bar redrawn with
// `\r` a thousand times is stored as the line's state when the text is taken, not as a thousand copies.
// The guarantee, which the tests and the fuzz target check: W&B's terminal emulation (TerminalLines) of the
// taken texts, in order, gives the same lines as its emulation of the raw bytes, whenever and however
// often Take() is called and however the bytes were chunked. So:
//  - on a line that no cursor movement has reached, the coalescer keeps the line's characters and the
//    cursor's column, and Take() gives the state: what was put since the last Take() when no `\r` came
//    since, else the line (after a `\r` when part of it was taken before) and, when the cursor is not at
//    its end, a `\r` and the characters up to it;
//  - after ESC [ A or ESC [ B (tqdm's bars below the first) rows above or below may change, and after
//    any other escape sequence the line holds an ESC that the same reader could parse differently once
//    the line is overwritten or cut at the length limit (W&B keeps such sequences as characters), so the
//    bytes are passed on as they are until a `\n` reaches a row the cursor never visited (a fresh line
//    in every emulator, whatever its height): coloured lines are stored as written;
//  - the text is valid UTF-8 (each invalid byte a U+FFFD, as W&B's reader would decode it), and a
//    sequence cut by a chunk's end waits for the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "console/terminal_lines.hpp"
#include "console/utf8_decoder.hpp"

namespace runmon::console {

class OutputCoalescer {
 public:
  explicit OutputCoalescer(size_t max_line_runes = TerminalLines::kDefaultMaxLineRunes);

  void Append(std::string_view bytes);
  // The text for what was appended since the last call (empty when nothing changed); valid until the
  // next call (the two buffers are kept, so a flood allocates nothing per call).
  const std::string& Take();
  // Ends the stream: a cut UTF-8 sequence becomes U+FFFD. Take() the rest afterwards.
  void Finish();

 private:
  enum class Escape : uint8_t { kNone, kEscape, kBracket };
  void Process(char32_t rune);
  void ProcessPassedOn(char32_t rune);
  void PutCharacter(char32_t rune);
  void EmitLineState(bool restore_cursor);
  // Passes `sequence` and what follows on as it is; `row`: where the sequence leaves the cursor.
  void EnterPassOn(std::u32string_view sequence, int64_t row);

  const size_t max_line_runes_;
  Utf8Decoder decoder_;
  std::string out_;
  std::string taken_;
  Escape escape_ = Escape::kNone;
  // The kept line (outside pass-on).
  std::u32string line_;
  size_t column_ = 0;
  bool line_taken_ = false;  // part of the line was given out already
  size_t taken_column_ = 0;  // the cursor's column when it was
  bool changed_ = false;     // line or column changed since it was last given out
  bool rewound_ = false;     // a `\r` since then
  // Pass-on: rows relative to the row it started on (down is positive), and the lowest row visited.
  bool passing_on_ = false;
  int64_t row_ = 0;
  int64_t lowest_row_ = 0;
};

}  // namespace runmon::console
