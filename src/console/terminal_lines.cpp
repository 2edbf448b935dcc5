// W&B's terminal emulation of console output (see terminal_lines.hpp).
#include "console/terminal_lines.hpp"

#include <algorithm>

#include "console/ascii_scan.hpp"
#include "console/utf8_decoder.hpp"

namespace runmon::console {

TerminalLines::TerminalLines(size_t window, size_t max_line_runes)
    : window_(std::max<size_t>(window, 1)), max_line_runes_(max_line_runes) {}

namespace {

bool Printable(char c) {
  return c >= 0x20 && c <= 0x7E;
}

// Where the run of printable ASCII at text[i] ends, given where the line ends (its `\n`, or the text's
// end): most often there, which a whole-line check tells at once.
size_t PrintableEnd(std::string_view text, size_t i, size_t line_end) {
  if (AllPrintable(text.substr(i, line_end - i))) return line_end;
  while (i < line_end && Printable(text[i])) ++i;
  return i;
}

}  // namespace

void TerminalLines::Write(ConsoleStream stream, std::string_view text, double timestamp) {
  timestamp_ = timestamp;
  Utf8Decoder decoder;
  const auto put = [&](char32_t rune) { Put(stream, rune); };
  Terminal& terminal = TerminalOf(stream);
  const auto line_end_from = [&](size_t from) { return std::min(text.find('\n', from), text.size()); };
  size_t i = 0;
  size_t line_end = line_end_from(0);  // the first `\n` at or after i: found again only once passed
  while (i < text.size()) {
    if (line_end < i) line_end = line_end_from(i);
    // Printable ASCII outside an escape is put a run at a time (what most output is).
    size_t end = PrintableEnd(text, i, line_end);
    if (end > i && terminal.escape == Escape::kNone) {
      decoder.Finish(put);  // a cut sequence before ASCII was invalid: its bytes are U+FFFD
      PutRun(stream, terminal, text.substr(i, end - i));
      i = end;
      continue;
    }
    end = std::max(end, i + 1);
    while (end < text.size() && !Printable(text[end])) ++end;
    decoder.Decode(text.substr(i, end - i), put);
    i = end;
  }
  decoder.Finish(put);
}

void TerminalLines::PutRun(ConsoleStream stream, Terminal& terminal, std::string_view ascii) {
  PutCharacter(stream, terminal, static_cast<unsigned char>(ascii.front()));  // makes the line if needed
  const uint64_t number = terminal.view[terminal.row];
  const size_t start = terminal.column;
  terminal.column += ascii.size() - 1;
  if (open_.empty() || number < open_.front().number || start >= max_line_runes_) return;
  std::u32string& runes = open_[static_cast<size_t>(number - open_.front().number)].runes;
  const size_t end = std::min(start + ascii.size() - 1, max_line_runes_);
  if (end > runes.size()) runes.resize(end, U' ');
  const char* from = ascii.data() + 1;
  char32_t* to = runes.data() + start;
  bool changed = false;  // no early exit, so the loop can be vectorized
  for (size_t k = 0; k < end - start; ++k) {
    const auto rune = static_cast<char32_t>(static_cast<unsigned char>(from[k]));
    changed |= to[k] != rune;
    to[k] = rune;
  }
  if (changed) ++version_;
}

void TerminalLines::Put(ConsoleStream stream, char32_t rune) {
  Terminal& terminal = TerminalOf(stream);
  switch (terminal.escape) {
    case Escape::kNone:
      if (rune == U'\r') {
        terminal.column = 0;
      } else if (rune == U'\n') {
        LineFeed(terminal);
      } else if (rune == 0x1B) {
        terminal.escape = Escape::kEscape;
      } else {
        PutCharacter(stream, terminal, rune);
      }
      return;
    case Escape::kEscape:
      terminal.escape = Escape::kNone;
      if (rune == U'[') {
        terminal.escape = Escape::kBracket;
        return;
      }
      PutCharacter(stream, terminal, 0x1B);
      PutCharacter(stream, terminal, rune);
      return;
    case Escape::kBracket:
      terminal.escape = Escape::kNone;
      if (rune == U'A') {
        if (terminal.row > 0) --terminal.row;
      } else if (rune == U'B') {
        const size_t column = terminal.column;  // down keeps the column, unlike a line feed
        LineFeed(terminal);
        terminal.column = column;
      } else {
        PutCharacter(stream, terminal, 0x1B);
        PutCharacter(stream, terminal, U'[');
        PutCharacter(stream, terminal, rune);
      }
      return;
  }
}

void TerminalLines::LineFeed(Terminal& terminal) {
  terminal.column = 0;
  ++terminal.row;
  if (terminal.row >= window_) {
    if (!terminal.view.empty()) terminal.view.erase(terminal.view.begin());
    --terminal.row;
  }
}

void TerminalLines::PutCharacter(ConsoleStream stream, Terminal& terminal, char32_t rune) {
  while (terminal.row >= terminal.view.size()) {
    terminal.view.push_back(next_number_);
    open_.push_back({next_number_, stream, timestamp_, {}});
    ++next_number_;
    ++version_;
    if (open_.size() > window_) {
      Finish(std::move(open_.front()));
      open_.pop_front();
    }
  }
  const size_t column = terminal.column++;
  const uint64_t number = terminal.view[terminal.row];
  if (open_.empty() || number < open_.front().number || column >= max_line_runes_) return;
  std::u32string& runes = open_[static_cast<size_t>(number - open_.front().number)].runes;
  if (column >= runes.size()) runes.resize(column + 1, U' ');
  if (runes[column] == rune) return;
  runes[column] = rune;
  ++version_;
}

void TerminalLines::Finish(OpenLine&& line) {
  finished_.push_back({line.number, line.stream, line.timestamp, EncodeUtf8(line.runes)});
  finished_bytes_ += finished_.back().text.size();
}

std::vector<ConsoleLine> TerminalLines::TakeFinished() {
  std::vector<ConsoleLine> lines;
  lines.swap(finished_);
  finished_bytes_ = 0;
  return lines;
}

std::vector<ConsoleLine> TerminalLines::OpenLines() const {
  std::vector<ConsoleLine> lines;
  lines.reserve(open_.size());
  for (const OpenLine& line : open_) {
    lines.push_back({line.number, line.stream, line.timestamp, EncodeUtf8(line.runes)});
  }
  return lines;
}

void TerminalLines::FinishAll() {
  for (OpenLine& line : open_) Finish(std::move(line));
  open_.clear();
  ++version_;
}

}  // namespace runmon::console
