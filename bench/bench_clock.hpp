// The clocks the benchmarks read: CPU time from getrusage (the process's own, or its reaped children's: a
// tool's) and a monotonic wall clock, both in seconds.
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace runmon::bench {

inline double RusageCpuSeconds(int who = RUSAGE_SELF) {
  rusage usage{};
  ::getrusage(who, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

inline double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace runmon::bench
