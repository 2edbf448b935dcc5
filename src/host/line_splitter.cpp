// Line reassembly (see line_splitter.hpp). A line that lies wholly inside one piece is handed out as a view
// into that piece, without a copy; only a line split across pieces is gathered in `pending_`.
#include "host/line_splitter.hpp"

namespace runmon {

void LineSplitter::Append(std::string_view piece, const LineHandler& on_line,
                          const OverlongHandler& on_overlong) {
  while (!piece.empty()) {
    const size_t newline = piece.find('\n');
    const std::string_view part = piece.substr(0, newline);
    if (skipping_) {
      skipped_bytes_ += part.size();
    } else if (pending_.size() + part.size() > max_line_bytes_) {
      skipping_ = true;
      skipped_bytes_ = pending_.size() + part.size();
      pending_.clear();
    } else if (newline != std::string_view::npos && pending_.empty()) {
      on_line(part);
    } else {
      pending_.append(part);
      if (newline != std::string_view::npos) {
        on_line(pending_);
        pending_.clear();
      }
    }
    if (newline == std::string_view::npos) return;
    if (skipping_) {
      skipping_ = false;
      on_overlong(skipped_bytes_);
      skipped_bytes_ = 0;
    }
    piece.remove_prefix(newline + 1);
  }
}

size_t LineSplitter::Reset() {
  const size_t dropped = skipping_ ? skipped_bytes_ : pending_.size();
  pending_.clear();
  skipping_ = false;
  skipped_bytes_ = 0;
  return dropped;
}

}  // namespace runmon
