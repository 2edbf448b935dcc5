// Who a monitored process is in a distributed job, from what its launcher left it: the environment (Slurm,
// TorchElastic/torchrun, MPI, Kubernetes), its command line (torchrun's own flags) and its cgroup (the
// Kubernetes pod). A thousand-node job runs one `runmon run` per node; each finds its job id and node rank
// here without any plumbing. The result fills the environment record's `job` (runmon::wandb::JobIdentity)
// and the /metrics labels `job_id` and `node_rank`.
//
// Where each field comes from, first found wins (docs/clusters.md says the same for users):
//   job_id     --job-id > SLURM_JOB_ID > TORCHELASTIC_RUN_ID > torchrun's --rdzv-id (or PET_RDZV_ID, its
//              environment default) > PMIX_NAMESPACE (PMIx's job namespace, the one job id MPI launchers
//              hand out) > none. Kubernetes gives a container no job id (a Job's name is a pod label, not
//              a variable), so there it is none unless --job-id says it. "none", torchrun's default
//              rendezvous id, is no id. `launcher` says which source job_id came from.
//   node_rank  --node-rank > SLURM_NODEID > GROUP_RANK > torchrun's --node-rank (or PET_NODE_RANK) > none.
//              MPI has no node index (OMPI_COMM_WORLD_NODE_RANK is a rank within the node).
//   rank, local_rank, world_size: the process's own (RANK, LOCAL_RANK, WORLD_SIZE; OMPI_COMM_WORLD_*,
//   PMIX_RANK,
//              PMI_RANK/PMI_SIZE, MPI_LOCALRANKID; SLURM_PROCID/LOCALID/NTASKS last), only when the process
//              is one rank: a torchrun wrapper starts several, and what its environment says (Kubeflow puts
//              the pod's index in RANK) is not a rank of its own.
//   job_name   SLURM_JOB_NAME.
//   kubernetes when KUBERNETES_SERVICE_HOST is set or the cgroup is a pod's: the pod (POD_NAME, else
//              HOSTNAME), its namespace (POD_NAMESPACE, else the service account's namespace file), its UID
//              (POD_UID, else the cgroup path: `kubepods` paths of the cgroupfs and systemd drivers, v1 and
//              v2; a container's own view of cgroup v2 is "/" and has none) and KUBERNETES_SERVICE_HOST.
// Values are checked: a rank is a non-negative integer below 10^9 (written without leading zeros), a job id
// 1-128 bytes of printable ASCII, a name 1-253 bytes of UTF-8 without control characters. A value that is
// not is dropped (the next source is tried) and a note says so. Nothing here is a PID or a step: the labels
// name nodes, so their cardinality is the job's node count.
//
// The environment of /proc/PID/environ: NUL-separated NAME=VALUE entries (the last one may lack its NUL);
// for a name given twice the first wins, as getenv finds it; entries without '=' or with an empty name are
// skipped; values are bytes (invalid UTF-8 is checked where a value is used). Everything but the reader is
// pure and fuzzed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon::cluster {

using Environment = std::map<std::string, std::string, std::less<>>;

// Entries past this many are not read (counted in `left_out`): a real environment has hundreds, and a
// hostile 16 MiB file of "a=" entries must not become millions of map nodes.
inline constexpr size_t kMaxEnvironEntries = 16384;
struct ParsedEnviron {
  Environment variables;
  size_t duplicates = 0;  // entries whose name came before (the first is kept)
  size_t malformed = 0;   // entries without '=' or with an empty name
  size_t left_out = 0;    // entries past kMaxEnvironEntries
};
// /proc/PID/environ's text.
ParsedEnviron ParseEnviron(std::string_view text);
// runmon's own environment ("NAME=VALUE" strings, as `environ` holds them), by the same rules.
Environment EnvironmentFromStrings(const std::vector<std::string>& entries);
std::vector<std::string> EnvironmentStrings(const Environment& environment);

// /proc/PID/cmdline: the arguments, NUL-separated (the last NUL may be missing; an empty text is no
// argument, as for a kernel thread or a zombie).
std::vector<std::string> ParseCommandLine(std::string_view text);

// What torchrun's own flags say, when `argv` runs torchrun: the first argument that is `torchrun` (in any
// directory), or a Python interpreter running `-m torch.distributed.run` (or `.launch`). Its options are read
// up to the training script, `--x=v` and `--x v` alike, `--node-rank` and `--node_rank` alike; abbreviations
// argparse would accept are not.
struct LauncherArguments {
  bool torchrun = false;
  std::optional<std::string> node_rank;  // as given, unchecked
  std::optional<std::string> rdzv_id;
};
LauncherArguments ParseLauncherArguments(const std::vector<std::string>& argv);

