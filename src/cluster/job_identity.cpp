// Detecting a process's job identity: the parsers of its environment, command line and cgroup, the checks
// of each value, the precedence between launchers, and the one reader of /proc. See job_identity.hpp.
#include "cluster/job_identity.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "host/file_reader.hpp"

namespace runmon::cluster {
namespace {

// Splits `text` at each `separator`; a last piece without its separator counts, an empty text is no piece.
template <typename Visit>
void ForEachPiece(std::string_view text, char separator, Visit&& visit) {
  while (!text.empty()) {
    const size_t end = text.find(separator);
    visit(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Adds one NAME=VALUE entry, first name wins.
void AddEntry(std::string_view entry, ParsedEnviron& parsed) {
  const size_t eq = entry.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    ++parsed.malformed;
    return;
  }
  if (parsed.variables.size() >= kMaxEnvironEntries) {
    ++parsed.left_out;
    return;
  }
  if (!parsed.variables.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1))).second) {
    ++parsed.duplicates;
  }
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// python, python3, python3.12, python2.7 (what `-m torch.distributed.run` is run by).
bool IsPython(std::string_view name) {
  if (!name.starts_with("python")) return false;
  name.remove_prefix(6);
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// The index after `python [options] -m MODULE` when MODULE is torchrun's, else nullopt. Python's options
// may be clustered (-um MODULE, -mMODULE); -X and -W take a value, attached or next; -c, a script, "-" or
// anything else ends the options without a module.
std::optional<size_t> AfterTorchrunModule(const std::vector<std::string>& argv, size_t python) {
  size_t i = python + 1;
  while (i < argv.size()) {
    const std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") return std::nullopt;
    if (arg.starts_with("--")) {  // --check-hash-based-pycs MODE; other long options stand alone
      i += arg == "--check-hash-based-pycs" ? 2 : 1;
      continue;
    }
    size_t next = i + 1;
    for (size_t k = 1; k < arg.size(); ++k) {
      const char option = arg[k];
      if (option == 'c') return std::nullopt;
      if (option == 'X' || option == 'W') {
        if (k + 1 == arg.size()) ++next;  // the value is the next argument
        break;
      }
      if (option == 'm') {
        std::string_view module;
        if (k + 1 < arg.size()) {
          module = arg.substr(k + 1);
        } else if (next < argv.size()) {
          module = argv[next++];
        }
        if (module == "torch.distributed.run" || module == "torch.distributed.launch") return next;
        return std::nullopt;
      }
    }
    i = next;
  }
  return std::nullopt;
}

// torchrun's options that take no value (torch/distributed/run.py and launch.py: store_true).
bool IsTorchrunSwitch(std::string_view option) {
  static constexpr std::array<std::string_view, 7> kSwitches = {
      "--standalone", "--module", "--no-python", "--run-path", "--virtual-local-rank", "--use-env", "-m"};
  return std::find(kSwitches.begin(), kSwitches.end(), option) != kSwitches.end();
}

std::string Canonical(std::string_view option) {
  std::string name(option);
  // --node_rank and --node-rank are one option (the underscores are torchrun's older spelling).
  for (size_t i = 2; i < name.size(); ++i) {
    if (name[i] == '_') name[i] = '-';
  }
  return name;
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A pod UID: a UUID (8-4-4-4-12 hex digits), or the 32 hex digits of a static pod's config hash.
bool IsPodUid(std::string_view text) {
  if (text.size() == 32) return std::all_of(text.begin(), text.end(), IsHex);
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

// A value as a note may quote it: printable ASCII, at most 40 bytes.
std::string Preview(std::string_view value) {
  std::string out;
  for (const char c : value.substr(0, 40)) out += (c >= ' ' && c <= '~') ? c : '?';
  if (value.size() > 40) out += "...";
  return out;
}

std::optional<std::string_view> Lookup(const Environment& environment, std::string_view name) {
  const auto it = environment.find(name);
  if (it == environment.end()) return std::nullopt;
  return std::string_view(it->second);
}

struct Source {
  std::string_view name;  // the variable or flag, for notes
  std::optional<std::string_view> value;
  std::string_view launcher = {};
};

struct Picked {
  std::string value;
  std::string_view launcher;
};

// The first source with a value that passes `check`; an empty value is no value, one that fails is noted.
template <typename Check>
std::optional<Picked> PickFirst(std::initializer_list<Source> sources, Check&& check,
                                std::vector<std::string>& notes) {
  for (const Source& source : sources) {
    if (!source.value || source.value->empty()) continue;
    auto checked = check(*source.value);
    if (checked) return Picked{std::move(*checked), source.launcher};
    notes.push_back(fmt::format("{} '{}' {}: left out of the job identity", source.name,
                                Preview(*source.value), checked.error()));
  }
  return std::nullopt;
}

std::string PickValue(std::initializer_list<Source> sources, Result<std::string> (*check)(std::string_view),
                      std::vector<std::string>& notes) {
  auto picked = PickFirst(sources, check, notes);
  return picked ? std::move(picked->value) : std::string();
}

void PutIfSet(nlohmann::json& object, const char* name, const std::string& value) {
  if (!value.empty()) object[name] = value;
}

}  // namespace

ParsedEnviron ParseEnviron(std::string_view text) {
  ParsedEnviron parsed;
  ForEachPiece(text, '\0', [&](std::string_view entry) {
    if (!entry.empty()) AddEntry(entry, parsed);
  });
  return parsed;
}

Environment EnvironmentFromStrings(const std::vector<std::string>& entries) {
  ParsedEnviron parsed;
  for (const auto& entry : entries) AddEntry(entry, parsed);
  return std::move(parsed.variables);
}

std::vector<std::string> EnvironmentStrings(const Environment& environment) {
  std::vector<std::string> out;
  out.reserve(environment.size());
  for (const auto& [name, value] : environment) out.push_back(name + "=" + value);
  return out;
}

std::vector<std::string> ParseCommandLine(std::string_view text) {
  std::vector<std::string> argv;
  ForEachPiece(text, '\0', [&](std::string_view argument) { argv.emplace_back(argument); });
  return argv;
}

LauncherArguments ParseLauncherArguments(const std::vector<std::string>& argv) {
  LauncherArguments result;
  std::optional<size_t> options;
  for (size_t i = 0; i < argv.size() && !options; ++i) {
    const std::string_view name = Basename(argv[i]);
    if (name == "torchrun") {
      options = i + 1;
    } else if (IsPython(name)) {
      options = AfterTorchrunModule(argv, i);
      if (!options) return result;  // a Python running something else is the program itself
    }
  }
  if (!options) return result;
  result.torchrun = true;
  // argparse's rules: options until the training script (the first argument that is not an option or an
  // option's value) or "--"; an option given twice keeps its last value.
  size_t i = *options;
  while (i < argv.size()) {
    const std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") break;
    std::string_view option = arg;
    std::optional<std::string_view> value;
    size_t next = i + 1;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      option = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (!arg.starts_with("--") && arg.size() > 2) {
      value = arg.substr(2);  // -r3: a short option with its value attached
      option = arg.substr(0, 2);
    } else if (!IsTorchrunSwitch(Canonical(arg))) {
      if (next < argv.size()) value = argv[next];
      ++next;
    }
    const std::string canonical = Canonical(option);
    if (value && canonical == "--node-rank") result.node_rank = std::string(*value);
    if (value && canonical == "--rdzv-id") result.rdzv_id = std::string(*value);
    i = next;
  }
  return result;
}

std::optional<std::string> PodUidFromCgroupPath(std::string_view path) {
  bool under_kubepods = false;
  std::optional<std::string> uid;
  ForEachPiece(path, '/', [&](std::string_view component) {
    if (uid) return;
    if (component.find("kubepods") != std::string_view::npos) under_kubepods = true;
    if (!under_kubepods) return;
    if (component.starts_with("pod") && IsPodUid(component.substr(3))) {  // cgroupfs: pod<uid>
      uid = std::string(component.substr(3));
      return;
    }
    if (!component.ends_with(".slice")) return;  // systemd: kubepods-<qos>-pod<uid, '_' for '-'>.slice
    const std::string_view stem = component.substr(0, component.size() - 6);
    const size_t pod = stem.rfind("-pod");
    if (pod == std::string_view::npos) return;
    // systemd escapes every '-' of the UID, since '-' separates the slice's levels: one left is no UID.
    std::string candidate(stem.substr(pod + 4));
    if (candidate.find('-') != std::string::npos) return;
    std::replace(candidate.begin(), candidate.end(), '_', '-');
    if (IsPodUid(candidate)) uid = std::move(candidate);
  });
  return uid;
}

std::optional<std::string> PodUidFromCgroupFile(std::string_view text) {
  std::optional<std::string> v2;
  std::optional<std::string> v1;
  ForEachPiece(text, '\n', [&](std::string_view line) {
    const size_t first = line.find(':');
    if (first == std::string_view::npos) return;
    const size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) return;
    const bool unified = line.substr(0, second + 1) == "0::";
    if (unified ? v2.has_value() : v1.has_value()) return;
    auto uid = PodUidFromCgroupPath(line.substr(second + 1));
    (unified ? v2 : v1) = std::move(uid);
  });
  return v2 ? v2 : v1;
}

Result<std::string> ValidateJobId(std::string_view value) {
  if (value.empty()) return Error{"is empty"};
  if (value.size() > kMaxJobIdBytes) return Error{fmt::format("is longer than {} bytes", kMaxJobIdBytes)};
  if (!std::all_of(value.begin(), value.end(), [](char c) { return c >= ' ' && c <= '~'; })) {
    return Error{"is not printable ASCII"};
  }
  return std::string(value);
}

Result<std::string> ValidateRank(std::string_view value) {
  unsigned long number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || value.front() < '0' || value.front() > '9' || ec != std::errc() ||
      end != value.data() + value.size() || number >= kRankLimit) {
    return Error{fmt::format("is not a non-negative integer below {}", kRankLimit)};
  }
  return std::to_string(number);
}

Result<std::string> ValidateName(std::string_view value) {
  if (value.empty()) return Error{"is empty"};
  if (value.size() > kMaxNameBytes) return Error{fmt::format("is longer than {} bytes", kMaxNameBytes)};
  if (!IsValidUtf8(value)) return Error{"is not valid UTF-8"};
  if (std::any_of(value.begin(), value.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Error{"holds a control character"};
  }
  return std::string(value);
}

DetectedIdentity DetectJobIdentity(const JobIdentityInputs& inputs, const JobIdentityFlags& flags) {
  DetectedIdentity out;
  JobIdentity& job = out.job;
  auto& notes = out.notes;
  const Environment& env = inputs.environment;
  const auto var = [&](std::string_view name) { return Source{name, Lookup(env, name)}; };
  const LauncherArguments args = ParseLauncherArguments(inputs.argv);
  const auto arg = [](std::string_view name, const std::optional<std::string>& value) {
    return Source{name, value ? std::optional<std::string_view>(*value) : std::nullopt};
  };
  const auto with = [](Source source, std::string_view launcher) {
    source.launcher = launcher;
    return source;
  };
  const std::optional<std::string_view> no_value;
  // "none" is torchrun's default rendezvous id: no id at all.
  const auto rendezvous = [](Source source) {
    if (source.value == "none") source.value.reset();
    source.launcher = "torchelastic";
    return source;
  };

  if (auto picked = PickFirst({with({"--job-id", flags.job_id}, "flag"), with(var("SLURM_JOB_ID"), "slurm"),
                               with(var("SLURM_JOBID"), "slurm"), rendezvous(var("TORCHELASTIC_RUN_ID")),
                               rendezvous(arg("torchrun --rdzv-id", args.rdzv_id)),
                               rendezvous(var("PET_RDZV_ID")), with(var("PMIX_NAMESPACE"), "mpi")},
                              ValidateJobId, notes)) {
    job.job_id = std::move(picked->value);
    job.launcher = std::string(picked->launcher);
  }
  job.node_rank = PickValue({{"--node-rank", flags.node_rank},
                             var("SLURM_NODEID"),
                             var("GROUP_RANK"),
                             arg("torchrun --node-rank", args.node_rank),
                             var("PET_NODE_RANK")},
                            ValidateRank, notes);
  job.job_name = PickValue({var("SLURM_JOB_NAME")}, ValidateName, notes);
  // A torchrun wrapper is no rank of its own: its environment's RANK (Kubeflow's pod index) is not one.
  if (!args.torchrun) {
    job.rank = PickValue(
        {var("RANK"), var("OMPI_COMM_WORLD_RANK"), var("PMIX_RANK"), var("PMI_RANK"), var("SLURM_PROCID")},
        ValidateRank, notes);
    job.local_rank = PickValue(
        {var("LOCAL_RANK"), var("OMPI_COMM_WORLD_LOCAL_RANK"), var("MPI_LOCALRANKID"), var("SLURM_LOCALID")},
        ValidateRank, notes);
    job.world_size =
        PickValue({var("WORLD_SIZE"), var("OMPI_COMM_WORLD_SIZE"), var("PMI_SIZE"), var("SLURM_NTASKS")},
                  ValidateRank, notes);
  }

  KubernetesIdentity& kube = job.kubernetes;
  kube.service_host = PickValue({var("KUBERNETES_SERVICE_HOST")}, ValidateName, notes);
  const std::optional<std::string> cgroup_uid = PodUidFromCgroupFile(inputs.cgroup);
  kube.pod_uid = PickValue(
      {var("POD_UID"), {"the cgroup", cgroup_uid ? std::optional<std::string_view>(*cgroup_uid) : no_value}},
      ValidateName, notes);
  if (kube.service_host.empty() && kube.pod_uid.empty()) return out;  // not in a pod
  kube.pod = PickValue({var("POD_NAME"), var("HOSTNAME")}, ValidateName, notes);
  // The file ends with no newline as the kubelet writes it; one added by hand is not part of the name.
  std::string_view file_namespace = inputs.service_account_namespace;
  while (!file_namespace.empty() && (file_namespace.back() == '\n' || file_namespace.back() == '\r')) {
    file_namespace.remove_suffix(1);
  }
  kube.namespace_name = PickValue(
      {var("POD_NAMESPACE"),
       {"the service account's namespace file", file_namespace.empty() ? no_value : file_namespace}},
      ValidateName, notes);
  return out;
}

nlohmann::json JobIdentityJson(const JobIdentity& job) {
  nlohmann::json out = nlohmann::json::object();
  PutIfSet(out, "jobId", job.job_id);
  PutIfSet(out, "nodeRank", job.node_rank);
  PutIfSet(out, "launcher", job.launcher);
  PutIfSet(out, "jobName", job.job_name);
  PutIfSet(out, "rank", job.rank);
  PutIfSet(out, "localRank", job.local_rank);
  PutIfSet(out, "worldSize", job.world_size);
  if (!job.kubernetes.empty()) {
    nlohmann::json kube = nlohmann::json::object();
    PutIfSet(kube, "namespace", job.kubernetes.namespace_name);
    PutIfSet(kube, "pod", job.kubernetes.pod);
    PutIfSet(kube, "podUid", job.kubernetes.pod_uid);
    PutIfSet(kube, "serviceHost", job.kubernetes.service_host);
    out["kubernetes"] = std::move(kube);
  }
  return out;
}

SlurmMetadata SlurmVariables(const Environment& environment) {
  SlurmMetadata out;
  for (auto it = environment.lower_bound(std::string_view("SLURM_"));
       it != environment.end() && it->first.starts_with("SLURM_"); ++it) {
    const auto& [name, value] = *it;
    if (name.size() == 6) continue;  // "SLURM_": no key
    if (out.entries.size() >= kMaxSlurmEntries || value.size() > kMaxSlurmValueBytes) {
      ++out.left_out;
      continue;
    }
    std::string key = AsciiLowercase(ToValidUtf8(std::string_view(name).substr(6)));
    if (!out.entries.emplace(std::move(key), ToValidUtf8(value)).second) ++out.left_out;  // SLURM_X, SLURM_x
  }
  return out;
}

ReadInputs ReadJobIdentityInputs(const HostPaths& paths, std::optional<long> pid,
                                 const std::vector<std::string>& own_environment,
                                 const std::vector<std::string>& own_argv) {
  ReadInputs out;
  JobIdentityInputs& inputs = out.inputs;
  std::string problem;
  const ProblemReporter remember = [&problem](const std::string& message) { problem = message; };
  const auto read = [&](const std::filesystem::path& path) {
    problem.clear();
    return ReadOptionalFile(path, remember);
  };
  if (pid) {
    const std::string process = std::to_string(*pid);
    const auto environ_file = paths.Proc(process + "/environ");
    if (auto text = read(environ_file)) {
      ParsedEnviron parsed = ParseEnviron(*text);
      inputs.environment = std::move(parsed.variables);
      if (parsed.left_out > 0) {
        out.notes.push_back(fmt::format("{}: {} entries past the first {} were not read",
                                        environ_file.string(), parsed.left_out, kMaxEnvironEntries));
      }
    } else {
      inputs.environment = EnvironmentFromStrings(own_environment);
      out.notes.push_back(fmt::format("{}: the job identity is taken from runmon's own environment instead",
                                      problem.empty() ? environ_file.string() + ": gone" : problem));
    }
    const auto cmdline_file = paths.Proc(process + "/cmdline");
    if (auto text = read(cmdline_file)) {
      inputs.argv = ParseCommandLine(*text);
    } else {
      inputs.argv = own_argv;
      if (!problem.empty()) out.notes.push_back(problem);
    }
    inputs.cgroup = read(paths.Proc(process + "/cgroup")).value_or("");
  } else {
    inputs.environment = EnvironmentFromStrings(own_environment);
    inputs.argv = own_argv;
    inputs.cgroup = read(paths.Proc("self/cgroup")).value_or("");
  }
  if (!problem.empty()) out.notes.push_back(problem);
  inputs.service_account_namespace =
      read(paths.Root("var/run/secrets/kubernetes.io/serviceaccount/namespace")).value_or("");
  if (!problem.empty()) out.notes.push_back(problem);
  return out;
}

}  // namespace runmon::cluster
