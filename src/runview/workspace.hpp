// Finding runs: the runs of a wandb directory (a workspace), its latest run, its own files, and a quick
// summary of each run for a runs list (the TUI's and the dashboard's). A summary reads only the log's head
// (every record that starts in its first block, read whole: the header, run and environment records, however
// long a run's name) and its last two blocks (the newest samples and the exit record), so listing thousands
// of runs, or a 250 MB one, stays cheap; the reader resyncs at the tail's first block boundary as it does
// after damage. The head is read up to kMaxHeadBytes, enough for the longest record the reader accepts (64
// MiB): a longer one is damage for every reader, and the summary shows the run without it (its id for a
// name). Run directories follow W&B's names: run-YYYYMMDD_HHMMSS-<id> and offline-run-YYYYMMDD_HHMMSS-<id>;
// entries that are not directories, symbolic links other than latest-run, and names that do not parse are
// skipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/run_state.hpp"
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

// The log of `wandb_dir`'s latest run: the one its latest-run link points to, else its newest run-*
// directory's (runlog::FindRunLog).
Result<std::filesystem::path> LatestRunLog(const std::filesystem::path& wandb_dir);

// Writes one of the workspace's own files beside its runs (the dashboard's layout), atomically: a reader
// sees the old file or the new one, never part of one.
Status WriteWorkspaceFile(const std::filesystem::path& wandb_dir, std::string_view name,
                          std::string_view content);

// How far a summary reads a log's head: the longest record the reader accepts, wherever in block 0 it starts.
inline constexpr uint64_t kMaxHeadBytes = runlog::kMaxRecordBytes + 2 * runlog::kBlockSize;

struct RunSummary {
  RunOverview overview;
  runlog::RunVerdict verdict;  // not a run log (verdict.reason says why), running, finished, ...
  uint64_t size = 0;
  std::string warning;  // damage seen in the parts read (the whole log is checked when a run is opened)
};

// Reads the head and tail of a run log (see above) and judges it (runlog::JudgeRun). `now_seconds` decides
// "running" vs "crashed" for logs whose writer takes no lock.
RunSummary SummarizeRun(const std::filesystem::path& log, double now_seconds);

}  // namespace runmon::runview
