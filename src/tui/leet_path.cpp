// Resolving `runmon leet`'s PATH. See leet_path.hpp.
#include "tui/leet_path.hpp"

#include <fmt/format.h>

#include "runview/run_loader.hpp"
#include "runview/workspace.hpp"

namespace runmon::tui {
namespace fs = std::filesystem;
namespace {

bool IsWandbFile(const fs::path& path) {
  return path.filename().string().ends_with(".wandb");
}

// Whether the file's header says it is a run log (runlog::JudgeRun's "not a run log" otherwise).
bool IsRunLog(const fs::path& log) {
  auto loader = runview::RunLoader::Open(log);
  return loader && (*loader)->Verdict(runview::RunModel(), 0).state != runview::RunState::kNotARunLog;
}

}  // namespace

Result<LeetTarget> ResolveLeetPath(const std::optional<fs::path>& path) {
  LeetTarget target;
  std::error_code error;
  if (!path) {
    for (const char* candidate : {"wandb", ".wandb"}) {
      if (fs::is_directory(candidate, error)) {
        target.wandb_dir = candidate;
        break;
      }
    }
    if (target.wandb_dir.empty()) {
      return Error{
          "no ./wandb directory here: run `runmon run -- COMMAND` first, or name a run directory, a "
          ".wandb file or a wandb directory"};
    }
    // The latest run opens; the workspace is one esc away. An empty workspace opens as a workspace, and so
    // does one whose latest run is not a run log (it is listed as such there).
    if (auto latest = runview::LatestRunLog(target.wandb_dir); latest && IsRunLog(*latest)) {
      target.mode = LeetMode::kSingleRun;
      target.run_log = *latest;
    }
    return target;
  }
  const auto status = fs::status(*path, error);
  if (error || !fs::exists(status))
    return Error{fmt::format("{}: no such file or directory", path->string())};
  if (fs::is_directory(status)) {
    if (auto log = runview::SingleRunLogIn(*path); !log.empty()) {
      target.mode = LeetMode::kSingleRun;
      target.run_log = log;
      target.wandb_dir = fs::absolute(*path, error).parent_path();
      return target;
    }
    target.wandb_dir = *path;
    return target;
  }
  if (!fs::is_regular_file(status)) return Error{fmt::format("{}: not a regular file", path->string())};
  if (!IsWandbFile(*path)) {
    return Error{fmt::format("{}: not a run log (a .wandb file), a run directory or a wandb directory",
                             path->string())};
  }
  target.mode = LeetMode::kSingleRun;
  target.run_log = *path;
  target.wandb_dir = fs::absolute(*path, error).parent_path().parent_path();
  return target;
}

}  // namespace runmon::tui
