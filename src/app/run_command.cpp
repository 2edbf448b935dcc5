// `runmon run` (see run_command.hpp). Order of events: flags and the command are checked, then the run
// directory and the log are created (nothing is started when the run cannot be recorded), then the command
// starts, then header, run and environment records are queued and the sampler runs until the command
// exits. The command's exit is seen with waitid(WNOWAIT), so the final sample is taken while its process
// still exists (its CPU time counts), and it is reaped afterwards. Signals: SIGINT, SIGTERM and SIGHUP that
// another process sends runmon are forwarded to the command; those the terminal generates are not, because
// the terminal sends them to the command too (same process group). Without a command they end the run.
// With --metrics-listen, the /metrics server is bound before the run directory is created (a port in use
// records and starts nothing) and its threads start after the stop signals are blocked; each sample goes
// to the run log and then to the exposition cache the server reads. With --remote-write, each sample is
// queued for the receivers after the log; their queues are drained, for a bounded time, once the run log
// is closed. The command's stdout and stderr (unless --console off) go through a console capture (a
// pseudo-terminal where runmon's own stream is a terminal, else a pipe) that passes them on unchanged and
// records them as OutputRawRecords and files/output.log; what is left of them is recorded after the
// command exited and before the exit record (W&B's readers stop at the exit record). The command's own
// metrics come through a socket whose path it gets as RUNMON_RUN_SOCKET (run_metrics_channel.hpp): history
// rows as they close, the last ones and the summary after the console's last output.
#include "app/run_command.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/http_server_module.hpp"
#include "app/remote_write_session.hpp"
#include "app/run_identity.hpp"
#include "app/run_metrics_channel.hpp"
#include "collectors/builtin.hpp"
#include "console/console_capture.hpp"
#include "core/wall_clock.hpp"
#include "export/exposition.hpp"
#include "host/child_process.hpp"
#include "run_api/run_metadata.hpp"
#include "runlog/records.hpp"
#include "runlog/run_directory.hpp"
#include "runlog/run_recorder.hpp"
#include "sampler/sampler.hpp"

namespace runmon {
namespace {

// What a stop signal does, shared with the signal thread: forward to the command, or stop the sampler.
struct SignalRouting {
  std::mutex mutex;
  pid_t child = 0;             // while the command runs
  Sampler* sampler = nullptr;  // while the sampler exists
  int stop_signal = 0;         // the first stop signal that came while no command ran

  void Handle(const siginfo_t& info) {
    std::lock_guard lock(mutex);
    if (child > 0) {
      if (info.si_code != SI_KERNEL) ::kill(child, info.si_signo);
      return;
    }
    if (stop_signal == 0) stop_signal = info.si_signo;
    if (sampler != nullptr) sampler->Stop();
  }
};

// Makes the sampler reachable from the signal thread for exactly its lifetime.
class SamplerRegistration {
 public:
  SamplerRegistration(SignalRouting& routing, Sampler& sampler) : routing_(routing) {
    std::lock_guard lock(routing_.mutex);
    routing_.sampler = &sampler;
    if (routing_.stop_signal != 0) sampler.Stop();
  }
  ~SamplerRegistration() {
    std::lock_guard lock(routing_.mutex);
    routing_.sampler = nullptr;
  }
  SamplerRegistration(const SamplerRegistration&) = delete;
  SamplerRegistration& operator=(const SamplerRegistration&) = delete;

 private:
  SignalRouting& routing_;
};

// Joins a watcher thread on every way out of a scope; `done` tells a polling watcher to give up.
class WatcherJoin {
 public:
  WatcherJoin(std::thread& thread, std::atomic<bool>& done) : thread_(thread), done_(done) {}
  ~WatcherJoin() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  WatcherJoin(const WatcherJoin&) = delete;
  WatcherJoin& operator=(const WatcherJoin&) = delete;

