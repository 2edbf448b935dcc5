// What `runmon leet [PATH]` opens: nothing (./wandb, else ./.wandb, with its latest run open unless that
// is not a run log: then its workspace), a wandb directory (a workspace of runs), a run directory (its one
// run-*.wandb), or a .wandb file.
#pragma once

#include <filesystem>
#include <optional>

#include "core/result.hpp"

namespace runmon::tui {

enum class LeetMode { kWorkspace, kSingleRun };

struct LeetTarget {
  LeetMode mode = LeetMode::kWorkspace;
  std::filesystem::path wandb_dir;  // the workspace (empty for a lone .wandb file outside one)
  std::filesystem::path run_log;    // the run to open first (single-run mode, or the latest run)
};

Result<LeetTarget> ResolveLeetPath(const std::optional<std::filesystem::path>& path);

}  // namespace runmon::tui
