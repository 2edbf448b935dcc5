// Parses the command line with CLI11 and runs the chosen command. Settings are layered: defaults, then
// W&B's environment variables (WANDB_X_STATS_*), then --set x_stats_NAME=VALUE, then runmon's own flags.
// Signals: SIGINT, SIGTERM and SIGHUP are blocked in every thread and taken by one waiter thread, which
// stops the sampler so that the final sample is still taken and written.
#include "app/commands.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/output.hpp"
#include "collectors/builtin.hpp"
#include "config/settings.hpp"
#include "core/catalog.hpp"
#include "host/file_reader.hpp"
#include "sampler/sampler.hpp"

extern char** environ;

namespace runmon {
namespace {

std::vector<std::string> EnvironmentStrings() {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) out.emplace_back(*entry);
  return out;
}

void Warn(const std::string& message) {
  fmt::print(stderr, "runmon: {}\n", message);
}

// Options shared by the commands that sample.
struct SamplerFlags {
  std::string interval;
  std::optional<long> pid;
  bool no_process_tree = false;
  bool per_core = false;
  bool no_cgroup = false;
  std::vector<std::string> disk_paths;
  std::vector<std::string> assignments;
  std::string root;

  void AddTo(CLI::App& app) {
    app.add_option("--interval", interval,
                   "Sampling interval: seconds (0.5) or with a unit (500ms, 15s, 2m); "
                   "at least 0.1 s; default 15s")
        ->type_name("DURATION");
    app.add_option("--pid", pid,
                   "Process to monitor with its descendants (default: runmon's parent; 0 turns "
                   "process metrics off)");
    app.add_flag("--no-process-tree", no_process_tree,
                 "Monitor only the process itself, not its descendants");
    app.add_flag("--per-core", per_core, "Also report each logical CPU (cpu.{i}.cpu_percent)");
    app.add_flag("--no-cgroup", no_cgroup, "Ignore cgroup limits (host totals as denominators)");
    app.add_option("--disk-path", disk_paths,
                   "Filesystem path to report usage and I/O for (repeatable; default /)")
        ->type_name("PATH");
    app.add_option("--set", assignments, "W&B setting, e.g. --set x_stats_sampling_interval=1 (repeatable)")
        ->type_name("x_stats_NAME=VALUE");
    app.add_option("--root", root,
                   "Read proc, sys and etc under this directory instead of the host's (tests, "
                   "containers with the host's trees mounted)")
        ->group("");
  }

  // Layers environment, --set and flags over the defaults.
  Result<Settings> Resolve() const {
    Settings settings;
    if (auto status = ApplyEnvironment(settings, EnvironmentStrings()); !status) return Error{status.error()};
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
    if (!disk_paths.empty()) settings.disk_paths = disk_paths;
    for (const auto& path : settings.disk_paths) {
      if (path.empty()) return Error{"--disk-path: empty path"};
    }
    return settings;
  }

  HostPaths Paths() const { return root.empty() ? HostPaths::System() : HostPaths::Under(root); }
};

LinuxCollectorContext MakeContext(const Settings& settings, const HostPaths& paths) {
  LinuxCollectorContext ctx;
  ctx.paths = paths;
  ctx.settings = settings;
  ctx.clocks = Clocks::System();
  const long pid = settings.pid.value_or(static_cast<long>(::getppid()));
  if (pid > 0) ctx.pid = pid;
  ctx.facts = DetectHostFacts(paths, settings, ctx.pid);
  return ctx;
}

// Blocks the stop signals in the calling thread (and so in every thread started after) and waits for
// them in a thread of its own.
class StopSignals {
 public:
  explicit StopSignals(std::function<void()> on_signal) {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
      for (;;) {
        int signal_number = 0;
        if (sigwait(&set_, &signal_number) != 0) continue;
        if (signal_number == SIGUSR1 && done_) return;
        if (signal_number != SIGUSR1) on_signal();
      }
    });
  }
  ~StopSignals() {
    done_ = true;
    pthread_kill(waiter_.native_handle(), SIGUSR1);
    waiter_.join();
  }

 private:
  sigset_t set_{};
  std::thread waiter_;
  std::atomic<bool> done_{false};
};

