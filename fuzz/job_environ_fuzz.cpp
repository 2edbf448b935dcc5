// Fuzzes the job identity over a hostile /proc/PID/environ: ParseEnviron (names non-empty without '=' or
// NUL, values without NUL, the bound kept, every entry counted once), its round trip through "NAME=VALUE"
// strings, W&B's slurm map (bounded, valid UTF-8, lower-cased keys) and DetectJobIdentity over what was
// parsed (every value passes its check, a launcher exactly when there is a job id, the metadata JSON
// serialisable).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cluster/job_identity.hpp"
#include "core/utf8.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace runmon::cluster;

void CheckChecked(const std::string& value, runmon::Result<std::string> (*check)(std::string_view)) {
  if (value.empty()) return;
  const auto checked = check(value);
  FUZZ_CHECK(checked.ok() && *checked == value);  // checked, and already in the form the check writes
}

void CheckIdentity(const DetectedIdentity& detected) {
  const JobIdentity& job = detected.job;
  CheckChecked(job.job_id, ValidateJobId);
  CheckChecked(job.node_rank, ValidateRank);
  CheckChecked(job.rank, ValidateRank);
  CheckChecked(job.local_rank, ValidateRank);
  CheckChecked(job.world_size, ValidateRank);
  CheckChecked(job.job_name, ValidateName);
  CheckChecked(job.kubernetes.pod, ValidateName);
  CheckChecked(job.kubernetes.namespace_name, ValidateName);
  CheckChecked(job.kubernetes.pod_uid, ValidateName);
  CheckChecked(job.kubernetes.service_host, ValidateName);
  FUZZ_CHECK(job.job_id.empty() == job.launcher.empty());
  FUZZ_CHECK(job.launcher.empty() || job.launcher == "flag" || job.launcher == "slurm" ||
             job.launcher == "torchelastic" || job.launcher == "mpi");
  for (const auto& note : detected.notes) FUZZ_CHECK(!note.empty() && note.size() < 512);
  (void)JobIdentityJson(job).dump();  // throws (and so fails) on invalid UTF-8
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  const ParsedEnviron parsed = ParseEnviron(text);
  FUZZ_CHECK(parsed.variables.size() <= kMaxEnvironEntries);
  size_t entries = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\0', start), text.size());
    if (end > start) ++entries;
    start = end + 1;
  }
  FUZZ_CHECK(entries == parsed.variables.size() + parsed.duplicates + parsed.malformed + parsed.left_out);
  for (const auto& [name, value] : parsed.variables) {
    FUZZ_CHECK(!name.empty() && name.find('=') == std::string::npos && name.find('\0') == std::string::npos);
    FUZZ_CHECK(value.find('\0') == std::string::npos);
  }
  FUZZ_CHECK(EnvironmentFromStrings(EnvironmentStrings(parsed.variables)) == parsed.variables);

  const SlurmMetadata slurm = SlurmVariables(parsed.variables);
  FUZZ_CHECK(slurm.entries.size() <= kMaxSlurmEntries);
  for (const auto& [key, value] : slurm.entries) {
    FUZZ_CHECK(!key.empty() && runmon::IsValidUtf8(key) && runmon::IsValidUtf8(value));
    for (const char c : key) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)));
    FUZZ_CHECK(value.size() <= 3 * kMaxSlurmValueBytes);  // each byte replaced by at most U+FFFD's three
  }

  JobIdentityInputs inputs;
  inputs.environment = parsed.variables;
  CheckIdentity(DetectJobIdentity(inputs, {}));
  // The same text as the cgroup and the namespace file too, with the variables that make it a pod's.
  inputs.cgroup = std::string(text);
  inputs.service_account_namespace = std::string(text);
  inputs.environment.emplace("KUBERNETES_SERVICE_HOST", "10.0.0.1");
  CheckIdentity(DetectJobIdentity(inputs, {.job_id = {}, .node_rank = "3"}));
  return 0;
}
