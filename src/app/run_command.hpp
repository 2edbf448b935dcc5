// `runmon run`: records a run. With a command, starts it and monitors its process tree and the host until
// it exits; with --pid, attaches to a running process until it exits; with --host-only, monitors the host
// alone until interrupted. With none of them it refuses: a forgotten command must not record the host
// until someone notices. The run goes to <dir>/run-YYYYMMDD_HHMMSS-<id>/ in W&B's layout (docs/run-log.md).
// With --metrics-listen, the run's latest sample is also served for Prometheus while it is recorded
// (src/export; series labelled with the run id and the host).
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
  bool host_only = false;
  std::string metrics_listen;  // HOST:PORT; empty: no /metrics
  std::string metrics_token;
};

// Returns runmon's exit status: the command's (128 + signal when it was killed), 127/126 when it cannot
// be started, 2 for bad flags (no command, --pid or --host-only; two of them), 1 when the run cannot be
// recorded at all (or --metrics-listen cannot be bound; the command is not started then).
int RunRunCommand(const RunCommandOptions& options, unsigned long original_open_files_limit);

}  // namespace runmon
