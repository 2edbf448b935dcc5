// The runs `runmon leet` has open and the workspace it lists. See session.hpp.
#include "tui/session.hpp"
#include "core/wall_clock.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

namespace runmon::tui {
namespace fs = std::filesystem;
namespace {

constexpr auto kScanInterval = std::chrono::seconds(2);

// "20261129_194500" -> "2026-11-29 19:45".
std::string FormatStamp(std::string_view stamp) {
  if (stamp.size() < 13) return std::string(stamp);
  return fmt::format("{}-{}-{} {}:{}", stamp.substr(0, 4), stamp.substr(4, 2), stamp.substr(6, 2),
                     stamp.substr(9, 2), stamp.substr(11, 2));
}

bool InRunDirectory(const fs::path& log) {
  const std::string name = log.parent_path().filename().string();
  return name.starts_with("run-") || name.starts_with("offline-run-");
}

}  // namespace

LeetSession::LeetSession(const LeetTarget& target)
    : mode_(target.mode), wandb_dir_(target.wandb_dir), current_log_(target.run_log) {}

Result<std::unique_ptr<LeetSession>> LeetSession::Open(const LeetTarget& target) {
  std::unique_ptr<LeetSession> session(new LeetSession(target));
  if (target.mode == LeetMode::kSingleRun) {
    auto loader = runview::RunLoader::Open(target.run_log);
    if (!loader) return Error{loader.error()};
    // Refused as `runmon dump` refuses it: the same verdict, the same words.
    const auto verdict = (*loader)->Verdict(runview::RunModel(), WallSeconds());
    if (verdict.state == runview::RunState::kNotARunLog) {
      return Error{fmt::format("{}: {}", target.run_log.string(), verdict.reason)};
    }
    session->runs_[target.run_log].loader = std::move(*loader);
    session->runs_[target.run_log].model.set_run_directory(target.run_log.parent_path());
    session->opened_from_workspace_ = !target.wandb_dir.empty() && InRunDirectory(target.run_log);
  } else {
    auto entries = runview::ScanRuns(target.wandb_dir);
    if (!entries) return Error{entries.error()};
    session->entries_ = std::move(*entries);
  }
  return session;
}

LeetSession::LoadedRun* LeetSession::Load(const fs::path& log) {
  if (auto it = runs_.find(log); it != runs_.end()) return &it->second;
  auto loader = runview::RunLoader::Open(log);
  if (!loader) return nullptr;
  auto& run = runs_[log];
  run.loader = std::move(*loader);
  run.model.set_run_directory(log.parent_path());  // where files/ holds the images it logged
  return &run;
}

const runview::RunModel* LeetSession::current_run() const {
  if (mode_ != LeetMode::kSingleRun) return nullptr;
  const auto it = runs_.find(current_log_);
  return it == runs_.end() ? nullptr : &it->second.model;
}

bool LeetSession::loading() const {
  return std::any_of(runs_.begin(), runs_.end(), [](const auto& entry) { return !entry.second.caught_up; });
}

bool LeetSession::Work(Clock::time_point now, Clock::duration budget) {
  const auto deadline = now + budget;
  bool changed = false;
  for (auto& [path, run] : runs_) {
    if (run.caught_up && !run.loader->HasNewData()) continue;
    const uint64_t before = run.model.data_version();
    const auto remaining = std::max<Clock::duration>(deadline - Clock::now(), std::chrono::milliseconds(1));
    run.caught_up = run.loader->Read(run.model, remaining) || !run.loader->error().empty();
    changed = changed || run.model.data_version() != before || run.caught_up;
  }
  if (mode_ == LeetMode::kWorkspace && (now >= next_scan_ || !scan_complete_)) {
    changed = Rescan(WallSeconds(), deadline) || changed;
    if (scan_complete_) next_scan_ = now + kScanInterval;
  }
  return changed;
}

bool LeetSession::Rescan(double now_seconds, Clock::time_point deadline) {
  bool changed = false;
  if (scan_complete_ || entries_.empty()) {
    auto entries = runview::ScanRuns(wandb_dir_);
    if (!entries) {
      changed = scan_error_ != entries.error();
      scan_error_ = entries.error();
      scan_complete_ = true;
      return changed;
    }
    scan_error_.clear();
    const auto names = [](const std::vector<runview::RunEntry>& list) {
      std::vector<std::string> result;
      for (const auto& entry : list) result.push_back(entry.directory_name);
      return result;
    };
    changed = names(*entries) != names(entries_);
    entries_ = std::move(*entries);
  }
  // Summaries: new runs, logs that changed, and running runs (their state may turn to crashed). A slice at a
  // time: ten thousand runs must not hold up a frame.
  scan_complete_ = true;
  for (const auto& entry : entries_) {
    if (Clock::now() >= deadline) {
      scan_complete_ = false;
      break;
    }
    Summary& summary = summaries_[entry.directory_name];
    struct stat info {};
    const bool exists = !entry.log.empty() && ::stat(entry.log.c_str(), &info) == 0;
    const auto size = exists ? static_cast<uint64_t>(info.st_size) : 0;
    const int64_t modified =
        exists ? static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec : 0;
    if (summary.checked && summary.size == size && summary.modified_ns == modified &&
        summary.summary.verdict.state != runview::RunState::kRunning) {
      continue;
    }
    const runview::RunState previous_state = summary.summary.verdict.state;
    const bool first = !summary.checked;
    if (entry.log.empty()) {
      summary.summary = runview::RunSummary{};
      summary.summary.verdict.reason = "no run log in the directory";
    } else {
      summary.summary = runview::SummarizeRun(entry.log, now_seconds);
    }
    changed = changed || first || summary.size != size || previous_state != summary.summary.verdict.state;
    summary.size = size;
    summary.modified_ns = modified;
    summary.checked = true;
  }
  return changed;
}

const runview::RunVerdict* LeetSession::KnownVerdict(const runview::RunEntry& entry) const {
  const auto it = summaries_.find(entry.directory_name);
  return it != summaries_.end() && it->second.checked ? &it->second.summary.verdict : nullptr;
}

bool LeetSession::Chartable(const runview::RunEntry& entry) const {
  const runview::RunVerdict* verdict = KnownVerdict(entry);
  return !entry.log.empty() && (verdict == nullptr || verdict->state != runview::RunState::kNotARunLog);
}

std::vector<const runview::RunEntry*> LeetSession::ChartedEntries() const {
  std::vector<const runview::RunEntry*> charted;
  for (const auto& entry : entries_) {
    if (selected_.count(entry.directory_name) > 0 && Chartable(entry)) charted.push_back(&entry);
  }
  if (charted.empty() && cursor_ < entries_.size() && Chartable(entries_[cursor_])) {
    charted.push_back(&entries_[cursor_]);
  }
  return charted;
}

void LeetSession::ReleaseUnused() {
  std::set<fs::path> keep;
  if (mode_ == LeetMode::kSingleRun) keep.insert(current_log_);
  if (mode_ == LeetMode::kWorkspace) {
    for (const runview::RunEntry* entry : ChartedEntries()) keep.insert(entry->log);
  }
  std::erase_if(runs_, [&](const auto& entry) { return keep.count(entry.first) == 0; });
}

ViewModel LeetSession::BuildViewModel(const LeetView& view, double now_seconds) {
  ViewModel model;
  model.mode = mode_;
  model.now_seconds = now_seconds;
  if (mode_ == LeetMode::kSingleRun) {
    model.location = current_log_.string();
    auto it = runs_.find(current_log_);
    if (it == runs_.end()) return model;
    LoadedRun& run = it->second;
    model.chart_runs = {&run.model};
    model.chart_run_labels = {runview::ShortName(run.model.overview().name)};
    model.overview_run = &run.model;
    model.overview_state = run.loader->Verdict(run.model, now_seconds).state;
    model.warnings = run.loader->Warnings();
    model.loading = !run.caught_up;
    model.loaded_fraction = run.loader->loaded_fraction();
    model.can_go_back = opened_from_workspace_;
    model.console = &run.model.console();
    model.console_label = model.chart_run_labels.front();
    model.media = &run.model.media();
    return model;
  }

  model.location = wandb_dir_.string();
  if (!scan_error_.empty()) model.warnings.push_back(scan_error_);
  cursor_ = entries_.empty() ? 0 : std::min(view.run_cursor(), entries_.size() - 1);
  for (const auto& entry : entries_) {
    RunListEntry item;
    item.started = FormatStamp(entry.stamp);
    item.selected = selected_.count(entry.directory_name) > 0;
    const auto summary = summaries_.find(entry.directory_name);
    if (summary != summaries_.end() && summary->second.checked) {
      const runview::RunSummary& known = summary->second.summary;
      item.name = runview::ShortName(!known.overview.name.empty() ? known.overview.name : known.overview.id);
      item.id = known.overview.id;
      item.state = known.verdict.state;
      item.damaged = !known.warning.empty();
    } else {
      item.summarised = false;
    }
    if (item.name.empty()) item.name = entry.id.empty() ? entry.directory_name : entry.id;
    if (item.id.empty()) item.id = entry.id;
    model.runs.push_back(std::move(item));
  }
  // Why the run under the cursor is not a run (it is listed, never charted or opened).
  if (cursor_ < entries_.size()) {
    const runview::RunVerdict* verdict = KnownVerdict(entries_[cursor_]);
    if (verdict != nullptr && verdict->state == runview::RunState::kNotARunLog) {
      model.warnings.push_back(model.runs[cursor_].name + ": " + verdict->reason);
    }
  }
  ReleaseUnused();
  double loaded = 0;  // byte-weighted over the runs charted
  uint64_t size = 0;
  for (const runview::RunEntry* entry : ChartedEntries()) {
    LoadedRun* run = Load(entry->log);
    if (run == nullptr) continue;
    model.chart_runs.push_back(&run->model);
    const auto& overview = run->model.overview();
    model.chart_run_labels.push_back(runview::ShortName(!overview.name.empty() ? overview.name
                                                        : !overview.id.empty() ? overview.id
                                                                               : entry->directory_name));
    model.loading = model.loading || !run->caught_up;
    const uint64_t run_size = run->loader->file_size();
    loaded += run->loader->loaded_fraction() * static_cast<double>(run_size);
    size += run_size;
    for (auto& warning : run->loader->Warnings())
      model.warnings.push_back(model.chart_run_labels.back() + ": " + warning);
  }
  model.loaded_fraction = size == 0 ? 1 : loaded / static_cast<double>(size);
  if (!model.chart_runs.empty()) {
    model.console = &model.chart_runs.front()->console();
    model.console_label = model.chart_run_labels.front();
    model.media = &model.chart_runs.front()->media();
  }
  return model;
}

bool LeetSession::Apply(ViewAction action, LeetView& view) {
  switch (action) {
    case ViewAction::kQuit:
      return false;
    case ViewAction::kOpenRun: {
      if (mode_ != LeetMode::kWorkspace || view.run_cursor() >= entries_.size()) break;
      const runview::RunEntry& entry = entries_[view.run_cursor()];
      if (!Chartable(entry) || Load(entry.log) == nullptr) break;
      mode_ = LeetMode::kSingleRun;
      current_log_ = entry.log;
      opened_from_workspace_ = true;
      ReleaseUnused();
      break;
    }
    case ViewAction::kBack: {
      if (mode_ != LeetMode::kSingleRun || !opened_from_workspace_) break;
      mode_ = LeetMode::kWorkspace;
      scan_complete_ = true;
      next_scan_ = {};
      if (entries_.empty()) {
        if (auto entries = runview::ScanRuns(wandb_dir_)) entries_ = std::move(*entries);
      }
      for (size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i].log == current_log_) view.set_run_cursor(i);
      }
      break;
    }
    case ViewAction::kToggleSelection: {
      if (mode_ != LeetMode::kWorkspace || view.run_cursor() >= entries_.size()) break;
      const std::string& name = entries_[view.run_cursor()].directory_name;
      if (!selected_.erase(name)) selected_.insert(name);
      break;
    }
    case ViewAction::kNone:
    case ViewAction::kRedraw:
    case ViewAction::kRestart:  // the loop makes a new session
      break;
  }
  return true;
}

}  // namespace runmon::tui
