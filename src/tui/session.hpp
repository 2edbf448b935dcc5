// What `runmon leet` has open, between the files and the view: the workspace's runs (rescanned every two
// seconds, each summarised once and again only when its log changes), the runs being charted (loaded in
// time-bounded slices, then followed as they grow), and the mapping of view actions to them (open a run,
// back to the workspace, select runs to overlay). It reads files but never the terminal, so the app's loop,
// the benchmark and the tests drive it alike.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runview/run_loader.hpp"
#include "runview/run_model.hpp"
#include "runview/workspace.hpp"
#include "tui/leet_path.hpp"
#include "tui/view.hpp"

namespace runmon::tui {

class LeetSession {
 public:
  using Clock = std::chrono::steady_clock;

  // Fails when the run to open cannot be read at all (missing, not a regular file, not a run log: the same
  // verdict and words as `runmon dump`) or the workspace directory cannot be listed. In a workspace, a
  // directory whose log is not a run log is listed as such ("not a run log", the reason in the status bar
  // while the cursor is on it) and is never charted or opened.
  static Result<std::unique_ptr<LeetSession>> Open(const LeetTarget& target);

  // A slice of work within `budget`: loads runs not read to the end, reads what running runs appended,
  // rescans the workspace when due. True when anything shown may have changed.
  bool Work(Clock::time_point now, Clock::duration budget);
  // Some charted run has not been read to its end yet.
  bool loading() const;

  // The frame's inputs. `now_seconds` is wall-clock time (the runtime of running runs, crash detection).
  ViewModel BuildViewModel(const LeetView& view, double now_seconds);
  // Carries out what the view asked for; false when the user quit.
  bool Apply(ViewAction action, LeetView& view);

  LeetMode mode() const { return mode_; }
  // The run shown in single-run view (nullptr in a workspace).
  const runview::RunModel* current_run() const;

 private:
  struct LoadedRun {
    std::unique_ptr<runview::RunLoader> loader;
    runview::RunModel model;
    bool caught_up = false;
  };
  struct Summary {
    runview::RunSummary summary;
    uint64_t size = 0;
    int64_t modified_ns = 0;
    bool checked = false;  // summarised at least once
  };

  explicit LeetSession(const LeetTarget& target);
  LoadedRun* Load(const std::filesystem::path& log);
  bool Rescan(double now_seconds, Clock::time_point deadline);
  void ReleaseUnused();
  // The entry's verdict from its summary (nullptr before it is summarised).
  const runview::RunVerdict* KnownVerdict(const runview::RunEntry& entry) const;
  // Has a log that is not known to be something other than a run log.
  bool Chartable(const runview::RunEntry& entry) const;
  std::vector<const runview::RunEntry*> ChartedEntries() const;
  size_t CursorIndex(const LeetView& view) const;

  LeetMode mode_;
  std::filesystem::path wandb_dir_;
  std::filesystem::path current_log_;  // single-run view
  bool opened_from_workspace_ = false;
  std::map<std::filesystem::path, LoadedRun> runs_;
  std::vector<runview::RunEntry> entries_;
  std::map<std::string, Summary> summaries_;  // by directory name
  std::set<std::string> selected_;            // directory names
  std::string scan_error_;
  size_t cursor_ = 0;  // the runs-list cursor seen at the last BuildViewModel
  Clock::time_point next_scan_{};
  bool scan_complete_ = false;
};

}  // namespace runmon::tui