// The pod UID in one cgroup path: "/kubepods/besteffort/pod<uid>/<container>" (cgroupfs driver) or
// ".../kubepods-burstable-pod<uid with '_' for '-'>.slice/..." (systemd driver), with '-' restored; nullopt
// for any other path.
std::optional<std::string> PodUidFromCgroupPath(std::string_view path);
// The pod UID in /proc/PID/cgroup ("ID:CONTROLLERS:PATH" lines, v1 and v2): that of the first line naming
// one, the v2 line ("0::") first.
std::optional<std::string> PodUidFromCgroupFile(std::string_view text);

inline constexpr size_t kMaxJobIdBytes = 128;
inline constexpr size_t kMaxNameBytes = 253;
inline constexpr unsigned long kRankLimit = 1000000000;  // ranks are below this

// A job id: 1-kMaxJobIdBytes bytes of printable ASCII (space to '~').
Result<std::string> ValidateJobId(std::string_view value);
// A rank or a count: a non-negative integer below kRankLimit, returned without leading zeros.
Result<std::string> ValidateRank(std::string_view value);
// A name (a job's, a pod's): 1-kMaxNameBytes bytes of valid UTF-8 without control characters.
Result<std::string> ValidateName(std::string_view value);

// Everything the identity is made of, as read (JobIdentityInputs' reader below fills it from a process).
struct JobIdentityInputs {
  Environment environment;
  std::vector<std::string> argv;
  std::string cgroup;                     // /proc/PID/cgroup's text, "" when unread
  std::string service_account_namespace;  // the namespace file's text, "" when absent
};

// What the user said, already checked (ValidateJobId, ValidateRank); empty: detect.
struct JobIdentityFlags {
  std::string job_id = {};
  std::string node_rank = {};
};

struct KubernetesIdentity {
  std::string namespace_name = {};
  std::string pod = {};
  std::string pod_uid = {};
  std::string service_host = {};
  bool empty() const {
    return namespace_name.empty() && pod.empty() && pod_uid.empty() && service_host.empty();
  }
};

// runmon::wandb::JobIdentity's fields; empty strings are unknown.
struct JobIdentity {
  std::string job_id = {};
  std::string node_rank = {};
  std::string launcher = {};  // "flag", "slurm", "torchelastic" or "mpi": where job_id came from
  std::string job_name = {};
  std::string rank = {};
  std::string local_rank = {};
  std::string world_size = {};
  KubernetesIdentity kubernetes = {};
  bool empty() const {
    return job_id.empty() && node_rank.empty() && job_name.empty() && rank.empty() && local_rank.empty() &&
           world_size.empty() && kubernetes.empty();
  }
};

struct DetectedIdentity {
  JobIdentity job;
  std::vector<std::string> notes;  // values that were dropped, and why
};
DetectedIdentity DetectJobIdentity(const JobIdentityInputs& inputs, const JobIdentityFlags& flags);

// The metadata's "job" object in protobuf-JSON names (jobId, nodeRank, launcher, jobName, rank, localRank,
// worldSize, kubernetes{namespace, pod, podUid, serviceHost}); empty fields left out, {} when all are.
nlohmann::json JobIdentityJson(const JobIdentity& job);

// W&B's metadata "slurm": every SLURM_<NAME> variable as slurm[<name lower-cased>] = value (W&B's
// getSlurmEnvVars). A bare "SLURM_" (an empty key) is left out, values are made valid UTF-8 (the record's
// strings must be), and the map is bounded: at most kMaxSlurmEntries entries (in name order) and values of
// at most kMaxSlurmValueBytes; what is over is counted in `left_out`.
inline constexpr size_t kMaxSlurmEntries = 512;
inline constexpr size_t kMaxSlurmValueBytes = 4096;
struct SlurmMetadata {
  std::map<std::string, std::string> entries;
  size_t left_out = 0;
};
SlurmMetadata SlurmVariables(const Environment& environment);

// The files behind a process's identity. With `pid`, <proc>/PID/environ (runmon's own environment instead
// when it cannot be read, a process of another user: a note says so), <proc>/PID/cmdline (`own_argv`
// instead when unreadable) and <proc>/PID/cgroup. Without (the command runmon starts, or the host alone),
// `own_environment` and `own_argv` as they are, which is what the command is handed (execv passes runmon's
// environment unchanged), and <proc>/self/cgroup, which it inherits. Both read the service account's
// namespace file under paths.root. Reading before the command starts (not its /proc files after) is what
// makes it exact: a command that exits at once leaves a zombie whose environ reads empty.
struct ReadInputs {
  JobIdentityInputs inputs;
  std::vector<std::string> notes;
};
ReadInputs ReadJobIdentityInputs(const HostPaths& paths, std::optional<long> pid,
                                 const std::vector<std::string>& own_environment,
                                 const std::vector<std::string>& own_argv);

}  // namespace runmon::cluster
