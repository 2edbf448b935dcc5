// WaitUntil: polls a condition every 5 ms until it holds or `limit` passes, for tests that wait on another
// thread (a server's workers, a pool shrinking) without sleeping a fixed time.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace runmon::testing {

inline bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace runmon::testing
