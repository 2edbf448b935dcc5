// Reassembling the lines of a byte stream that arrives in arbitrary pieces (a tool's stdout read from a
// pipe: one write may hold half a line or several). Each complete line (without its '\n') goes to the
// caller. A line longer than the limit is never buffered: once the pending part passes the limit it is
// dropped and everything up to the next '\n' is skipped, then reported once with its length. Pure: no I/O,
// so the streaming tool runner and the fuzzer share it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace runmon {

class LineSplitter {
 public:
  using LineHandler = std::function<void(std::string_view line)>;
  // Called when an over-long line has ended, with its length without the '\n'.
  using OverlongHandler = std::function<void(size_t line_bytes)>;

  explicit LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Feeds the next piece of the stream; complete lines are handed out before this returns.
  void Append(std::string_view piece, const LineHandler& on_line, const OverlongHandler& on_overlong);

  // Forgets the unfinished line (the stream ended or restarted); returns how many bytes it had.
  size_t Reset();

  // Bytes held for the unfinished line: never more than max_line_bytes.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  size_t max_line_bytes_;
  std::string pending_;
  bool skipping_ = false;  // inside an over-long line, waiting for its '\n'
  size_t skipped_bytes_ = 0;
};

}  // namespace runmon
