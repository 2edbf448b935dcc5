// `runmon run`: records a run. With a command, starts it and monitors its process tree and the host until
// it exits; with --pid, attaches to a running process until it exits; with neither, monitors the host
// until interrupted. The run goes to <dir>/run-YYYYMMDD_HHMMSS-<id>/ in W&B's layout (docs/run-log.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli_common.hpp"

namespace runmon {

struct RunCommandOptions {
  SamplerFlags sampler;
  std::string dir = "wandb";
  std::optional<std::string> id;
  std::string name;
  std::string project;
  std::vector<std::string> command;
};

// Returns runmon's exit status: the command's (128 + signal when it was killed), 127/126 when it cannot
// be started, 2 for bad flags, 1 when the run cannot be recorded at all.
int RunRunCommand(const RunCommandOptions& options, unsigned long original_open_files_limit);

}  // namespace runmon
