// The wall clock as runmon stamps samples and runs: seconds since the Unix epoch, as a double; and the one
// rule that turns such a time into the run log's (seconds, nanoseconds) and into Prometheus' milliseconds,
// so that a value remote-written live and the same value backfilled from the log later land on the same
// millisecond (a receiver takes a second value at another millisecond as a second sample).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace runmon {

inline double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct EpochTime {
  int64_t seconds = 0;
  int32_t nanos = 0;  // 0 <= nanos < 1e9
};

// Nanoseconds rounded; NaN is 0 and anything outside protobuf's Timestamp range (years 1 to 9999) is
// clamped to it.
inline EpochTime SplitEpochSeconds(double seconds) {
  constexpr double kEarliest = -62135596800.0, kLatest = 253402300799.0;
  if (!std::isfinite(seconds)) seconds = 0;
  seconds = std::clamp(seconds, kEarliest, kLatest);
  auto whole = static_cast<int64_t>(std::floor(seconds));
  auto nanos = static_cast<int64_t>(std::llround((seconds - static_cast<double>(whole)) * 1e9));
  if (nanos >= 1'000'000'000) {
    ++whole;
    nanos -= 1'000'000'000;
  }
  return {whole, static_cast<int32_t>(nanos)};
}

// Milliseconds since the epoch, rounded to the nearest, of a run log's time.
inline int64_t EpochMillis(const EpochTime& time) {
  return time.seconds * 1000 + (time.nanos + 500'000) / 1'000'000;
}

// The same for a sample's time: through the log's nanoseconds, so both ways agree.
inline int64_t EpochMillis(double seconds) {
  return EpochMillis(SplitEpochSeconds(seconds));
}

}  // namespace runmon
