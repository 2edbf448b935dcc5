// runmon::Run, runmon inside the program (include/runmon/run.hpp): the run directory and log `runmon run`
// makes, the sampler on a thread of its own (the process and its children monitored, runmon's own cost
// left out: it cannot be told apart from the program's), the program's own metrics assembled into history
// rows as `runmon run`'s channel assembles them, and a rows thread that hands the closed rows to the log in
// batches and closes a row left open (a step logged, then an hour of work) after the channel's idle time. The
// library's threads block every signal, so the program's handlers run where the program expects them. A
// process forked from the one that started the run has none of its threads: there every call does nothing and
// the destructor leaves the state alone.
#include <runmon/run.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "core/message_line.hpp"
#include "core/utf8.hpp"
#include "core/wall_clock.hpp"
#include "host/file_reader.hpp"
#include "host/process_environment.hpp"
#include "run_api/run_metadata.hpp"
#include "runlog/records.hpp"
#include "runlog/run_directory.hpp"
#include "runlog/run_recorder.hpp"
#include "sampler/sampler.hpp"
#include "user_metrics/history_log.hpp"
#include "user_metrics/history_rows.hpp"
#include "user_metrics/metric_line.hpp"

namespace runmon {
namespace {

constexpr double kIdleRowSeconds = 2.0;
constexpr auto kIdleCheck = std::chrono::milliseconds(500);
// Closed rows wait for the rows thread, which gathers them this long after the first (or until this many
// wait) and hands them to the log's writer as one batch: one wake of each thread per batch, where a wake
// per row would cost more than the row (a training loop may log 100,000 a second).
constexpr auto kGatherPause = std::chrono::milliseconds(10);
constexpr size_t kRowsPerBatch = 4096;
constexpr size_t kMaxKeyBytes = 1024;

void WarnOnStderr(const std::string& message) {
  fmt::print(stderr, "runmon: {}\n", EscapeControlCharacters(message));
}

std::invalid_argument BadOption(const std::string& message) {
  return std::invalid_argument("runmon: " + message);
}

// This program's command line, as `runmon run` records its command's (the in-process run's "program").
std::vector<std::string> OwnCommandLine(const HostPaths& paths) {
  std::vector<std::string> command;
  auto text = ReadFileToString(paths.Proc("self/cmdline"));
  if (!text) return command;
  size_t begin = 0;
  while (begin < text->size()) {
    const size_t end = text->find('\0', begin);
    command.push_back(text->substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return command;
}

// A value as W&B's history holds it: JSON, with Python's words for what JSON has none of.
std::string ValueJson(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return runlog::FormatValueJson(value);
}

bool UsableKey(std::string_view key) {
  return !key.empty() && key.size() <= kMaxKeyBytes && key != "_step" && key != "_runtime" &&
         key != "_timestamp";
}

// The caller's values as a line's items; `unusable` counts those whose keys cannot be recorded.
user_metrics::MetricLine LineOf(std::span<const MetricValue> metrics, size_t& unusable) {
  user_metrics::MetricLine line;
  line.items.reserve(metrics.size());
  for (const auto& [key, value] : metrics) {
    if (!UsableKey(key)) {
      ++unusable;
      continue;
    }
    line.items.push_back({runlog::ToValidUtf8(key), ValueJson(value)});
  }
  return line;
}

// Blocks every signal in the calling thread for its lifetime (the threads started meanwhile inherit it).
class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &previous_);
  }
  ~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace

namespace detail {

struct RunState {
  const pid_t owner = ::getpid();
  std::string id;
  std::string directory;
  double start_time = 0;
  std::chrono::steady_clock::time_point start_steady;
  std::filesystem::path files_directory;
  std::unique_ptr<runlog::RunRecorder> recorder;
  std::shared_ptr<RunMetadata> metadata;
  std::unique_ptr<user_metrics::HistoryLog> history;
  std::unique_ptr<Sampler> sampler;
  std::thread sampler_thread;
  std::thread rows_thread;
  std::atomic<uint64_t> dropped{0};

  std::mutex mutex;                      // what follows
  std::condition_variable rows_waiting;  // a first row closed, a batch is full, or the run finishes
  bool finished = false;
  user_metrics::HistoryAssembler assembler;
  std::vector<user_metrics::HistoryRow> closed;  // for the rows thread

  bool Usable() const { return ::getpid() == owner; }

