// A run's console lines (see console_log.hpp).
#include "runview/console_log.hpp"

namespace runmon::runview {

void ConsoleLog::Add(ConsoleStream stream, std::string_view text, double timestamp) {
  lines_.Write(stream, text, timestamp);
  // TerminalLines hands a finished line over once; it is kept here.
  for (ConsoleLine& line : lines_.TakeFinished()) {
    text_bytes_ += line.text.size();
    finished_.push_back(std::move(line));
  }
  const uint64_t open = lines_.lines_started() - dropped_ - finished_.size();
  while (!finished_.empty() && finished_.size() + open > max_lines_) {
    text_bytes_ -= finished_.front().text.size();
    finished_.pop_front();
    ++dropped_;
  }
}

void ConsoleLog::RefreshOpen() const {
  // Readers may share a lock on the run: the first one after a change remakes the open lines, once; the
  // others find them made (no change comes while they read, so no reference they hold is remade).
  std::lock_guard lock(open_mutex_.mutex);
  if (open_version_ == lines_.version()) return;
  open_version_ = lines_.version();
  open_ = lines_.OpenLines();
}

size_t ConsoleLog::size() const {
  return static_cast<size_t>(lines_.lines_started() - dropped_);
}

const ConsoleLine& ConsoleLog::at(size_t index) const {
  if (index < finished_.size()) return finished_[index];
  RefreshOpen();
  return open_[index - finished_.size()];
}

size_t ConsoleLog::MemoryBytes() const {
  RefreshOpen();
  size_t open_bytes = 0;
  for (const ConsoleLine& line : open_) open_bytes += line.text.size();
  return text_bytes_ + open_bytes + (finished_.size() + open_.size()) * sizeof(ConsoleLine);
}

}  // namespace runmon::runview
