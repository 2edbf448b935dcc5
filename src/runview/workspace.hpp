// Finding runs: the runs of a wandb directory (a workspace), and a quick summary of each run for a runs
// list (the TUI's and the dashboard's). A summary reads only the log's first block (header, run and
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
#include "runview/run_model.hpp"

namespace runmon::runview {

struct RunEntry {
  std::filesystem::path directory;
  std::filesystem::path log;  // empty when the directory holds no single run-*.wandb
  std::string directory_name;
  std::string id;     // from the directory name
  std::string stamp;  // YYYYMMDD_HHMMSS from the directory name
};

// The directory's one run-*.wandb file (regular files only), or an empty path.
std::filesystem::path SingleRunLogIn(const std::filesystem::path& directory);

// The run directories of `wandb_dir`, newest first (by stamp, then name).
Result<std::vector<RunEntry>> ScanRuns(const std::filesystem::path& wandb_dir);

struct RunSummary {
  RunOverview overview;
  RunState state = RunState::kCrashed;
  uint64_t size = 0;
  std::string error;    // the log could not be read
  std::string warning;  // damage seen in the parts read (the whole log is checked when a run is opened)
};

// Reads the head and tail of a run log (see above). `now_seconds` decides "running" vs "crashed" for logs
// whose writer takes no lock.
RunSummary SummarizeRun(const std::filesystem::path& log, double now_seconds);

}  // namespace runmon::runview
