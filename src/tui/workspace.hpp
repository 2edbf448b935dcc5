// Finding runs: what `runmon leet [PATH]` opens, the runs of a wandb directory (a workspace), and a quick
// summary of each run for the runs list. A summary reads only the log's first block (header, run and
// environment records) and its last two blocks (the newest samples and the exit record), so listing
// thousands of runs, or a 250 MB one, stays cheap; the reader resyncs at the tail's first block boundary
// as it does after damage. Run directories follow W&B's names: run-YYYYMMDD_HHMMSS-<id> and
// offline-run-YYYYMMDD_HHMMSS-<id>; entries that are not directories, symbolic links other than
// latest-run, and names that do not parse are skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "tui/run_model.hpp"

namespace runmon::tui {

enum class LeetMode { kWorkspace, kSingleRun };

struct LeetTarget {
  LeetMode mode = LeetMode::kWorkspace;
  std::filesystem::path wandb_dir;  // the workspace (empty for a lone .wandb file outside one)
  std::filesystem::path run_log;    // the run to open first (single-run mode, or the latest run)
};

// PATH as `runmon leet` takes it: nothing (./wandb, else ./.wandb, with its latest run open), a wandb
// directory (workspace), a run directory (its one run-*.wandb), or a .wandb file.
Result<LeetTarget> ResolveLeetPath(const std::optional<std::filesystem::path>& path);

struct RunEntry {
  std::filesystem::path directory;
  std::filesystem::path log;  // empty when the directory holds no single run-*.wandb
  std::string directory_name;
  std::string id;     // from the directory name
  std::string stamp;  // YYYYMMDD_HHMMSS from the directory name
};

// The run directories of `wandb_dir`, newest first (by stamp, then name).
Result<std::vector<RunEntry>> ScanRuns(const std::filesystem::path& wandb_dir);

struct RunSummary {
  RunOverview overview;
  RunState state = RunState::kCrashed;
  uint64_t size = 0;
  std::string error;  // the log could not be read
};

// Reads the head and tail of a run log (see above). `now_seconds` decides "running" vs "crashed" for logs
// whose writer takes no lock.
RunSummary SummarizeRun(const std::filesystem::path& log, double now_seconds);

}  // namespace runmon::tui
