// The logdir's runs and the loaded runs, kept by one background thread. See run_store.hpp.
#include "web/run_store.hpp"
#include "core/wall_clock.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace runmon::web {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kScanInterval = std::chrono::seconds(2);
constexpr auto kIdleWait = std::chrono::milliseconds(250);
constexpr auto kLoadingWait = std::chrono::milliseconds(2);
constexpr auto kSlice = std::chrono::milliseconds(100);
constexpr auto kIndexingSlice = std::chrono::milliseconds(10);
constexpr int64_t kUnusedForNs = 600'000'000'000;  // a loaded run nobody asked for in 10 minutes is dropped
// Runs asked for in the last minute stay whatever their number: a page showing a job's 32 nodes asks for
// all of them every refresh, and each one dropped would be read again from the start.
constexpr int64_t kRecentlyUsedNs = 60'000'000'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

struct FileStamp {
  uint64_t size = 0;
  int64_t modified_ns = 0;
};

FileStamp Stamp(const std::filesystem::path& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return {};
  return {static_cast<uint64_t>(info.st_size),
          static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec};
}

}  // namespace

RunStore::RunStore(std::filesystem::path logdir, runview::IndexedLoadOptions loading)
    : logdir_(std::move(logdir)), loading_(loading) {}

RunStore::~RunStore() {
  Stop();
}

void RunStore::Start() {
  Rescan(Clock::now() + std::chrono::seconds(2));
  thread_ = std::thread([this] { Loop(); });
}

