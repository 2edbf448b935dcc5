// The job identity of `runmon run`: flags, detection and where it goes. See run_identity.hpp.
#include "app/run_identity.hpp"

#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "host/process_environment.hpp"

namespace runmon {

Result<cluster::JobIdentityFlags> CheckJobIdentityFlags(const std::optional<std::string>& job_id,
                                                        const std::optional<std::string>& node_rank) {
  cluster::JobIdentityFlags flags;
  if (job_id) {
    auto checked = cluster::ValidateJobId(*job_id);
    if (!checked) return Error{fmt::format("--job-id {}", checked.error())};
    flags.job_id = std::move(*checked);
  }
  if (node_rank) {
    auto checked = cluster::ValidateRank(*node_rank);
    if (!checked) return Error{fmt::format("--node-rank '{}' {}", *node_rank, checked.error())};
    flags.node_rank = std::move(*checked);
  }
  return flags;
}

RunIdentity DetectRunIdentity(const HostPaths& paths, std::optional<long> attached,
                              const std::vector<std::string>& command,
                              const cluster::JobIdentityFlags& flags) {
  const std::vector<std::string> own_environment = ProcessEnvironmentStrings();
  auto read = cluster::ReadJobIdentityInputs(paths, attached, own_environment, command);
  auto detected = cluster::DetectJobIdentity(read.inputs, flags);
  for (const auto& note : read.notes) Warn(note);
  for (const auto& note : detected.notes) Warn(note);
  RunIdentity identity;
  identity.job = std::move(detected.job);
  identity.environment = cluster::EnvironmentStrings(read.inputs.environment);
  return identity;
}

ExpositionLabels RunLabels(std::string host, std::string run_id, const cluster::JobIdentity& job) {
  return ExpositionLabels{
      .host = std::move(host), .run_id = std::move(run_id), .job_id = job.job_id, .node_rank = job.node_rank};
}

void AddJobIdentity(nlohmann::json& metadata, const cluster::JobIdentity& job) {
  if (job.empty()) return;
  metadata["job"] = cluster::JobIdentityJson(job);
}

}  // namespace runmon