 private:
  std::thread& thread_;
  std::atomic<bool>& done_;
};

// Waits until an attached process (not runmon's child) has exited, or `done` is set.
void WaitForExit(pid_t pid, const std::atomic<bool>& done) {
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  while (!done) {
    if (pidfd >= 0) {
      pollfd watched{static_cast<int>(pidfd), POLLIN, 0};
      if (::poll(&watched, 1, 200) > 0) break;
    } else {
      if (::kill(pid, 0) != 0 && errno == ESRCH) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  if (pidfd >= 0) ::close(static_cast<int>(pidfd));
}

// The console capture for the command: a pseudo-terminal for each of runmon's streams that is a terminal.
// When it cannot be opened (no pseudo-terminals in a container, no descriptors left) the command runs with
// runmon's own streams, unrecorded.
std::unique_ptr<console::ConsoleCapture> OpenConsoleCapture() {
  console::ConsoleCaptureOptions capture_options;
  capture_options.terminal = {::isatty(STDOUT_FILENO) == 1, ::isatty(STDERR_FILENO) == 1};
  auto opened = console::ConsoleCapture::Open(capture_options);
  if (!opened) {
    Warn(fmt::format("the command's output is not recorded: {}", opened.error()));
    return nullptr;
  }
  return std::move(*opened);
}

// Output waits for the run log's writer up to this much; past it (a disk far behind) it is dropped and
// counted, and the samples keep the rest of the queue.
constexpr size_t kConsoleQueueBytes = 32u << 20;

void StartConsoleCapture(console::ConsoleCapture& capture, pid_t child, runlog::RunRecorder& recorder,
                         const std::filesystem::path& files_directory) {
  auto output_log = console::OutputLogFile::Create(files_directory / "output.log");
  if (!output_log) Warn(output_log.error());
  auto sink = [&recorder](console::ConsoleStream stream, std::string_view text, double timestamp) {
    auto record = runlog::MakeOutputRawRecord(stream == console::ConsoleStream::kStderr, text, timestamp);
    return recorder.AddUnlessBehind(record, kConsoleQueueBytes);
  };
  auto started = capture.Start(child, sink, output_log ? std::move(*output_log) : nullptr, Warn);
  if (!started) Warn(fmt::format("the command's output is not recorded: {}", started.error()));
}

// Descendants that keep the command's output open get this long once the command exited.
constexpr auto kConsoleGrace = std::chrono::seconds(2);

void FinishConsoleCapture(console::ConsoleCapture& capture) {
  capture.Finish(kConsoleGrace);
  const console::CaptureCounts counts = capture.counts();
  for (size_t i = 0; i < 2; ++i) {
    if (counts.bytes_dropped[i] == 0) continue;
    Warn(
        fmt::format("{} of {} bytes the command wrote to {} were not recorded (the output came faster than "
                    "it could be recorded; all of it was passed on)",
                    counts.bytes_dropped[i], counts.bytes_read[i], i == 0 ? "stdout" : "stderr"));
  }
}

std::string DefaultDisplayName(const std::vector<std::string>& command) {
  if (command.empty()) return "host";
  std::string name;
  for (const auto& part : command) {
    if (!name.empty()) name += ' ';
    name += part;
    if (name.size() > 120) break;
  }
  return runlog::ToValidUtf8(name.substr(0, 128));
}

// Writes the run's metadata, then samples until the command (or the attached process) exits or a stop
// signal comes. Returns the number of samples recorded. Throws when a thread cannot be started.
uint64_t Monitor(const RunCommandOptions& options, const Settings& settings, const HostPaths& paths,
                 const std::string& executable, double start_time, const std::string& id, pid_t child,
                 pid_t attached, const RunIdentity& identity, SignalRouting& routing,
                 runlog::RunRecorder& recorder, const std::filesystem::path& files_directory,
                 ExpositionCache* metrics, RemoteWriteSession* remote_write) {
  Settings effective = settings;
  if (child > 0) {
    effective.pid = child;
  } else if (attached == 0) {
    effective.pid = 0;  // the host alone: no process metrics
  }
  CollectorContext ctx = MakeContext(effective, paths);
  if (remote_write != nullptr) ctx.remote_write_counts = [remote_write] { return remote_write->Counts(); };

  nlohmann::json metadata = ProbeHostMetadata(ctx, identity.environment);
  AddJobIdentity(metadata, identity.job);
  AddProgramFields(metadata, start_time, options.command, executable);
  auto run_metadata = RunMetadata::Record(std::move(metadata), fmt::format("runmon-{}", id), recorder,
                                          files_directory / "wandb-metadata.json", Warn);
  run_metadata->Connect(ctx);
  struct CloseMetadata {
    std::shared_ptr<RunMetadata> metadata;
    ~CloseMetadata() { metadata->Close(); }
  } close_metadata{run_metadata};

  uint64_t samples = 0;
  SamplerOptions sampler_options;
  sampler_options.interval_seconds = settings.interval_seconds;
  Sampler sampler(
      BuiltinCollectors(ctx), sampler_options,
      [&](const Sample& sample) {
        if (metrics != nullptr) metrics->Publish(sample);
        // Labelled after the exporter had the sample.
        runlog::EncodedStatsItems encoded;
        std::string stats = runlog::EncodeStatsRecord(sample, settings.label, &encoded);
        if (stats.empty()) return;
        recorder.AddEncodedStats(std::move(stats), std::move(encoded));
        if (remote_write != nullptr) remote_write->Enqueue(sample);
        ++samples;
      },
      Warn);
  SamplerRegistration registration(routing, sampler);

  std::atomic<bool> watch_done{false};
  std::thread watcher;
  WatcherJoin join(watcher, watch_done);
  if (child > 0) {
    // Seen with WNOWAIT: the command stays a zombie, so the final sample still reads its last times.
    watcher = std::thread([&sampler, child] {
      siginfo_t info{};
      while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
      }
      sampler.Stop();
    });
  } else if (attached > 0) {
    watcher = std::thread([&sampler, &watch_done, attached] {
      WaitForExit(attached, watch_done);
      sampler.Stop();
    });
  }
  sampler.Run();
  return samples;
}

}  // namespace

int RunRunCommand(const RunCommandOptions& options, unsigned long original_open_files_limit) {
  auto settings = options.sampler.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  const bool has_command = !options.command.empty();
  const bool attaching = options.sampler.pid.has_value();
  if (has_command && attaching) {
    Warn("--pid attaches to a running process; it cannot be combined with a command");
    return 2;
  }
  if (options.host_only && (has_command || attaching)) {
    Warn("--host-only records the host alone; it cannot be combined with a command or --pid");
    return 2;
  }
  if (!has_command && !attaching && !options.host_only) {
    Warn("run: what to record? a command (runmon run -- CMD ARGS...), --pid PID, or --host-only");
    return 2;
  }
  if (attaching && *options.sampler.pid == 0) {
    Warn("--pid 0: run attaches to a process (--host-only records the host alone)");
    return 2;
  }
  const std::string id = options.id.value_or(runlog::GenerateRunId());
  if (auto status = runlog::ValidateRunId(id); !status) {
    Warn(fmt::format("--id: {}", status.error()));
    return 2;
  }
  auto job_flags = CheckJobIdentityFlags(options.job_id, options.node_rank);
  if (!job_flags) {
    Warn(job_flags.error());
    return 2;
  }
  if (options.label) {
    if (auto status = ValidateLabel(*options.label); !status) {
      Warn(fmt::format("--label: {}", status.error()));
      return 2;
    }
    settings->label = *options.label;
  }
  if (!runlog::IsValidUtf8(options.name) || !runlog::IsValidUtf8(options.project)) {
    Warn("--name and --project must be valid UTF-8");
    return 2;
  }
  if (std::error_code error;
      std::filesystem::exists(options.dir, error) && !std::filesystem::is_directory(options.dir, error)) {
    Warn(fmt::format("--dir {}: not a directory", options.dir));
    return 2;
  }
  std::optional<MetricsServerOptions> metrics_options;
  if (!options.metrics_listen.empty()) {
    auto listen = ParseListenAddress(options.metrics_listen);
    if (!listen) {
      Warn(fmt::format("--metrics-listen {}", listen.error()));
      return 2;
    }
    metrics_options = MetricsServerOptions{*listen, options.metrics_token};
    if (auto status = CheckMetricsServerOptions(*metrics_options, "--metrics-listen", "--metrics-token");
        !status) {
      Warn(status.error());
      return 2;
    }
  } else if (!options.metrics_token.empty()) {
    Warn("--metrics-token goes with --metrics-listen");
    return 2;
  }
  auto remote_write_setup = ResolveRemoteWrite(options.remote_write);
  if (!remote_write_setup) {
    Warn(remote_write_setup.error());
    return 2;
  }
  const HostPaths paths = options.sampler.Paths();
  const pid_t attached = attaching ? static_cast<pid_t>(*options.sampler.pid) : 0;  // 1 to pid_t's maximum
  if (attached > 0 && !std::filesystem::exists(paths.proc / std::to_string(attached))) {
    Warn(fmt::format("--pid {}: no such process", attached));
    return 1;
  }
  std::string executable;
  if (has_command) {
    const char* search_path = std::getenv("PATH");
    auto found =
        FindExecutable(options.command.front(), search_path != nullptr ? search_path : "/usr/bin:/bin");
    if (auto* error = std::get_if<CommandLookupError>(&found)) {
      Warn(error->message);
      return error->exit_status;
    }
    executable = std::get<std::string>(found);
  }
  const RunIdentity identity = DetectRunIdentity(
      paths, attaching ? std::optional<long>(attached) : std::nullopt, options.command, *job_flags);

  // What the command must get back: runmon ignores SIGPIPE and SIGXFSZ (a closed pipe or a full disk must
  // not end it), takes SIGCHLD's default (an inherited SIG_IGN would reap the command before its status is
  // read) and blocks the stop signals.
  InheritedProcessState inherited = CaptureProcessState({SIGPIPE, SIGXFSZ, SIGCHLD});
  inherited.open_files_soft_limit = original_open_files_limit;
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  ::signal(SIGCHLD, SIG_DFL);
  // The console capture takes window changes from a signalfd: blocked in every thread (the command gets
  // the mask runmon inherited).
  sigset_t window_change;
  sigemptyset(&window_change);
  sigaddset(&window_change, SIGWINCH);
  ::pthread_sigmask(SIG_BLOCK, &window_change, nullptr);
  SignalRouting routing;
  // Before any thread starts, so every thread has the stop signals blocked.
  StopSignals signals([&](const siginfo_t& info) { routing.Handle(info); });

  // The exposition of the run's samples, served while it is recorded. The cache outlives the server.
  std::unique_ptr<ExpositionCache> metrics_cache;
  std::unique_ptr<MetricsEndpoint> metrics_server;
  if (metrics_options) {
    metrics_cache = std::make_unique<ExpositionCache>(RunLabels(HostName(), id, identity.job));
    auto bound = BindMetricsServer(*metrics_cache, *metrics_options);
    const Status started = bound ? (*bound)->Start() : Status(Error{bound.error()});
    if (bound) metrics_server = std::move(*bound);
    if (!started) {
      Warn(fmt::format("--metrics-listen: {}", started.error()));
      return 1;
    }
    Warn(fmt::format("serving the run's metrics at http://{}/metrics",
                     FormatListenAddress({metrics_options->listen.host, metrics_server->port()})));
  }

  const double start_time = WallSeconds();
  const auto start_steady = std::chrono::steady_clock::now();
  auto run_paths = runlog::CreateRunDirectory(options.dir, start_time, id);
  if (!run_paths) {
    Warn(fmt::format("cannot record the run: {}", run_paths.error()));
    return 1;
  }
  auto writer = runlog::LogWriter::Create(run_paths->log);
  if (!writer) {
    Warn(fmt::format("cannot record the run: {}", writer.error()));
    return 1;
  }
  if (auto status = runlog::UpdateLatestRunLink(options.dir, run_paths->directory); !status) {
    Warn(status.error());
  }
  std::unique_ptr<RemoteWriteSession> remote_write;
  if (!remote_write_setup->destinations.empty()) {
    auto started = RemoteWriteSession::Start(*remote_write_setup, run_paths->directory, options.dir,
                                             {.host = runlog::ToValidUtf8(HostName()),
                                              .run_id = id,
                                              .job_id = identity.job.job_id,
                                              .node_rank = identity.job.node_rank});
    if (!started) {
      Warn(fmt::format("cannot record the run: {}", started.error()));
      return 1;
    }
    remote_write = std::move(*started);
  }
  runlog::RunRecorder recorder(std::move(*writer), id, {}, Warn);
  Warn(fmt::format("recording run {} in {}", id, run_paths->directory.string()));

  auto header = runlog::MakeHeaderRecord(fmt::format("runmon {}", RUNMON_VERSION));
  recorder.Add(header);
  runlog::RunInfo run_info{
      .run_id = id,
      .project = options.project,
      .display_name = options.name.empty() ? DefaultDisplayName(options.command) : options.name,
      .host = runlog::ToValidUtf8(HostName()),
      .start_time = start_time,
      .tags = {}};
  auto run_record = runlog::MakeRunRecord(run_info);
  recorder.Add(run_record);

  std::unique_ptr<console::ConsoleCapture> capture;
  if (has_command && options.console != "off") capture = OpenConsoleCapture();
  std::unique_ptr<RunMetricsChannel> metrics_channel;
  if (has_command) metrics_channel = RunMetricsChannel::Open(*run_paths, id);

  int exit_status = 0;
  pid_t child = 0;
  if (has_command) {
    // Under the routing lock: a stop signal either comes before (and the command never starts) or finds
    // the command to forward to.
    std::lock_guard lock(routing.mutex);
    if (routing.stop_signal != 0) {
      Warn(fmt::format("stopped by signal {} before {} started", routing.stop_signal,
                       options.command.front()));
      exit_status = 128 + routing.stop_signal;
    } else {
      ChildStreams streams;
      if (capture) {
        streams.out = capture->command_fd(console::ConsoleStream::kStdout);
        streams.err = capture->command_fd(console::ConsoleStream::kStderr);
      }
      if (metrics_channel) streams.environment.push_back(metrics_channel->EnvironmentEntry());
      auto spawned = SpawnChild(executable, options.command, inherited, streams);
      if (auto* error = std::get_if<CommandLookupError>(&spawned)) {
        Warn(error->message);
        exit_status = error->exit_status;
        capture.reset();
        metrics_channel.reset();
      } else {
        child = std::get<pid_t>(spawned);
        routing.child = child;
        if (capture) StartConsoleCapture(*capture, child, recorder, run_paths->files);
        if (metrics_channel) metrics_channel->Start(recorder, start_time);
      }
    }
  }

  uint64_t samples = 0;
  if (!has_command || child > 0) {
    try {
      samples = Monitor(options, *settings, paths, executable, start_time, id, child, attached, identity,
                        routing, recorder, run_paths->files, metrics_cache.get(), remote_write.get());
    } catch (const std::exception& e) {
      // Threads could not be started (a pids limit, no memory): the command goes on unmonitored; its exit
      // is still waited for and recorded.
      Warn(fmt::format("monitoring stopped: {}", e.what()));
    }
  }
  {
    std::lock_guard lock(routing.mutex);
    routing.child = 0;
  }
  if (child > 0) {
    int wait_status = 0;
    pid_t waited;
    while ((waited = ::waitpid(child, &wait_status, 0)) < 0 && errno == EINTR) {
    }
    if (waited == child) {
      exit_status = ShellExitStatus(wait_status);
    } else {
      Warn(fmt::format("cannot read the exit status of {}: {}", options.command.front(),
                       std::strerror(errno)));
      exit_status = 1;
    }
  }

  if (capture) FinishConsoleCapture(*capture);
  if (metrics_channel) metrics_channel->Finish(run_paths->files);

  const double runtime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_steady).count();
  auto exit_record = runlog::MakeExitRecord(exit_status, runtime);
  recorder.Add(exit_record);
  auto final_record = runlog::MakeFinalRecord();
  recorder.Add(final_record);
  if (metrics_server) metrics_server->Stop();
  const Status closed = recorder.Close();
  const auto counts = recorder.counts();
  if (!closed) Warn(closed.error());
  std::string dropped;
  if (counts.records_dropped > 0) dropped = fmt::format(", {} samples dropped", counts.records_dropped);
  Warn(fmt::format("run {}: {} samples, {} records ({} bytes){} in {}", id, samples, counts.records_written,
                   counts.bytes, dropped, run_paths->log.string()));
  if (remote_write) remote_write->Finish();
  return exit_status;
}

}  // namespace runmon