  // Takes one line of metrics; false (counted) when it is refused.
  bool Take(user_metrics::MetricLine line, size_t values_dropped) noexcept;
  void WriteRows();
  bool Finish(int exit_code) noexcept;
};

bool RunState::Take(user_metrics::MetricLine line, size_t values_dropped) noexcept {
  dropped += values_dropped;
  if (!Usable()) {
    ++dropped;
    return false;
  }
  try {
    std::lock_guard lock(mutex);
    if (finished) {
      ++dropped;
      return false;
    }
    if (auto added = assembler.Add(std::move(line), WallSeconds(), closed); !added) {
      ++dropped;
      return false;
    }
    if (closed.size() == 1 || closed.size() >= kRowsPerBatch) rows_waiting.notify_one();
    return true;
  } catch (const std::exception&) {  // no memory: the line is lost, the program goes on
    ++dropped;
    return false;
  }
}

// The rows thread: batches of closed rows to the log (encoded outside the lock, so loggers never wait for
// it), and a row left open past the idle time closed.
void RunState::WriteRows() {
  std::vector<user_metrics::HistoryRow> batch;
  std::unique_lock lock(mutex);
  while (!finished) {
    if (closed.empty()) rows_waiting.wait_for(lock, kIdleCheck);
    if (!closed.empty() && !finished) {
      rows_waiting.wait_for(lock, kGatherPause, [&] { return finished || closed.size() >= kRowsPerBatch; });
    }
    if (finished) break;
    assembler.FlushIdle(WallSeconds(), kIdleRowSeconds, closed);
    if (closed.empty()) continue;
    batch.swap(closed);
    lock.unlock();
    history->Write(batch);
    lock.lock();
  }
}

bool RunState::Finish(int exit_code) noexcept {
  if (!Usable()) return false;
  {
    std::lock_guard lock(mutex);
    if (finished) return false;
    finished = true;
  }
  rows_waiting.notify_all();
  if (rows_thread.joinable()) rows_thread.join();
  sampler->Stop();  // the final sample
  if (sampler_thread.joinable()) sampler_thread.join();
  metadata->Close();
  bool complete = true;
  try {
    std::lock_guard lock(mutex);
    assembler.Finish(closed);
    history->Write(closed);
    if (auto written = history->WriteSummary(assembler.Summary(), files_directory); !written) {
      WarnOnStderr(written.error());
      complete = false;
    }
    const double runtime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_steady).count();
    auto exit_record = runlog::MakeExitRecord(exit_code, runtime);
    recorder->Add(exit_record);
    auto final_record = runlog::MakeFinalRecord();
    recorder->Add(final_record);
  } catch (const std::exception& e) {
    WarnOnStderr(fmt::format("run {}: the end of the run could not be recorded: {}", id, e.what()));
    complete = false;
  }
  if (auto closed_log = recorder->Close(); !closed_log) {
    WarnOnStderr(closed_log.error());
    complete = false;
  }
  return complete && recorder->counts().records_dropped == 0;
}

}  // namespace detail

Run Run::start(const RunOptions& options) {
  if (options.dir.empty()) throw BadOption("the run's dir is empty");
  if (std::error_code error;
      std::filesystem::exists(options.dir, error) && !std::filesystem::is_directory(options.dir, error)) {
    throw BadOption(fmt::format("{}: not a directory", options.dir));
  }
  if (!IsValidUtf8(options.name) || !IsValidUtf8(options.project)) {
    throw BadOption("the run's name and project must be valid UTF-8");
  }
  if (!options.id.empty()) {
    if (auto valid = runlog::ValidateRunId(options.id); !valid) {
      throw BadOption(fmt::format("run id: {}", valid.error()));
    }
  }
  const std::vector<std::string> environment = ProcessEnvironmentStrings();
  Settings settings;
  if (auto applied = ApplyEnvironment(settings, environment); !applied) throw BadOption(applied.error());
  if (options.interval) {
    if (!std::isfinite(*options.interval) || *options.interval < kMinIntervalSeconds) {
      throw BadOption(fmt::format("the sampling interval must be at least {} s", kMinIntervalSeconds));
    }
    settings.interval_seconds = *options.interval;
  }
  settings.pid = static_cast<long>(::getpid());

  auto state = std::make_unique<detail::RunState>();
  state->id = options.id.empty() ? runlog::GenerateRunId() : options.id;
  state->start_time = WallSeconds();
  state->start_steady = std::chrono::steady_clock::now();
  auto paths = runlog::CreateRunDirectory(options.dir, state->start_time, state->id);
  if (!paths) throw std::runtime_error(fmt::format("runmon: cannot record the run: {}", paths.error()));
  auto writer = runlog::LogWriter::Create(paths->log);
  if (!writer) throw std::runtime_error(fmt::format("runmon: cannot record the run: {}", writer.error()));
  if (auto linked = runlog::UpdateLatestRunLink(options.dir, paths->directory); !linked) {
    WarnOnStderr(linked.error());
  }
  state->directory = paths->directory.string();
  state->files_directory = paths->files;
  state->recorder = std::make_unique<runlog::RunRecorder>(std::move(*writer), state->id,
                                                          runlog::RecorderOptions{}, WarnOnStderr);
  state->history = std::make_unique<user_metrics::HistoryLog>(*state->recorder, state->start_time);

  const HostPaths host = HostPaths::System();
  const std::vector<std::string> command = OwnCommandLine(host);
  std::error_code no_executable;
  const std::string executable = std::filesystem::read_symlink(host.Proc("self/exe"), no_executable).string();
  auto header = runlog::MakeHeaderRecord(fmt::format("runmon {}", RUNMON_VERSION));
  state->recorder->Add(header);
  std::string display_name = options.name;
  if (display_name.empty()) {
    display_name = command.empty() ? "runmon" : std::filesystem::path(command.front()).filename().string();
  }
  auto run_record = runlog::MakeRunRecord({.run_id = state->id,
                                           .project = options.project,
                                           .display_name = runlog::ToValidUtf8(display_name),
                                           .host = runlog::ToValidUtf8(HostName()),
                                           .start_time = state->start_time,
                                           .tags = {}});
  state->recorder->Add(run_record);

  // Threads the collectors and the sampler start (tool readers, lanes) inherit this mask.
  BlockedSignals blocked;
  CollectorContext ctx = MakeCollectorContext(settings, host, settings.pid, environment, WarnOnStderr);
  ctx.shares_monitored_process = true;
  nlohmann::json metadata = ProbeHostMetadata(ctx, environment);
  AddProgramFields(metadata, state->start_time, command, executable);
  state->metadata = RunMetadata::Record(std::move(metadata), fmt::format("runmon-{}", state->id),
                                        *state->recorder, paths->files / "wandb-metadata.json", WarnOnStderr);
  state->metadata->Connect(ctx);

  SamplerOptions sampler_options;
  sampler_options.interval_seconds = settings.interval_seconds;
  runlog::RunRecorder& recorder = *state->recorder;
  state->sampler = std::make_unique<Sampler>(
      BuiltinCollectors(ctx), sampler_options,
      [&recorder, label = settings.label](const Sample& sample) {
        runlog::EncodedStatsItems encoded;
        std::string stats = runlog::EncodeStatsRecord(sample, label, &encoded);
        if (!stats.empty()) recorder.AddEncodedStats(std::move(stats), std::move(encoded));
      },
      WarnOnStderr);
  try {
    state->sampler_thread = std::thread([sampler = state->sampler.get()] { sampler->Run(); });
    state->rows_thread = std::thread([raw = state.get()] { raw->WriteRows(); });
  } catch (const std::system_error& e) {
    state->Finish(1);
    throw std::runtime_error(fmt::format("runmon: cannot start the run's threads: {}", e.what()));
  }
  return Run(std::move(state));
}

Run::Run(std::unique_ptr<detail::RunState> state) : state_(std::move(state)) {}
Run::Run(Run&& other) noexcept = default;

Run& Run::operator=(Run&& other) noexcept {
  if (this != &other) {
    if (state_) finish(0);
    state_ = std::move(other.state_);
  }
  return *this;
}

Run::~Run() {
  if (!state_) return;
  if (!state_->Usable()) {
    (void)state_.release();  // a forked copy: the threads and the log belong to the parent
    return;
  }
  state_->Finish(std::uncaught_exceptions() > 0 ? 1 : 0);
}

bool Run::log(std::span<const MetricValue> metrics, std::optional<int64_t> step) noexcept {
  if (!state_) return false;
  if (step && *step < 0) {
    state_->dropped += 1;
    return false;
  }
  try {
    size_t unusable = 0;
    user_metrics::MetricLine line = LineOf(metrics, unusable);
    line.step = step;
    if (line.items.empty() && unusable > 0) {
      state_->dropped += unusable;
      return false;
    }
    return state_->Take(std::move(line), unusable);
  } catch (const std::exception&) {
    state_->dropped += 1;
    return false;
  }
}

bool Run::log_json(std::string_view text) noexcept {
  if (!state_) return false;
  try {
    auto line = user_metrics::ParseMetricLine(text);
    if (!line) {
      state_->dropped += 1;
      return false;
    }
    return state_->Take(std::move(*line), 0);
  } catch (const std::exception&) {
    state_->dropped += 1;
    return false;
  }
}

bool Run::summary(std::span<const MetricValue> metrics) noexcept {
  if (!state_) return false;
  try {
    size_t unusable = 0;
    user_metrics::MetricLine line = LineOf(metrics, unusable);
    line.summary = true;
    return state_->Take(std::move(line), unusable);
  } catch (const std::exception&) {
    state_->dropped += 1;
    return false;
  }
}

bool Run::finish(int exit_code) noexcept {
  return state_ ? state_->Finish(exit_code) : false;
}

const std::string& Run::id() const noexcept {
  static const std::string kNone;
  return state_ ? state_->id : kNone;
}

const std::string& Run::directory() const noexcept {
  static const std::string kNone;
  return state_ ? state_->directory : kNone;
}

uint64_t Run::dropped() const noexcept {
  return state_ ? state_->dropped.load() : 0;
}

}  // namespace runmon
