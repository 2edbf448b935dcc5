// The vendor tools as the AMD family's fallback, for values sysfs lacks or cannot be read for (some
// containers): `amd-smi` when it is on the search path (ROCm 6+), else `rocm-smi`, run through the host's
// tool runner (CollectorContext::run_tool) with a deadline, never more often than the interval and never
// on the sampler's thread. Request(now) asks for a run and returns at once: a worker thread runs the tool
// when none is in flight, an interval has passed since the last start and any backoff after a failure is
// over, so at most one tool process exists at any time. Latest(now) gives the last successful reading
// while it is fresh (at most `stale_after_intervals` intervals old); an older one is not used.
//
// amd-smi's metric output has no PCI addresses: `amd-smi list --json` is run first, until it has worked
// once, to pair each `gpu` number with its bus. rocm-smi runs as `-a --showmeminfo vram gtt --json` (the
// byte counts are not part of -a). A run fails when the tool cannot be started, exits non-zero, passes its
// deadline (the runner kills its process group), prints more than the cap, prints nothing (Debian's
// rocm-smi exits 0 without a GPU, saying why on stderr), prints what does not parse or reports no card.
// A failure is kept as a message, taken once by TakeFailure until a different one or a success follows,
// and retried after a backoff that doubles from two intervals up to `retry_max_seconds`.
// The destructor stops a run in flight (the runner ends the tool within 50 ms, as at its deadline) and
// waits for the worker: shutting down never waits out a hung tool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collectors/amd/amd_card_reading.hpp"
#include "collectors/amd/amd_smi_parse.hpp"
#include "core/result.hpp"
#include "host/tool_runner.hpp"

namespace runmon::amd {

enum class VendorTool { kAmdSmi, kRocmSmi };
std::string_view VendorToolName(VendorTool tool);

// The tool the fallback would run from `search_path`: amd-smi when it is there, else rocm-smi, else none.
std::optional<VendorTool> FindVendorTool(const std::string& search_path);

struct ToolFallbackOptions {
  double interval_seconds = 1.0;
  double deadline_seconds = 1.0;  // per tool process
  size_t max_stdout_bytes = 4 * 1024 * 1024;
  double kill_grace_seconds = 0.5;
  double stale_after_intervals = 3.0;
  double retry_max_seconds = 300.0;

  // The interval's options: a deadline of the interval, at least 1 s (rocm-smi takes a few hundred ms to
  // start) and at most 5 s.
  static ToolFallbackOptions ForInterval(double interval_seconds);
};

struct ToolReading {
  std::vector<ToolCard> cards;
  double taken_at_seconds = 0;  // the `now` of the Request that started the run
};

class AmdToolFallback {
 public:
  using RunToolFunction = std::function<Result<ToolOutput>(const ToolCommand&, const ToolLimits&)>;

  // The fallback for the tool found on `search_path` (CollectorContext's ToolSearchPath), started with
  // `environment` (CollectorContext::environment; empty: runmon's own); an error when neither is there.
  static Result<std::unique_ptr<AmdToolFallback>> Find(RunToolFunction run_tool,
                                                       const std::string& search_path,
                                                       const std::map<std::string, std::string>& environment,
                                                       ToolFallbackOptions options);

  AmdToolFallback(VendorTool tool, RunToolFunction run_tool, ToolCommand command,
                  ToolFallbackOptions options);
  ~AmdToolFallback();
  AmdToolFallback(const AmdToolFallback&) = delete;
  AmdToolFallback& operator=(const AmdToolFallback&) = delete;

  VendorTool tool() const { return tool_; }

  // Starts a run in the background when one is due (see above); never waits for the tool. `now_seconds`
  // is the caller's monotonic clock, the one Latest is asked with.
  void Request(double now_seconds);

  // The last successful reading, unless it is older than `stale_after_intervals` intervals at `now`.
  std::optional<ToolReading> Latest(double now_seconds) const;

  // The latest failure when it has not been taken yet; a failure repeating the one taken last is not
  // given again until a run succeeds.
  std::optional<std::string> TakeFailure();

  // Whether a tool run is under way (requested and not finished).
  bool InFlight() const;

 private:
  void Work();
  // One run: the list (amd-smi, until it has worked) and the readings; the cards or why there are none.
  Result<std::vector<ToolCard>> RunOnce();
  Result<std::string> RunCommand(const ToolCommand& command);

  const VendorTool tool_;
  const RunToolFunction run_tool_;
  const ToolCommand command_;  // the reading: rocm-smi -a ... or amd-smi metric ...
  const ToolFallbackOptions options_;
  std::optional<std::vector<AmdSmiListEntry>> amd_smi_list_;  // the worker's own: gpu -> PCI bus

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> stop_tool_{false};  // the runner's stop request (ToolLimits::stop)
  bool in_flight_ = false;
  double run_started_at_ = 0;
  std::optional<double> last_start_;
  double next_allowed_start_ = 0;
  int consecutive_failures_ = 0;
  std::optional<ToolReading> latest_;
  std::optional<std::string> failure_;     // not yet taken
  std::optional<std::string> last_taken_;  // the failure last taken, since the last success
  std::thread worker_;
};

}  // namespace runmon::amd
