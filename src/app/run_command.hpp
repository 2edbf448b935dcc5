// `runmon run`: records a run. With a command, starts it and monitors its process tree and the host until
// it exits; with --pid, attaches to a running process until it exits; with --host-only, monitors the host
// alone until interrupted. With none of them it refuses: a forgotten command must not record the host
// until someone notices. The run goes to <dir>/run-YYYYMMDD_HHMMSS-<id>/ in W&B's layout (docs/run-log.md).
// With --metrics-listen, the run's latest sample is also served for Prometheus while it is recorded
// (src/export; series labelled with the run id, the host and, when known, the job's id and node rank).
// With --remote-write, every sample is also queued on disk under the run directory and pushed to the
// receivers with the same labels (app/remote_write_session.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli_common.hpp"
#include "app/remote_write_flags.hpp"

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
  RemoteWriteFlags remote_write;
  std::optional<std::string> job_id;  // over the detected job identity (run_identity.hpp)
  std::optional<std::string> node_rank;
  std::optional<std::string> label;  // W&B's x_label, over WANDB_X_LABEL and --set x_label
  std::string console = "auto";      // "off": the command's stdout and stderr are not recorded
};

// Returns runmon's exit status: the command's (128 + signal when it was killed), 127/126 when it cannot
// be started, 2 for bad flags (no command, --pid or --host-only; two of them), 1 when the run cannot be
// recorded at all (or --metrics-listen cannot be bound, or a remote-write queue cannot be opened; the
// command is not started then).
int RunRunCommand(const RunCommandOptions& options, unsigned long original_open_files_limit);

}  // namespace runmon
