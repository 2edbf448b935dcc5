// Rate limiting for warnings a collector may hit every tick (bad lines of a scrape, impossible kernel
// values): the first is written, then at most one per interval, each saying how many were held back.
#pragma once

#include <chrono>
#include <cstddef>

namespace runmon {

class WarningLimiter {
 public:
  explicit WarningLimiter(double interval_seconds) : interval_(interval_seconds) {}

  // Whether to write a warning now; `held_back` gets how many were not written since the last one.
  bool Allow(size_t* held_back) {
    const auto now = std::chrono::steady_clock::now();
    if (written_ && std::chrono::duration<double>(now - last_).count() < interval_) {
      ++held_back_;
      return false;
    }
    *held_back = held_back_;
    held_back_ = 0;
    written_ = true;
    last_ = now;
    return true;
  }

 private:
  double interval_;
  bool written_ = false;
  std::chrono::steady_clock::time_point last_{};
  size_t held_back_ = 0;
};

}  // namespace runmon