void RunStore::Stop() {
  {
    std::lock_guard lock(wait_mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string RunStore::scan_error() const {
  std::lock_guard lock(runs_mutex_);
  return scan_error_;
}

std::vector<RunRow> RunStore::Runs() const {
  std::lock_guard lock(runs_mutex_);
  return rows_;
}

std::optional<RunRow> RunStore::FindRun(std::string_view dir) const {
  std::lock_guard lock(runs_mutex_);
  for (const auto& row : rows_) {
    if (row.entry.directory_name == dir) return row;
  }
  return std::nullopt;
}

void RunStore::Changed(bool runs_list) {
  {
    std::lock_guard lock(wait_mutex_);
    ++version_;
    if (runs_list) ++runs_version_;
  }
  changed_.notify_all();
}

bool RunStore::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(wait_mutex_);
  changed_.wait_for(lock, timeout, [&] { return stop_.load() || version_.load() != seen; });
  return !stop_.load();
}

std::shared_ptr<LoadedRun> RunStore::Acquire(std::string_view dir, std::chrono::milliseconds first_slice) {
  std::filesystem::path log;
  {
    std::lock_guard lock(runs_mutex_);
    if (auto it = loaded_.find(dir); it != loaded_.end()) {
      it->second->last_used_ns = NowNs();
      return it->second;
    }
    for (const auto& row : rows_) {
      if (row.entry.directory_name == dir) log = row.entry.log;
    }
  }
  if (log.empty()) return nullptr;
  auto loader = runview::RunLoader::Open(log, loading_);
  if (!loader) return nullptr;
  auto run = std::make_shared<LoadedRun>();
  run->dir = std::string(dir);
  run->loader = std::move(*loader);
  run->last_used_ns = NowNs();
  {
    std::lock_guard lock(runs_mutex_);
    auto [it, inserted] = loaded_.emplace(std::string(dir), run);
    if (!inserted) return it->second;  // another request got there first
  }
  {
    std::unique_lock lock(run->mutex);
    run->caught_up = run->loader->Read(run->model, first_slice) || !run->loader->error().empty();
    run->state = run->loader->Verdict(run->model, WallSeconds()).state;
  }
  Changed(false);
  return run;
}

bool RunStore::WaitUntilLoaded(const LoadedRun& run, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const uint64_t seen = version();
    {
      std::shared_lock lock(run.mutex);
      if (run.caught_up) return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !WaitForChange(seen, std::min(left, std::chrono::milliseconds(100))))
      return false;
  }
}

void RunStore::Loop() {
  auto next_scan = Clock::now() + kScanInterval;
  bool scan_complete = true;
  while (!stop_.load()) {
    const auto now = Clock::now();
    if (now >= next_scan || !scan_complete) {
      Rescan(now + std::chrono::milliseconds(200));
      std::lock_guard lock(runs_mutex_);
      scan_complete =
          std::all_of(rows_.begin(), rows_.end(), [](const RunRow& row) { return row.summary.has_value(); });
      if (scan_complete) next_scan = now + kScanInterval;
    }
    Follow(Clock::now() + kSlice);
    Evict();
    bool loading = false;
    {
      std::lock_guard lock(runs_mutex_);
      for (const auto& [dir, run] : loaded_) {
        std::shared_lock run_lock(run->mutex);
        loading = loading || !run->caught_up;
      }
    }
    std::unique_lock lock(wait_mutex_);
    changed_.wait_for(lock, loading || !scan_complete ? kLoadingWait : kIdleWait,
                      [&] { return stop_.load(); });
  }
}

void RunStore::Rescan(Clock::time_point deadline) {
  auto entries = runview::ScanRuns(logdir_);
  bool list_changed = false;
  std::vector<RunRow> rows;
  {
    std::lock_guard lock(runs_mutex_);
    if (!entries) {
      list_changed = scan_error_ != entries.error();
      scan_error_ = entries.error();
      if (list_changed) ++runs_version_;
      return;
    }
    list_changed = !scan_error_.empty() || entries->size() != rows_.size();
    scan_error_.clear();
    std::map<std::string, std::optional<runview::RunSummary>> known;
    for (auto& row : rows_) known[row.entry.directory_name] = std::move(row.summary);
    for (auto& entry : *entries) {
      RunRow row;
      auto it = known.find(entry.directory_name);
      if (it == known.end()) {
        list_changed = true;
      } else {
        row.summary = std::move(it->second);
      }
      row.entry = std::move(entry);
      rows.push_back(std::move(row));
    }
    rows_ = rows;  // summaries are filled in below, outside the lock
  }
  // Summaries: new runs, changed logs, and running runs (their state may turn). Outside the lock: this reads
  // files. Bounded by the deadline; what is left is done on the next turn.
  const double now = WallSeconds();
  bool summaries_changed = false;
  for (auto& row : rows) {
    if (Clock::now() >= deadline) break;
    const FileStamp stamp = Stamp(row.entry.log);
    const auto& name = row.entry.directory_name;
    const bool same_file = summary_sizes_.count(name) > 0 && summary_sizes_[name] == stamp.size &&
                           summary_times_[name] == stamp.modified_ns;
    if (row.summary && same_file && row.summary->verdict.state != runview::RunState::kRunning) continue;
    runview::RunSummary summary;
    if (row.entry.log.empty()) {
      summary.verdict.reason = "no run log in the directory";
    } else {
      summary = runview::SummarizeRun(row.entry.log, now);
    }
    const bool differs = !row.summary || row.summary->verdict.state != summary.verdict.state || !same_file ||
                         row.summary->verdict.reason != summary.verdict.reason;
    summaries_changed = summaries_changed || differs;
    row.summary = std::move(summary);
    summary_sizes_[name] = stamp.size;
    summary_times_[name] = stamp.modified_ns;
  }
  {
    std::lock_guard lock(runs_mutex_);
    // The list may have been replaced meanwhile only by this thread (Start runs before the thread).
    rows_ = std::move(rows);
  }
  if (list_changed || summaries_changed) Changed(true);
}

void RunStore::Follow(Clock::time_point deadline) {
  std::vector<std::shared_ptr<LoadedRun>> runs;
  {
    std::lock_guard lock(runs_mutex_);
    for (const auto& [dir, run] : loaded_) runs.push_back(run);
  }
  for (const auto& run : runs) {
    bool work = false;
    {
      std::shared_lock lock(run->mutex);
      work = !run->caught_up || run->loader->HasNewData();
    }
    bool changed = false;
    {
      std::unique_lock lock(run->mutex);
      if (work) {
        const uint64_t before = run->model.data_version();
        auto budget = std::max<Clock::duration>(deadline - Clock::now(), std::chrono::milliseconds(5));
        // While the index is built, Read waits for its workers: not for long with the run's lock held, which
        // chart requests need.
        if (run->loader->indexing()) budget = std::min<Clock::duration>(budget, kIndexingSlice);
        run->caught_up = run->loader->Read(run->model, budget) || !run->loader->error().empty();
        changed = run->model.data_version() != before;
      }
      const auto state = run->loader->Verdict(run->model, WallSeconds()).state;
      changed = changed || state != run->state;
      run->state = state;
    }
    if (changed) Changed(false);
  }
}

void RunStore::Evict() {
  std::lock_guard lock(runs_mutex_);
  const int64_t now = NowNs();
  // Runs a request still holds (use_count > 1) stay.
  std::erase_if(loaded_, [&](const auto& entry) {
    return entry.second.use_count() == 1 && now - entry.second->last_used_ns.load() > kUnusedForNs;
  });
  while (loaded_.size() > kMaxLoadedRuns) {
    auto oldest = loaded_.end();
    for (auto it = loaded_.begin(); it != loaded_.end(); ++it) {
      if (it->second.use_count() > 1 || now - it->second->last_used_ns.load() < kRecentlyUsedNs) continue;
      if (oldest == loaded_.end() || it->second->last_used_ns < oldest->second->last_used_ns) oldest = it;
    }
    if (oldest == loaded_.end()) break;
    loaded_.erase(oldest);
  }
}

}  // namespace runmon::web
