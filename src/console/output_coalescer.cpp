// Coalescing console output into OutputRawRecord text (see output_coalescer.hpp).
#include "console/output_coalescer.hpp"

#include <algorithm>

#include "console/ascii_scan.hpp"

namespace runmon::console {

OutputCoalescer::OutputCoalescer(size_t max_line_runes) : max_line_runes_(max_line_runes) {}

void OutputCoalescer::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    // The common case, a whole line of plain ASCII at a fresh line, goes out as it came.
    if (!passing_on_ && escape_ == Escape::kNone && decoder_.idle() && line_.empty() && column_ == 0 &&
        !line_taken_ && !changed_) {
      size_t done = 0;
      for (;;) {
        const size_t end = bytes.find('\n', done);
        if (end == std::string_view::npos || end - done > max_line_runes_ ||
            !AllPlain(bytes.substr(done, end - done))) {
          break;
        }
        done = end + 1;
      }
      out_.append(bytes.substr(0, done));
      bytes.remove_prefix(done);
      if (bytes.empty()) return;
    }
    // Else up to the next line's start, a character at a time (a `\n` is never inside a character).
    const size_t newline = bytes.find('\n');
    const size_t length = newline == std::string_view::npos ? bytes.size() : newline + 1;
    decoder_.Decode(bytes.substr(0, length), [this](char32_t rune) { Process(rune); });
    bytes.remove_prefix(length);
  }
}

void OutputCoalescer::Finish() {
  decoder_.Finish([this](char32_t rune) { Process(rune); });
}

const std::string& OutputCoalescer::Take() {
  if (!passing_on_) EmitLineState(/*restore_cursor=*/true);
  taken_.swap(out_);
  out_.clear();
  return taken_;
}

void OutputCoalescer::Process(char32_t rune) {
  if (passing_on_) {
    ProcessPassedOn(rune);
    return;
  }
  switch (escape_) {
    case Escape::kNone:
      if (rune == U'\r') {
        column_ = 0;
        changed_ = rewound_ = true;
      } else if (rune == U'\n') {
        EmitLineState(/*restore_cursor=*/false);
        out_ += '\n';
        line_.clear();
        column_ = taken_column_ = 0;
        line_taken_ = changed_ = rewound_ = false;
      } else if (rune == 0x1B) {
        escape_ = Escape::kEscape;
      } else {
        PutCharacter(rune);
      }
      return;
    case Escape::kEscape:
      escape_ = Escape::kNone;
      if (rune == U'[') {
        escape_ = Escape::kBracket;
        return;
      }
      EnterPassOn(std::u32string{0x1B, rune}, 0);
      return;
    case Escape::kBracket:
      escape_ = Escape::kNone;
      EnterPassOn(std::u32string{0x1B, U'[', rune}, rune == U'A' ? -1 : rune == U'B' ? 1 : 0);
      return;
  }
}

void OutputCoalescer::PutCharacter(char32_t rune) {
  // Past the longest line a reader keeps, a character changes nothing but the column.
  if (column_ < max_line_runes_) {
    if (column_ < line_.size()) {
      line_[column_] = rune;
    } else {
      line_.push_back(rune);  // the column never passes the line's end before the limit
    }
  }
  ++column_;
  changed_ = true;
}

void OutputCoalescer::EmitLineState(bool restore_cursor) {
  if (!changed_) return;
  if (line_taken_ && !rewound_) {
    // Written on from where the cursor was left: only what was put since, at the cursor.
    const size_t end = std::min(column_, line_.size());
    if (taken_column_ < end)
      AppendRunes(out_, std::u32string_view(line_).substr(taken_column_, end - taken_column_));
  } else {
    if (line_taken_) out_ += '\r';
    AppendRunes(out_, line_);
    // A cursor past the limit is where a cursor at the limit would be: what it puts is dropped.
    if (restore_cursor && column_ < line_.size()) {
      out_ += '\r';
      AppendRunes(out_, std::u32string_view(line_).substr(0, column_));
    }
  }
  taken_column_ = column_;
  line_taken_ = true;
  changed_ = rewound_ = false;
}

void OutputCoalescer::EnterPassOn(std::u32string_view sequence, int64_t row) {
  EmitLineState(/*restore_cursor=*/true);
  AppendRunes(out_, sequence);
  passing_on_ = true;
  row_ = row;
  lowest_row_ = std::max<int64_t>(0, row_);
  line_.clear();
  column_ = taken_column_ = 0;
  line_taken_ = changed_ = rewound_ = false;
}

void OutputCoalescer::ProcessPassedOn(char32_t rune) {
  AppendUtf8(out_, rune);
  switch (escape_) {
    case Escape::kNone:
      if (rune == U'\n') {
        ++row_;
        if (row_ > lowest_row_) passing_on_ = false;  // a fresh line at column 0, in every emulator
      } else if (rune == 0x1B) {
        escape_ = Escape::kEscape;
      }
      return;
    case Escape::kEscape:
      escape_ = rune == U'[' ? Escape::kBracket : Escape::kNone;
      return;
    case Escape::kBracket:
      escape_ = Escape::kNone;
      if (rune == U'A') --row_;
      if (rune == U'B') lowest_row_ = std::max(lowest_row_, ++row_);
      return;
  }
}

}  // namespace runmon::console
