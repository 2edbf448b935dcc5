// The wall clock as runmon stamps samples and runs: seconds since the Unix epoch, as a double.
#pragma once

#include <chrono>

namespace runmon {

inline double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace runmon
