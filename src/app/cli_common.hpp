// What runmon's commands share: the sampler flags (--interval, --pid, --disk-path, --set, ...) and how
// they layer over W&B's environment variables; the collector context they build; warnings on stderr; and
// the stop signals, taken by one waiter thread so the final sample is still taken and written.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "collectors/linux/linux_collectors.hpp"
#include "config/settings.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

void Warn(const std::string& message);

// A flag that may be given many times, one value each time. CLI11's default for a list would let one
// occurrence take every following word: the "--" and the command's own flags after it.
CLI::Option* AddRepeatableOption(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                                 const std::string& help);

struct SamplerFlags {
  std::string interval;
  std::optional<long> pid;
  bool no_process_tree = false;
  bool per_core = false;
  bool no_cgroup = false;
  std::vector<std::string> disk_paths;
  std::vector<std::string> assignments;
  std::string root;

  void AddTo(CLI::App& app, std::string_view pid_help);
  // Layers environment, --set and flags over the defaults; checks --root.
  Result<Settings> Resolve() const;
  HostPaths Paths() const { return root.empty() ? HostPaths::System() : HostPaths::Under(root); }
};

// `pid` overrides settings.pid (unset: runmon's parent; 0: no process metrics).
CollectorContext MakeContext(const Settings& settings, const HostPaths& paths);

// Blocks SIGINT, SIGTERM and SIGHUP (those not ignored when runmon started) in the calling thread, and so in
// every thread started after, and hands each one to `on_signal` on a thread of its own, with its siginfo
// (si_code tells a signal a process sent from one the terminal generated).
class StopSignals {
 public:
  explicit StopSignals(std::function<void(const siginfo_t&)> on_signal);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  sigset_t set_{};
  std::thread waiter_;
  std::atomic<bool> done_{false};
};

}  // namespace runmon
