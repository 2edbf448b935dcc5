// W&B's terminal emulation of console output (see terminal_lines.hpp).
#include "console/terminal_lines.hpp"

#include <algorithm>

#include "console/utf8_decoder.hpp"

namespace runmon::console {

TerminalLines::TerminalLines(size_t window, size_t max_line_runes)
    : window_(std::max<size_t>(window, 1)), max_line_runes_(max_line_runes) {}

void TerminalLines::Write(ConsoleStream stream, std::string_view text, double timestamp) {
  timestamp_ = timestamp;
  Utf8Decoder decoder;
  decoder.Decode(text, [&](char32_t rune) { Put(stream, rune); });
  decoder.Finish([&](char32_t rune) { Put(stream, rune); });
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
}

std::vector<ConsoleLine> TerminalLines::TakeFinished() {
  std::vector<ConsoleLine> lines;
  lines.swap(finished_);
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