int RunSample(const SamplerFlags& flags, bool once, std::optional<long long> count, bool json) {
  auto settings = flags.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  const HostPaths paths = flags.Paths();
  if (!flags.root.empty() && !std::filesystem::is_directory(flags.root)) {
    Warn(fmt::format("--root {}: not a directory", flags.root));
    return 2;
  }
  LinuxCollectorContext ctx = MakeContext(*settings, paths);
  if (ctx.pid && !std::filesystem::exists(paths.proc / std::to_string(*ctx.pid))) {
    Warn(fmt::format("process {} does not exist; process metrics are off, host metrics continue", *ctx.pid));
  }

  SamplerOptions options;
  options.interval_seconds = settings->interval_seconds;
  if (once) count = 1;
  if (count) {
    if (*count < 1) {
      Warn("--count must be at least 1");
      return 2;
    }
    options.max_samples = static_cast<uint64_t>(*count);
  }
  ::signal(SIGPIPE, SIG_IGN);
  std::atomic<bool> output_failed{false};
  std::atomic<int> output_errno{0};  // the sink runs on the sampler's thread; errno is per thread
  uint64_t number = 0;
  std::atomic<Sampler*> running{nullptr};
  Sampler sampler(
      BuiltinCollectors(ctx), options,
      [&](const Sample& sample) {
        if (output_failed) return;
        const std::string text = json ? FormatSampleJson(sample) : FormatSampleTable(sample, ++number);
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
          output_errno = errno;
          output_failed = true;
          running.load()->Stop();
        }
      },
      Warn);
  running = &sampler;
  // After the sampler, so it is destroyed (its waiter joined) before the sampler is; before Run(), so
  // the sampler's threads start with the stop signals blocked.
  StopSignals signals([&] { sampler.Stop(); });
  sampler.Run();
  if (output_failed && output_errno != EPIPE) {
    Warn(fmt::format("writing samples failed: {}", std::strerror(output_errno)));
    return 1;
  }
  return 0;
}

int RunInfo(const SamplerFlags& flags) {
  auto settings = flags.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  const LinuxCollectorContext ctx = MakeContext(*settings, flags.Paths());
  fmt::print("{}\n", ProbeHostMetadata(ctx, EnvironmentStrings()).dump(2));
  return 0;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  // A process tree of thousands keeps thousands of files open (within a budget, see file_reader.hpp).
  RaiseOpenFileLimit();
  CLI::App app{"runmon: system metrics for machine-learning runs, with W&B's metric names."};
  app.set_version_flag("--version", std::string("runmon ") + RUNMON_VERSION);
  app.require_subcommand(1);

  SamplerFlags sample_flags;
  bool once = false, json = false;
  std::optional<long long> count;
  auto* sample = app.add_subcommand("sample", "Sample the host and a process tree; print each sample");
  sample_flags.AddTo(*sample);
  sample->add_flag("--once", once, "Take one sample and exit");
  sample->add_option("--count", count, "Take N samples and exit")->type_name("N");
  sample->add_flag("--json", json, "One JSON object per sample (_timestamp, _runtime and every key)");

  SamplerFlags info_flags;
  auto* info = app.add_subcommand("info", "Print the machine's static metadata (wandb-metadata.json layout)");
  info_flags.AddTo(*info);

  bool markdown = false;
  auto* catalog = app.add_subcommand("catalog", "List every metric key with its unit and meaning");
  catalog->add_flag("--markdown", markdown, "As the Markdown table of docs/metrics.md");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (sample->parsed()) return RunSample(sample_flags, once, count, json);
  if (info->parsed()) return RunInfo(info_flags);
  if (catalog->parsed()) {
    if (markdown) {
      fmt::print("{}", RenderCatalogMarkdown());
    } else {
      for (const auto& d : MetricCatalog()) fmt::print("{:<28} {:<8} {}\n", d.pattern, d.unit, d.title);
    }
    return 0;
  }
  return 2;
}

}  // namespace runmon
