// A run's console output as leet and the dashboard show it: the OutputRawRecords of its log assembled into
// lines by W&B's terminal emulation (console/terminal_lines.hpp, 64 rows per stream as LEET's pane uses),
// each line with its stream and the time of the output that started it. The newest kMaxLines lines are
// kept (a week of chatty output must not hold the whole log in memory); older ones are dropped and
// counted, so line numbers stay those of the whole run. The last lines may still change (a progress bar
// being redrawn) until output after them pushes them out of the emulator's rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <vector>

#include "console/terminal_lines.hpp"

namespace runmon::runview {

using console::ConsoleLine;
using console::ConsoleStream;

class ConsoleLog {
 public:
  static constexpr size_t kMaxLines = 100000;
  static constexpr size_t kRows = 64;

  explicit ConsoleLog(size_t max_lines = kMaxLines) : max_lines_(max_lines) {}

  void Add(ConsoleStream stream, std::string_view text, double timestamp);

  // Lines held, oldest first: line i (0 <= i < size()) has number first_number() + i.
  size_t size() const;
  const ConsoleLine& at(size_t index) const;
  uint64_t first_number() const { return dropped_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t lines_started() const { return lines_.lines_started(); }
  bool empty() const { return size() == 0; }
  // Changes whenever a line is added or changed.
  uint64_t version() const { return lines_.version(); }
  size_t MemoryBytes() const;

 private:
  void RefreshOpen() const;

  const size_t max_lines_;
  console::TerminalLines lines_{kRows};
  std::deque<ConsoleLine> finished_;
  uint64_t dropped_ = 0;
  size_t text_bytes_ = 0;  // of finished_
  // The open lines as of version open_version_, made when asked for.
  mutable std::vector<ConsoleLine> open_;
  mutable uint64_t open_version_ = UINT64_MAX;
  // A mutex that a copy or move of the log leaves behind (a model is copied only while nobody reads it).
  struct RefreshMutex {
    std::mutex mutex;
    RefreshMutex() = default;
    RefreshMutex(const RefreshMutex&) {}
    RefreshMutex& operator=(const RefreshMutex&) { return *this; }
  };
  mutable RefreshMutex open_mutex_;
};

}  // namespace runmon::runview
