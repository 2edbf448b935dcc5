// Shared command-line pieces (see cli_common.hpp).
#include "app/cli_common.hpp"

#include <pthread.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "app/usage.hpp"
#include "collectors/builtin.hpp"
#include "collectors/gpu/gpu_device_ids.hpp"
#include "core/message_line.hpp"
#include "host/process_environment.hpp"

namespace runmon {

void Warn(const std::string& message) {
  fmt::print(stderr, "runmon: {}\n", EscapeControlCharacters(message));
}

CLI::Option* AddRepeatableOption(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                                 const std::string& help) {
  return app.add_option(name, values, help)->allow_extra_args(false);
}

void SamplerFlags::AddTo(CLI::App& app, std::string_view pid_help) {
  app.add_option("--interval", interval,
                 "Sampling interval: seconds (0.5) or with a unit (500ms, 15s, 2m); "
                 "at least 0.1 s; default 15s")
      ->type_name("DURATION");
  app.add_option("--pid", pid, std::string(pid_help))
      ->type_name("PID")
      ->check(IntegerIn(0, std::numeric_limits<pid_t>::max()));
  app.add_flag("--no-process-tree", no_process_tree, "Monitor only the process itself, not its descendants");
  app.add_flag("--per-core", per_core, "Also report each logical CPU (cpu.{i}.cpu_percent)");
  app.add_flag("--no-cgroup", no_cgroup, "Ignore cgroup limits (host totals as denominators)");
  AddRepeatableOption(app, "--disk-path", disk_paths,
                      "Filesystem path to report usage and I/O for (repeatable; default /)")
      ->type_name("PATH");
  AddRepeatableOption(app, "--set", assignments,
                      "W&B setting, e.g. --set x_stats_sampling_interval=1 (repeatable)")
      ->type_name("x_stats_NAME=VALUE");
  app.add_option("--root", root,
                 "Read proc, sys and etc under this directory instead of the host's (tests, "
                 "containers with the host's trees mounted)")
      ->type_name("DIR")
      ->group(kUnlistedOptions);
}

Result<Settings> SamplerFlags::Resolve() const {
  if (!root.empty() && !std::filesystem::is_directory(root)) {
    return Error{fmt::format("--root {}: not a directory", root)};
  }
  Settings settings;
  if (auto status = ApplyEnvironment(settings, ProcessEnvironmentStrings()); !status)
    return Error{status.error()};
  for (const auto& assignment : assignments) {
    if (auto status = ApplySetAssignment(settings, assignment); !status) return Error{status.error()};
  }
  if (!interval.empty()) {
    auto seconds = ParseDurationSeconds(interval);
    if (!seconds) return Error{fmt::format("--interval: {}", seconds.error())};
    if (*seconds < kMinIntervalSeconds)
      return Error{fmt::format("--interval: at least {} s", kMinIntervalSeconds)};
    settings.interval_seconds = *seconds;
  }
  if (pid) settings.pid = *pid;
  if (no_process_tree) settings.track_process_tree = false;
  if (per_core) settings.per_core_cpu = true;
  if (no_cgroup) settings.no_cgroup = true;
  if (!disk_paths.empty()) {
    auto normalised = NormalizeDiskPaths(disk_paths);
    if (!normalised) return Error{fmt::format("--disk-path: {}", normalised.error())};
    settings.disk_paths = std::move(*normalised);
  }
  if (auto it = settings.other.find("x_stats_gpu_device_ids"); it != settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second); !ids) return Error{ids.error()};
  }
  return settings;
}

CollectorContext MakeContext(const Settings& settings, const HostPaths& paths) {
  return MakeCollectorContext(settings, paths, settings.pid.value_or(static_cast<long>(::getppid())),
                              ProcessEnvironmentStrings(), Warn);
}

StopSignals::StopSignals(std::function<void(const siginfo_t&)> on_signal) {
  sigemptyset(&set_);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal runmon was started with ignored (SIGHUP under nohup) stays ignored: blocked, it would
    // still be delivered to sigwaitinfo.
    struct sigaction current {};
    if (::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&set_, s);
  }
  sigaddset(&set_, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
    for (;;) {
      siginfo_t info{};
      if (sigwaitinfo(&set_, &info) < 0) continue;
      if (info.si_signo == SIGUSR1 && done_) return;
      if (info.si_signo != SIGUSR1) on_signal(info);
    }
  });
}

StopSignals::~StopSignals() {
  done_ = true;
  pthread_kill(waiter_.native_handle(), SIGUSR1);
  waiter_.join();
}

}  // namespace runmon
