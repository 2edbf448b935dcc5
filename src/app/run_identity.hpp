// The job identity of a `runmon run` (src/cluster/job_identity.hpp): the --job-id and --node-rank flags, the
// identity read before anything starts, and where it goes: the metadata's "job" (the environment record's
// field 150 and wandb-metadata.json) and the constant labels job_id and node_rank of the run's series. Who
// is read: with a command, what the command is handed (runmon's own environment and cgroup, and the
// command line), so it is known before the /metrics server answers its first scrape and a command that ends
// at once is no different; with --pid, the attached process's /proc files; with --host-only, runmon's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cluster/job_identity.hpp"
#include "core/result.hpp"
#include "export/exposition.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct RunIdentity {
  cluster::JobIdentity job;
  // The monitored process's environment: the metadata's slurm and scheduler facts are taken from it.
  std::vector<std::string> environment;
};

// --job-id and --node-rank, checked (an error is a usage error, naming the flag).
Result<cluster::JobIdentityFlags> CheckJobIdentityFlags(const std::optional<std::string>& job_id,
                                                        const std::optional<std::string>& node_rank);

// Reads and detects the identity of `attached` (--pid), else of the command (`command`, empty for the host
// alone) that runmon starts with its own environment. What had to be left out is said on stderr, once.
RunIdentity DetectRunIdentity(const HostPaths& paths, std::optional<long> attached,
                              const std::vector<std::string>& command,
                              const cluster::JobIdentityFlags& flags);

// The constant labels of every series of the run: host, run id, and the job's job_id and node_rank (empty
// when unknown, which leaves the label out). What /metrics serves, and what any other exporter of the run's
// series (remote write) must label them with.
ExpositionLabels RunLabels(std::string host, std::string run_id, const cluster::JobIdentity& job);

// Adds "job" to the run's metadata, when anything is known.
void AddJobIdentity(nlohmann::json& metadata, const cluster::JobIdentity& job);

}  // namespace runmon
