// runmon/run.hpp: runmon inside a program, without the `runmon run` wrapper.
//
//   #include <runmon/run.hpp>
//   auto run = runmon::Run::start({.dir = "wandb", .name = "pretrain", .interval = 1.0});
//   for (int step = 0; step < steps; ++step) run.log({{"loss", loss}}, step);
//   run.finish(0);
//
// start() creates the run directory (<dir>/run-YYYYMMDD_HHMMSS-<id>/run-<id>.wandb and <dir>/latest-run)
// and samples the host and this process's tree in a background thread, every `interval` seconds (W&B's
// x_stats_* environment variables apply as under `runmon run`), into the same W&B run log `runmon run`
// writes. log() and summary() record the program's own metrics as `runmon run`'s channel does (history rows
// by step, the summary at the end; docs/training-metrics.md). finish() takes the final sample, writes the
// summary and the exit record and closes the log; the destructor finishes a run not finished (exit code 1
// while an exception unwinds, else 0). runmon's own cost (runmon.cpuPercent, runmon.rssMB) is not reported:
// inside the program it cannot be told apart from the program's.
//
// Promises: log(), summary() and finish() are thread-safe, never throw and never wait for the disk (rows
// are queued for the log's writer thread; only when it is far behind are they dropped, and counted). After
// finish() they do nothing and return false. In a process forked from the one that started the run, every
// call does nothing (the run's threads are not there). Link with runmon::runmon (CMake) or `pkg-config
// --libs runmon`; the C interface is runmon.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace runmon {

namespace detail {
struct RunState;  // defined in the library
}  // namespace detail

using MetricValue = std::pair<std::string_view, double>;

struct RunOptions {
  std::string dir = "wandb";       // where runs go (created when missing)
  std::string name;                // the run's display name; empty: the program's name
  std::optional<double> interval;  // seconds between samples, at least 0.1; unset: 15, or W&B's setting
  std::string project;             // W&B's project field; may be empty
  std::string id;                  // the run's id; empty: a new one, as W&B makes them
};

class Run {
 public:
  // Starts recording. Throws std::invalid_argument for bad options and std::runtime_error when the run
  // cannot be recorded (the directory or log cannot be created, no thread can start); messages start with
  // "runmon: ".
  static Run start(const RunOptions& options);

  Run(Run&& other) noexcept;
  Run& operator=(Run&& other) noexcept;
  ~Run();

  // Logs `metrics` at `step` (from 0; without one the values join the step the last call named and end it,
  // or take the next step, as W&B's wandb.log does). False when nothing was taken: finished, a step behind
  // the last one, a negative step, or an unusable key (empty, over 1,024 bytes, or one of W&B's own:
  // _step, _runtime, _timestamp); such values are counted in dropped().
  bool log(std::initializer_list<MetricValue> metrics, std::optional<int64_t> step = std::nullopt) noexcept {
    return log(std::span<const MetricValue>(metrics.begin(), metrics.size()), step);
  }
  bool log(std::span<const MetricValue> metrics, std::optional<int64_t> step = std::nullopt) noexcept;
  // One line of the channel's protocol (a JSON object: nested objects flattened with '.', strings, booleans,
  // `_step`, `_summary`); false, counted, when it does not parse or is refused.
  bool log_json(std::string_view line) noexcept;
  // Sets summary values; they win over the last logged values of their keys.
  bool summary(std::initializer_list<MetricValue> metrics) noexcept {
    return summary(std::span<const MetricValue>(metrics.begin(), metrics.size()));
  }
  bool summary(std::span<const MetricValue> metrics) noexcept;
  // Ends the run with `exit_code`. True when everything was written; false when the log could not be
  // completed (the disk) or the run was finished already.
  bool finish(int exit_code = 0) noexcept;

  const std::string& id() const noexcept;
  const std::string& directory() const noexcept;  // the run directory
  uint64_t dropped() const noexcept;              // lines, values and rows not recorded so far

 private:
  explicit Run(std::unique_ptr<detail::RunState> state);
  std::unique_ptr<detail::RunState> state_;
};

}  // namespace runmon
