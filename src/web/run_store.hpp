// The dashboard's view of a logdir, shared by the server's threads: the list of runs (rescanned every two
// seconds, each run summarised from its log's head and tail, again only when its log changes) and the runs
// a page has asked for, loaded into RunModels and followed as they grow. One background thread does all
// reading and writing of models; request threads take a shared lock on a run to read it, so a writer
// appending while a page reads is safe. Loaded runs not asked for in a while are dropped (at most
// kMaxLoadedRuns stay, beside those asked for in the last minute, such as the nodes of a job a page shows).
// Changes bump a version and wake Server-Sent-Event streams.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runview/run_loader.hpp"
#include "runview/run_model.hpp"
#include "runview/workspace.hpp"

namespace runmon::web {

struct LoadedRun {
  std::string dir;
  mutable std::shared_mutex mutex;  // guards loader, model, caught_up, state
  std::unique_ptr<runview::RunLoader> loader;
  runview::RunModel model;
  bool caught_up = false;
  runview::RunState state = runview::RunState::kRunning;
  std::atomic<int64_t> last_used_ns{0};
};

struct RunRow {
  runview::RunEntry entry;
  std::optional<runview::RunSummary> summary;  // nullopt: not read yet
};

class RunStore {
 public:
  static constexpr size_t kMaxLoadedRuns = 8;

  // `loading`: how runs are read (runview::IndexedLoadOptions: long logs through their summary index).
  explicit RunStore(std::filesystem::path logdir, runview::IndexedLoadOptions loading = {});
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // Scans once (so the first request sees the runs), then starts the background thread.
  void Start();
  void Stop();

  const std::filesystem::path& logdir() const { return logdir_; }
  // Empty when the logdir can be listed; else why not (it may appear later).
  std::string scan_error() const;
  std::vector<RunRow> Runs() const;
  std::optional<RunRow> FindRun(std::string_view dir) const;

  // The run, loaded (its first slice read here, within `first_slice`) or being loaded in the background;
  // nullptr when `dir` is not a run of the logdir with a readable log.
  std::shared_ptr<LoadedRun> Acquire(std::string_view dir,
                                     std::chrono::milliseconds first_slice = std::chrono::milliseconds(300));

  // Waits (holding no lock) until the run has been read to the end of its log, the timeout passes, or the
  // store stops; true when it is read.
  bool WaitUntilLoaded(const LoadedRun& run, std::chrono::milliseconds timeout);

  // Bumped whenever the runs list or a loaded run changes.
  uint64_t version() const { return version_.load(); }
  uint64_t runs_version() const { return runs_version_.load(); }
  // Waits until version() differs from `seen`, the timeout passes, or the store stops (false then).
  bool WaitForChange(uint64_t seen, std::chrono::milliseconds timeout);
  bool stopped() const { return stop_.load(); }

 private:
  void Loop();
  void Rescan(std::chrono::steady_clock::time_point deadline);
  void Follow(std::chrono::steady_clock::time_point deadline);
  void Evict();
  void Changed(bool runs_list);

  std::filesystem::path logdir_;
  const runview::IndexedLoadOptions loading_;
  mutable std::mutex runs_mutex_;  // guards rows_, scan_error_, loaded_
  std::vector<RunRow> rows_;
  std::map<std::string, uint64_t> summary_sizes_;  // dir -> log size when summarised
  std::map<std::string, int64_t> summary_times_;   // dir -> log mtime (ns) when summarised
  std::string scan_error_;
  std::map<std::string, std::shared_ptr<LoadedRun>, std::less<>> loaded_;

  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> runs_version_{0};
  std::mutex wait_mutex_;
  std::condition_variable changed_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace runmon::web
