// Run directories as W&B lays them out: <dir>/run-YYYYMMDD_HHMMSS-<id>/run-<id>.wandb (the time is the run's
// start in local time), <run>/files/ for wandb-metadata.json, and <dir>/latest-run, a symbolic link to the
// newest run that is replaced atomically (a new link renamed over the old one), so a reader never sees it
// missing. Run ids follow W&B's rules: 8 characters of [a-z0-9] when generated; a given id must be
// non-empty, without surrounding whitespace and without any of : ; , # ? / ' (plus, because it names
// files here: no control characters, not "." or "..", at most 128 bytes, valid UTF-8).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/utf8.hpp"

namespace runmon::runlog {

std::string GenerateRunId();
Status ValidateRunId(std::string_view id);
// UTF-8 checks live in core/utf8.hpp (protobuf strings must be UTF-8); used here under runlog's names.
using runmon::IsValidUtf8;
using runmon::ToValidUtf8;

std::string RunDirectoryName(double start_time, std::string_view id);

struct RunPaths {
  std::filesystem::path directory;  // <dir>/run-YYYYMMDD_HHMMSS-<id>
  std::filesystem::path log;        // <directory>/run-<id>.wandb
  std::filesystem::path files;      // <directory>/files
};

// Creates <wandb_dir> (and parents) if needed, then the run directory (which must not exist) and files/.
Result<RunPaths> CreateRunDirectory(const std::filesystem::path& wandb_dir, double start_time,
                                    std::string_view id);
Status UpdateLatestRunLink(const std::filesystem::path& wandb_dir,
                           const std::filesystem::path& run_directory);
// Writes a temporary file beside `path`, then renames it over `path`.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content);

// The run log a path names: a .wandb file; a run directory (its one run-*.wandb); or a wandb directory
// (the run its latest-run link points to, else its newest run-* directory).
Result<std::filesystem::path> FindRunLog(const std::filesystem::path& path);

}  // namespace runmon::runlog
