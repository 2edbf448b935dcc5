// The sampler: the one writer of samples. It ticks on the monotonic clock at t = 0, every interval (no
// drift: tick k is due at start + k x interval; a pass that overruns skips the ticks it missed rather than
// bursting), and once more when stopped.
//
// Collectors run in lanes, one thread each. The first lane leads: its thread keeps the clock, hands each
// tick to the other lanes, runs its own collectors itself, waits for the others up to a deadline (half the
// interval, at most 5 s) and emits one sample with every value that arrived. A lane that misses the
// deadline is not waited for again: its values are emitted later as a "late" sample stamped with their own
// tick, and while it is still busy at the next tick it is reported hung and skipped; the collector stuck
// in it keeps that thread and the lane's other collectors move to a new lane, so they are delayed by one
// deadline at most. A watchdog does the same for the leading lane: when one of its collectors has not
// returned within the deadline, the lead passes to a new lane with the leader's other collectors.
// A collector that fails is retried with exponential backoff (1, 2, 4, ... ticks, at most about a minute);
// its state is visible through States() and every change is logged. A collector whose source has ended
// (Collector::Ended: the monitored process exited) is not run again and nothing is logged. The sink and the
// logger are called by the leading thread (and by Run() at the end), one call at a time, never with a lock
// held. Each on-time sample carries how every collector's latest pass went (Sample::collectors: its
// duration and whether it succeeded), copied as the sample is merged: the exporter publishes them from the
// sink, so no reader ever takes the sampler's lock (States() does; it is for tests and shutdown).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collectors/builtin.hpp"
#include "core/sample.hpp"

namespace runmon {

struct SamplerOptions {
  double interval_seconds = 15.0;
  std::optional<uint64_t> max_samples;  // stop after this many samples (no extra final sample)
  // How long a tick waits for its lanes; unset: half the interval, at most 5 s.
  std::optional<double> lane_timeout_seconds;
  double max_backoff_seconds = 60.0;
};

enum class CollectorHealth { kOk, kDegraded, kFailing, kHung, kEnded };

struct CollectorState {
  std::string name;
  std::string lane;
  CollectorHealth health = CollectorHealth::kOk;
  std::string message;  // the last error, when not ok
  unsigned consecutive_failures = 0;
  uint64_t collections = 0;  // successful or degraded passes
  double last_millis = 0;    // duration of its last Collect
};

class Sampler {
 public:
  using Sink = std::function<void(const Sample&)>;
  using Logger = std::function<void(const std::string&)>;

  Sampler(std::vector<CollectorSpec> collectors, SamplerOptions options, Sink sink, Logger log);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Samples until Stop() (then takes the final sample) or until max_samples have been emitted.
  void Run();
  // Thread-safe; makes Run take its final sample and return.
  void Stop();
  std::vector<CollectorState> States() const;

  // Implementation types, defined in sampler.cpp.
  struct Lane;
  struct LaneEntry;
  struct Shared;

 private:
  void Watch();

  std::shared_ptr<Shared> shared_;
  std::thread watchdog_;
};

}  // namespace runmon
