// Unit tests of cluster/job_identity.hpp: the environ and cmdline parsers (duplicates, missing NULs, bytes
// that are not UTF-8, a hostile number of entries), torchrun's flags (both spellings, both forms, Python's
// -m, wrappers before it, the training script's own flags after it), the pod UID in each cgroup layout
// (cgroupfs and systemd drivers, v1 and v2, kind's nesting, static pods), the value checks, the precedence
// between Slurm, TorchElastic, MPI, Kubernetes and the flags, hostile values, the metadata JSON (and that it
// fills the environment record's `job`), W&B's slurm map, and the reader on fixture trees (missing,
// unreadable and oversized files).
#include "cluster/job_identity.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/fixture_tree.hpp"
#include "host/file_reader.hpp"
#include "runlog/records.hpp"

namespace runmon::cluster {
namespace {

using nlohmann::json;
using test::FixtureTree;

constexpr std::string_view kUid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
constexpr std::string_view kUidUnderscores = "0a1b2c3d_4e5f_4a6b_8c7d_9e0f1a2b3c4d";

std::string Nul(std::initializer_list<std::string_view> entries, bool trailing = true) {
  std::string text;
  for (const auto entry : entries) {
    text += entry;
    text += '\0';
  }
  if (!trailing && !text.empty()) text.pop_back();
  return text;
}

DetectedIdentity Detect(const Environment& environment, std::vector<std::string> argv = {},
                        std::string cgroup = {}, std::string namespace_file = {},
                        JobIdentityFlags flags = {}) {
  JobIdentityInputs inputs;
  inputs.environment = environment;
  inputs.argv = std::move(argv);
  inputs.cgroup = std::move(cgroup);
  inputs.service_account_namespace = std::move(namespace_file);
  return DetectJobIdentity(inputs, flags);
}

bool AnyNoteHas(const DetectedIdentity& detected, std::string_view fragment) {
  for (const auto& note : detected.notes) {
    if (note.find(fragment) != std::string::npos) return true;
  }
  return false;
}

// --- /proc/PID/environ and cmdline

TEST(ParseEnviron, EntriesWithAndWithoutTheLastNul) {
  for (const bool trailing : {true, false}) {
    const auto parsed =
        ParseEnviron(Nul({"PATH=/usr/bin", "SLURM_JOB_ID=77", "EQ=a=b=c", "EMPTY="}, trailing));
    EXPECT_EQ(parsed.variables,
              (Environment{{"PATH", "/usr/bin"}, {"SLURM_JOB_ID", "77"}, {"EQ", "a=b=c"}, {"EMPTY", ""}}));
    EXPECT_EQ(parsed.duplicates, 0u);
    EXPECT_EQ(parsed.malformed, 0u);
  }
  EXPECT_TRUE(ParseEnviron("").variables.empty());
  EXPECT_TRUE(ParseEnviron(std::string(5, '\0')).variables.empty());  // empty entries are nothing
}

TEST(ParseEnviron, FirstOfTwoNamesWinsAsGetenvFindsIt) {
  const auto parsed = ParseEnviron(Nul({"RANK=1", "RANK=2", "OTHER=x", "RANK=3"}));
  EXPECT_EQ(parsed.variables.at("RANK"), "1");
  EXPECT_EQ(parsed.duplicates, 2u);
}

TEST(ParseEnviron, MalformedEntriesAndBytesThatAreNotUtf8) {
  const auto parsed = ParseEnviron(Nul({"NOEQUALS", "=value", "GOOD=\xff\xfe", "\xc3=latin"}));
  EXPECT_EQ(parsed.malformed, 2u);
  EXPECT_EQ(parsed.variables.at("GOOD"), "\xff\xfe");  // kept as bytes; checked where a value is used
  EXPECT_EQ(parsed.variables.at("\xc3"), "latin");
}

TEST(ParseEnviron, HugeEnvironIsBounded) {
  std::string text;
  for (size_t i = 0; i < kMaxEnvironEntries + 10; ++i) text += "V" + std::to_string(i) + "=x" + '\0';
  const auto parsed = ParseEnviron(text);
  EXPECT_EQ(parsed.variables.size(), kMaxEnvironEntries);
  EXPECT_EQ(parsed.left_out, 10u);
  // One entry of 8 MiB is one entry.
  const auto big = ParseEnviron("BIG=" + std::string(8 << 20, 'y'));
  EXPECT_EQ(big.variables.at("BIG").size(), size_t{8} << 20);
}

TEST(EnvironmentFromStrings, SameRules) {
  EXPECT_EQ(EnvironmentFromStrings({"A=1", "A=2", "B", "=x", "C=d=e"}),
            (Environment{{"A", "1"}, {"C", "d=e"}}));
  EXPECT_EQ(EnvironmentStrings(Environment{{"A", "1"}, {"B", ""}}), (std::vector<std::string>{"A=1", "B="}));
}

TEST(ParseCommandLine, Arguments) {
  EXPECT_EQ(ParseCommandLine(Nul({"torchrun", "--nnodes", "2", ""})),
            (std::vector<std::string>{"torchrun", "--nnodes", "2", ""}));
  EXPECT_EQ(ParseCommandLine(Nul({"python3", "-u"}, false)), (std::vector<std::string>{"python3", "-u"}));
  EXPECT_TRUE(ParseCommandLine("").empty());
}

// --- torchrun's flags

TEST(ParseLauncherArguments, TorchrunBothFormsAndSpellings) {
  auto args = ParseLauncherArguments({"torchrun", "--nnodes=4", "--nproc-per-node", "8", "--node-rank", "2",
                                      "--rdzv-id=job-42", "train.py", "--node-rank", "9", "--rdzv-id", "x"});
  EXPECT_TRUE(args.torchrun);
  EXPECT_EQ(args.node_rank, "2");  // the training script's own --node-rank is not torchrun's
  EXPECT_EQ(args.rdzv_id, "job-42");
  args = ParseLauncherArguments(
      {"/opt/conda/bin/torchrun", "--node_rank=3", "--rdzv_id", "j7", "--standalone", "-m", "pkg.train"});
  EXPECT_EQ(args.node_rank, "3");
  EXPECT_EQ(args.rdzv_id, "j7");
}

TEST(ParseLauncherArguments, PythonDashM) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"python", "-m", "torch.distributed.run", "--node-rank", "1", "t.py"},
           {"/usr/bin/python3", "-u", "-m", "torch.distributed.run", "--node-rank=1", "t.py"},
           {"python3.11", "-mtorch.distributed.run", "--node_rank", "1", "t.py"},
           {"python3", "-um", "torch.distributed.run", "--node-rank", "1"},
           {"python", "-X", "dev", "-W", "ignore", "-m", "torch.distributed.launch", "--node_rank=1", "t.py"},
           {"python", "-Xdev", "-m", "torch.distributed.run", "--node-rank", "1"}}) {
    const auto args = ParseLauncherArguments(argv);
    EXPECT_TRUE(args.torchrun) << argv[0] << " " << argv[1];
    EXPECT_EQ(args.node_rank, "1") << argv[0] << " " << argv[1];
  }
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"python", "train.py", "--node-rank", "3"},
           {"python", "-c", "import torch", "--node-rank", "3"},
           {"python", "-m", "mypkg", "torchrun", "--node-rank", "3"},
           {"python", "-m"},
           {"python"},
           {"pythonista", "-m", "torch.distributed.run", "--node-rank", "3"}}) {
    const auto args = ParseLauncherArguments(argv);
    EXPECT_FALSE(args.torchrun) << argv[0];
    EXPECT_FALSE(args.node_rank) << argv[0];
  }
}

TEST(ParseLauncherArguments, WrappersBeforeTorchrun) {
  auto args = ParseLauncherArguments({"srun", "--ntasks-per-node=1", "torchrun", "--node-rank", "5", "t.py"});
  EXPECT_TRUE(args.torchrun);
  EXPECT_EQ(args.node_rank, "5");
  args = ParseLauncherArguments({"env", "A=1", "uv", "run", "torchrun", "--rdzv-id", "r", "t.py"});
  EXPECT_EQ(args.rdzv_id, "r");
  EXPECT_FALSE(ParseLauncherArguments({"bash", "-c", "torchrun --node-rank 5 t.py"}).torchrun);
  EXPECT_FALSE(ParseLauncherArguments({}).torchrun);
}

TEST(ParseLauncherArguments, ArgparseRules) {
  // The last of two wins; "--" ends the options; a switch takes no value; an option at the end has none;
  // short options take their value attached or next.
  auto args = ParseLauncherArguments({"torchrun", "--node-rank", "1", "--node-rank=2", "t.py"});
  EXPECT_EQ(args.node_rank, "2");
  args = ParseLauncherArguments({"torchrun", "--", "--node-rank", "5"});
  EXPECT_FALSE(args.node_rank);
  args = ParseLauncherArguments({"torchrun", "--standalone", "--no-python", "--node-rank", "4", "t.py"});
  EXPECT_EQ(args.node_rank, "4");
  args = ParseLauncherArguments({"torchrun", "--run_path", "--virtual-local-rank", "--rdzv-id=z", "t.py"});
  EXPECT_EQ(args.rdzv_id, "z");
  args = ParseLauncherArguments({"torchrun", "-r3", "-t", "3", "--node-rank", "6", "t.py"});
  EXPECT_EQ(args.node_rank, "6");
  args = ParseLauncherArguments({"torchrun", "--node-rank"});
  EXPECT_TRUE(args.torchrun);
  EXPECT_FALSE(args.node_rank);
  args = ParseLauncherArguments({"torchrun", "--node-rank=", "t.py"});
  EXPECT_EQ(args.node_rank, "");  // given empty: the detection treats it as not given
}

// --- the pod UID in a cgroup path

TEST(PodUidFromCgroupPath, CgroupfsDriver) {
  const std::string uid(kUid);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods/besteffort/pod" + uid + "/4f2a9c"), uid);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods/burstable/pod" + uid + "/4f2a9c"), uid);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods/pod" + uid + "/4f2a9c"), uid);  // guaranteed: no QoS level
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods/besteffort/pod" + uid), uid);   // the pod's own cgroup
}

TEST(PodUidFromCgroupPath, SystemdDriver) {
  const std::string under(kUidUnderscores);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + under +
                                 ".slice/cri-containerd-4f2a9c.scope"),
            kUid);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + under +
                                 ".slice/docker-4f2a9c.scope"),
            kUid);
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods.slice/kubepods-pod" + under + ".slice/crio-4f2a9c.scope"), kUid);
  // kind and other nested kubelets.
  EXPECT_EQ(PodUidFromCgroupPath("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
                                 "kubelet-kubepods-besteffort-pod" +
                                 under + ".slice/cri-containerd-4f2a9c.scope"),
            kUid);
  // A static pod's UID is its config hash, 32 hex digits.
  EXPECT_EQ(PodUidFromCgroupPath("/kubepods.slice/kubepods-burstable.slice/"
                                 "kubepods-burstable-pod7d2a1f0b3c4e5d6f7a8b9c0d1e2f3a4b.slice/x.scope"),
            "7d2a1f0b3c4e5d6f7a8b9c0d1e2f3a4b");
}

TEST(PodUidFromCgroupPath, NotAPod) {
  const std::string uid(kUid);
  for (const std::string& path : std::vector<std::string>{
           "/", "", "/system.slice/docker-4f2a9c.scope", "/user.slice/pod" + uid, "/kubepods/besteffort",
           "/kubepods.slice/kubepods-burstable.slice", std::string("/kubepods/besteffort/podnot-a-uid/x"),
           "/kubepods/besteffort/pod" + uid.substr(1) + "/x", "/kubepods/besteffort/pod" + uid + "0/x",
           std::string("/kubepods.slice/kubepods-pod.slice"),
           "/kubepods/besteffort/pod" + std::string(36, '-'), std::string(100000, '/'),
           // a slice's UID half escaped: systemd escapes every '-', so this names no pod
           std::string("/kubepods.slice/kubepods-pod12345678_1234-1234_1234_123456789012.slice"),
           "/kubepods.slice/kubepods-pod" + uid + ".slice"}) {
    EXPECT_EQ(PodUidFromCgroupPath(path), std::nullopt) << path.substr(0, 80);
  }
}

TEST(PodUidFromCgroupFile, V1V2AndHybrid) {
  const std::string uid(kUid);
  const std::string v1 = "12:memory:/kubepods/burstable/pod" + uid +
                         "/c1\n11:cpu,cpuacct:/kubepods/burstable/pod" + uid +
                         "/c1\n1:name=systemd:/kubepods/burstable/pod" + uid + "/c1\n";
  EXPECT_EQ(PodUidFromCgroupFile(v1), uid);
  EXPECT_EQ(PodUidFromCgroupFile("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                                 std::string(kUidUnderscores) + ".slice/cri-containerd-abc.scope\n"),
            uid);
  // The v2 line wins over the v1 lines, wherever it is.
  const std::string other = "11111111-2222-4333-8444-555555555555";
  EXPECT_EQ(PodUidFromCgroupFile("4:memory:/kubepods/pod" + other + "/c\n0::/kubepods/pod" + uid + "/c\n"),
            uid);
  // A v2 line without a pod (a container's own namespaced view) leaves the v1 lines.
  EXPECT_EQ(PodUidFromCgroupFile("0::/\n4:memory:/kubepods/pod" + other + "/c\n"), other);
  EXPECT_EQ(PodUidFromCgroupFile("0::/\n"), std::nullopt);
  EXPECT_EQ(PodUidFromCgroupFile(""), std::nullopt);
  EXPECT_EQ(PodUidFromCgroupFile("garbage\nno colons here /kubepods/pod" + uid + "\n:\n::\n"), std::nullopt);
  EXPECT_EQ(PodUidFromCgroupFile("0::/kubepods/pod" + uid), uid);  // no newline at the end
}

// --- value checks

TEST(Validate, JobId) {
  EXPECT_EQ(*ValidateJobId("77"), "77");
  EXPECT_EQ(*ValidateJobId("train run #3 (a/b)"), "train run #3 (a/b)");
  EXPECT_TRUE(ValidateJobId(std::string(kMaxJobIdBytes, 'j')).ok());
  EXPECT_FALSE(ValidateJobId(std::string(kMaxJobIdBytes + 1, 'j')).ok());
  for (const std::string& bad :
       {std::string(""), std::string("a\nb"), std::string("tab\t"), std::string("caf\xc3\xa9"),
        std::string("nul\0x", 5), std::string("del\x7f")}) {
    EXPECT_FALSE(ValidateJobId(bad).ok()) << bad;
  }
}

TEST(Validate, Rank) {
  EXPECT_EQ(*ValidateRank("0"), "0");
  EXPECT_EQ(*ValidateRank("007"), "7");
  EXPECT_EQ(*ValidateRank("999999999"), "999999999");
  for (const std::string_view bad : {"1000000000", "-1", "+1", " 1", "1 ", "1.0", "0x10", "abc", "",
                                     "18446744073709551616", "99999999999999999999999"}) {
    const auto result = ValidateRank(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_NE(result.error().find("non-negative integer"), std::string::npos);
  }
}

TEST(Validate, Name) {
  EXPECT_EQ(*ValidateName("学習-run"), "学習-run");
  EXPECT_TRUE(ValidateName(std::string(kMaxNameBytes, 'n')).ok());
  EXPECT_FALSE(ValidateName(std::string(kMaxNameBytes + 1, 'n')).ok());
  EXPECT_FALSE(ValidateName("bad\xff").ok());
  EXPECT_FALSE(ValidateName("two\nlines").ok());
  EXPECT_FALSE(ValidateName("").ok());
}

// --- detection and precedence

TEST(DetectJobIdentity, Slurm) {
  const auto detected = Detect({{"SLURM_JOB_ID", "77"},
                                {"SLURM_NODEID", "2"},
                                {"SLURM_PROCID", "5"},
                                {"SLURM_LOCALID", "1"},
                                {"SLURM_NTASKS", "16"},
                                {"SLURM_JOB_NAME", "pretrain"}});
  const JobIdentity& job = detected.job;
  EXPECT_EQ(job.job_id, "77");
  EXPECT_EQ(job.launcher, "slurm");
  EXPECT_EQ(job.node_rank, "2");
  EXPECT_EQ(job.job_name, "pretrain");
  EXPECT_EQ(job.rank, "5");
  EXPECT_EQ(job.local_rank, "1");
  EXPECT_EQ(job.world_size, "16");
  EXPECT_TRUE(job.kubernetes.empty());
  EXPECT_TRUE(detected.notes.empty());
  EXPECT_EQ(Detect({{"SLURM_JOBID", "78"}}).job.job_id, "78");  // the older spelling
}

TEST(DetectJobIdentity, TorchElasticWorker) {
  const auto job = Detect({{"TORCHELASTIC_RUN_ID", "rdzv-9"},
                           {"GROUP_RANK", "3"},
                           {"RANK", "25"},
                           {"LOCAL_RANK", "1"},
                           {"WORLD_SIZE", "32"}})
                       .job;
  EXPECT_EQ(job.job_id, "rdzv-9");
  EXPECT_EQ(job.launcher, "torchelastic");
  EXPECT_EQ(job.node_rank, "3");
  EXPECT_EQ(job.rank, "25");
  EXPECT_EQ(job.local_rank, "1");
  EXPECT_EQ(job.world_size, "32");
}

TEST(DetectJobIdentity, TorchrunWrapperIsIdentifiedByItsFlags) {
  // Kubeflow's RANK in the wrapper's environment is the pod's index, not a rank of the wrapper's.
  const auto job = Detect({{"RANK", "4"}, {"WORLD_SIZE", "8"}},
                          {"torchrun", "--nnodes=8", "--node-rank=4", "--rdzv-id", "job-5", "train.py"})
                       .job;
  EXPECT_EQ(job.job_id, "job-5");
  EXPECT_EQ(job.launcher, "torchelastic");
  EXPECT_EQ(job.node_rank, "4");
  EXPECT_EQ(job.rank, "");
  EXPECT_EQ(job.world_size, "");
  // Without flags, torchrun's environment defaults (PET_*) say the same.
  const auto pet = Detect({{"PET_NODE_RANK", "6"}, {"PET_RDZV_ID", "job-6"}}, {"torchrun", "train.py"}).job;
  EXPECT_EQ(pet.job_id, "job-6");
  EXPECT_EQ(pet.node_rank, "6");
}

TEST(DetectJobIdentity, NoneIsTorchrunsDefaultAndNoId) {
  auto detected = Detect({{"TORCHELASTIC_RUN_ID", "none"}}, {"torchrun", "--rdzv-id=none", "t.py"});
  EXPECT_EQ(detected.job.job_id, "");
  EXPECT_EQ(detected.job.launcher, "");
  EXPECT_TRUE(detected.notes.empty());
  // A flag saying "none" means it.
  detected = Detect({}, {}, {}, {}, {.job_id = "none", .node_rank = {}});
  EXPECT_EQ(detected.job.job_id, "none");
  EXPECT_EQ(detected.job.launcher, "flag");
}

TEST(DetectJobIdentity, Mpi) {
  auto job = Detect({{"OMPI_COMM_WORLD_RANK", "3"},
                     {"OMPI_COMM_WORLD_SIZE", "8"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                     {"OMPI_COMM_WORLD_NODE_RANK", "1"}})
                 .job;
  EXPECT_EQ(job.job_id, "");  // no job id, no node index
  EXPECT_EQ(job.node_rank, "");
  EXPECT_EQ(job.rank, "3");
  EXPECT_EQ(job.local_rank, "1");
  EXPECT_EQ(job.world_size, "8");
  job = Detect({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}}).job;  // MPICH's Hydra
  EXPECT_EQ(job.rank, "2");
  EXPECT_EQ(job.world_size, "4");
  EXPECT_EQ(job.local_rank, "0");
  job = Detect({{"PMIX_NAMESPACE", "prterun-node1-4242@1"}, {"PMIX_RANK", "7"}}).job;
  EXPECT_EQ(job.job_id, "prterun-node1-4242@1");
  EXPECT_EQ(job.launcher, "mpi");
  EXPECT_EQ(job.rank, "7");
}

TEST(DetectJobIdentity, KubernetesFromEachCgroupLayout) {
  const std::string uid(kUid);
  const std::string under(kUidUnderscores);
  for (const std::string& cgroup :
       {"12:memory:/kubepods/besteffort/pod" + uid + "/c1\n1:name=systemd:/kubepods/besteffort/pod" + uid +
            "/c1\n",
        "0::/kubepods/burstable/pod" + uid + "/c1\n",
        "5:memory:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + under +
            ".slice/cri-x.scope\n",
        "0::/kubepods.slice/kubepods-pod" + under + ".slice/cri-containerd-x.scope\n"}) {
    const auto detected =
        Detect({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"HOSTNAME", "trainer-0"}}, {}, cgroup, "team-a");
    const KubernetesIdentity& kube = detected.job.kubernetes;
    EXPECT_EQ(kube.pod_uid, uid) << cgroup;
    EXPECT_EQ(kube.pod, "trainer-0");
    EXPECT_EQ(kube.namespace_name, "team-a");
    EXPECT_EQ(kube.service_host, "10.96.0.1");
    EXPECT_EQ(detected.job.job_id, "");  // Kubernetes hands a container no job id
    EXPECT_EQ(detected.job.launcher, "");
  }
}

TEST(DetectJobIdentity, KubernetesDownwardApiVariablesWin) {
  const std::string other = "11111111-2222-4333-8444-555555555555";
  const auto kube = Detect({{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                            {"HOSTNAME", "h"},
                            {"POD_NAME", "p-0"},
                            {"POD_NAMESPACE", "ns"},
                            {"POD_UID", other}},
                           {}, "0::/kubepods/pod" + std::string(kUid) + "/c\n", "file-ns\n")
                        .job.kubernetes;
  EXPECT_EQ(kube.pod, "p-0");
  EXPECT_EQ(kube.namespace_name, "ns");
  EXPECT_EQ(kube.pod_uid, other);
  // The namespace file as the kubelet writes it, or with a newline added by hand.
  EXPECT_EQ(Detect({{"KUBERNETES_SERVICE_HOST", "h"}}, {}, {}, "ml\r\n").job.kubernetes.namespace_name, "ml");
}

TEST(DetectJobIdentity, KubernetesOnlyInAPod) {
  // HOSTNAME and a namespace file alone (docker, a login shell) are no pod.
  EXPECT_TRUE(
      Detect({{"HOSTNAME", "box"}, {"POD_NAME", "p"}}, {}, "0::/user.slice\n", "ns").job.kubernetes.empty());
  // A pod's cgroup is, even without the service variables (as --pid on the host sees a pod's process).
  const auto kube =
      Detect({{"HOSTNAME", "p-1"}}, {}, "0::/kubepods/besteffort/pod" + std::string(kUid) + "/c\n")
          .job.kubernetes;
  EXPECT_EQ(kube.pod_uid, kUid);
  EXPECT_EQ(kube.pod, "p-1");
  EXPECT_EQ(kube.service_host, "");
}

TEST(DetectJobIdentity, PrecedenceOfJobId) {
  const Environment all = {{"SLURM_JOB_ID", "slurm-1"},
                           {"TORCHELASTIC_RUN_ID", "te-1"},
                           {"PET_RDZV_ID", "pet-1"},
                           {"PMIX_NAMESPACE", "mpi-1"}};
  const std::vector<std::string> argv = {"torchrun", "--rdzv-id=arg-1", "t.py"};
  const JobIdentityFlags flag = {.job_id = "flag-1", .node_rank = {}};
  EXPECT_EQ(Detect(all, argv, {}, {}, flag).job.launcher, "flag");
  EXPECT_EQ(Detect(all, argv, {}, {}, flag).job.job_id, "flag-1");
  auto env = all;
  EXPECT_EQ(Detect(env, argv).job.job_id, "slurm-1");
  env.erase("SLURM_JOB_ID");
  EXPECT_EQ(Detect(env, argv).job.job_id, "te-1");
  env.erase("TORCHELASTIC_RUN_ID");
  EXPECT_EQ(Detect(env, argv).job.job_id, "arg-1");
  EXPECT_EQ(Detect(env, {}).job.job_id, "pet-1");
  env.erase("PET_RDZV_ID");
  EXPECT_EQ(Detect(env, {}).job.job_id, "mpi-1");
  EXPECT_EQ(Detect(env, {}).job.launcher, "mpi");
}

TEST(DetectJobIdentity, PrecedenceOfNodeRank) {
  Environment env = {{"SLURM_NODEID", "1"}, {"GROUP_RANK", "2"}, {"PET_NODE_RANK", "4"}};
  const std::vector<std::string> argv = {"torchrun", "--node-rank", "3", "t.py"};
  EXPECT_EQ(Detect(env, argv, {}, {}, {.job_id = {}, .node_rank = "9"}).job.node_rank, "9");
  EXPECT_EQ(Detect(env, argv).job.node_rank, "1");
  env.erase("SLURM_NODEID");
  EXPECT_EQ(Detect(env, argv).job.node_rank, "2");
  env.erase("GROUP_RANK");
  EXPECT_EQ(Detect(env, argv).job.node_rank, "3");
  EXPECT_EQ(Detect(env, {}).job.node_rank, "4");
  EXPECT_EQ(Detect({}, {}).job.node_rank, "");
  // The flags never set the launcher of a job id found elsewhere.
  EXPECT_EQ(Detect({{"SLURM_JOB_ID", "5"}}, {}, {}, {}, {.job_id = {}, .node_rank = "0"}).job.launcher,
            "slurm");
}

TEST(DetectJobIdentity, HostileValuesAreDroppedAndSaid) {
  const auto detected = Detect({{"SLURM_JOB_ID", "77\n# HELP fake"},
                                {"TORCHELASTIC_RUN_ID", "te-2"},
                                {"SLURM_NODEID", "abc"},
                                {"GROUP_RANK", "-1"},
                                {"PET_NODE_RANK", "5"},
                                {"SLURM_JOB_NAME", "bad\xff"},
                                {"RANK", std::string(10000, '9')},
                                {"LOCAL_RANK", "2"}});
  const JobIdentity& job = detected.job;
  EXPECT_EQ(job.job_id, "te-2");  // the next source
  EXPECT_EQ(job.launcher, "torchelastic");
  EXPECT_EQ(job.node_rank, "5");
  EXPECT_EQ(job.job_name, "");
  EXPECT_EQ(job.rank, "");
  EXPECT_EQ(job.local_rank, "2");
  EXPECT_EQ(detected.notes.size(), 5u);
  EXPECT_TRUE(AnyNoteHas(detected, "SLURM_JOB_ID '77?# HELP fake' is not printable ASCII"));
  EXPECT_TRUE(AnyNoteHas(detected, "SLURM_NODEID 'abc' is not a non-negative integer"));
  EXPECT_TRUE(AnyNoteHas(detected, "GROUP_RANK '-1'"));
  EXPECT_TRUE(AnyNoteHas(detected, "SLURM_JOB_NAME 'bad?' is not valid UTF-8"));
  for (const auto& note : detected.notes)
    EXPECT_LT(note.size(), 200u) << note;  // a huge value is not repeated
}

TEST(DetectJobIdentity, EmptyValuesAreUnset) {
  const auto detected =
      Detect({{"SLURM_JOB_ID", ""}, {"SLURM_NODEID", ""}, {"RANK", ""}, {"GROUP_RANK", "1"}});
  EXPECT_EQ(detected.job.job_id, "");
  EXPECT_EQ(detected.job.node_rank, "1");
  EXPECT_TRUE(detected.notes.empty());
  EXPECT_TRUE(Detect({}).job.empty());
}

// --- metadata

TEST(JobIdentityJson, ProtobufJsonNames) {
  JobIdentity job;
  EXPECT_EQ(JobIdentityJson(job), json::object());
  job = {
      .job_id = "77",
      .node_rank = "2",
      .launcher = "slurm",
      .job_name = "n",
      .rank = "5",
      .local_rank = "1",
      .world_size = "16",
      .kubernetes = {.namespace_name = "ns", .pod = "p", .pod_uid = std::string(kUid), .service_host = "h"}};
  const json expected = {
      {"jobId", "77"},
      {"nodeRank", "2"},
      {"launcher", "slurm"},
      {"jobName", "n"},
      {"rank", "5"},
      {"localRank", "1"},
      {"worldSize", "16"},
      {"kubernetes", {{"namespace", "ns"}, {"pod", "p"}, {"podUid", kUid}, {"serviceHost", "h"}}}};
  EXPECT_EQ(JobIdentityJson(job), expected);
  // The names are the environment record's: field 150 `job` is filled from them, none ignored.
  auto record = runlog::MakeEnvironmentRecord(json{{"job", JobIdentityJson(job)}}, "w");
  ASSERT_TRUE(record.ok()) << record.error();
  const auto& filled = record->environment().job();
  EXPECT_EQ(filled.job_id(), "77");
  EXPECT_EQ(filled.node_rank(), "2");
  EXPECT_EQ(filled.launcher(), "slurm");
  EXPECT_EQ(filled.job_name(), "n");
  EXPECT_EQ(filled.rank(), "5");
  EXPECT_EQ(filled.local_rank(), "1");
  EXPECT_EQ(filled.world_size(), "16");
  EXPECT_EQ(filled.kubernetes().namespace_(), "ns");
  EXPECT_EQ(filled.kubernetes().pod(), "p");
  EXPECT_EQ(filled.kubernetes().pod_uid(), kUid);
  EXPECT_EQ(filled.kubernetes().service_host(), "h");
  // Unset fields stay out.
  EXPECT_EQ(JobIdentityJson({.job_id = {}, .node_rank = "3"}), (json{{"nodeRank", "3"}}));
}

TEST(SlurmVariables, WandbsRule) {
  const auto slurm = SlurmVariables({{"SLURM_JOB_ID", "77"},
                                     {"SLURM_NODEID", "2"},
                                     {"SLURM_Job_Name", "x"},
                                     {"SLURM_", "bare"},
                                     {"SLURMX", "no"},
                                     {"PATH", "/bin"},
                                     {"SLURM_BAD", "\xff"},
                                     {"SLURM_JOB_NAME", "upper"}});
  // SLURM_JOB_NAME and SLURM_Job_Name are one key: the first in name order (upper case first) is kept.
  EXPECT_EQ(slurm.entries,
            (std::map<std::string, std::string>{
                {"job_id", "77"}, {"nodeid", "2"}, {"job_name", "upper"}, {"bad", "\xef\xbf\xbd"}}));
  EXPECT_EQ(slurm.left_out, 1u);
  EXPECT_TRUE(SlurmVariables({}).entries.empty());
}

TEST(SlurmVariables, Bounded) {
  Environment environment;
  for (size_t i = 0; i < kMaxSlurmEntries + 3; ++i) environment["SLURM_V" + std::to_string(10000 + i)] = "v";
  environment["SLURM_A_BIG"] = std::string(kMaxSlurmValueBytes + 1, 'b');
  environment["SLURM_A_FITS"] = std::string(kMaxSlurmValueBytes, 'b');
  const auto slurm = SlurmVariables(environment);
  EXPECT_EQ(slurm.entries.size(), kMaxSlurmEntries);
  EXPECT_EQ(slurm.entries.count("a_big"), 0u);
  EXPECT_EQ(slurm.entries.at("a_fits").size(), kMaxSlurmValueBytes);
  EXPECT_EQ(slurm.left_out, 5u);  // the big value, and four past the bound (A_FITS took one place)
}

// --- the reader, on fixture trees

TEST(ReadJobIdentityInputs, AttachedProcess) {
  FixtureTree tree;
  tree.Write("proc/4242/environ", Nul({"SLURM_JOB_ID=77", "SLURM_NODEID=2", "SLURM_JOB_ID=dup"}));
  tree.Write("proc/4242/cmdline", Nul({"torchrun", "--node-rank", "2", "t.py"}));
  tree.Write("proc/4242/cgroup", "0::/kubepods/pod" + std::string(kUid) + "/c\n");
  tree.Write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "team-a");
  const auto read = ReadJobIdentityInputs(tree.paths(), 4242, {"SLURM_JOB_ID=own"}, {"own"});
  EXPECT_TRUE(read.notes.empty());
  EXPECT_EQ(read.inputs.environment, (Environment{{"SLURM_JOB_ID", "77"}, {"SLURM_NODEID", "2"}}));
  EXPECT_EQ(read.inputs.argv, (std::vector<std::string>{"torchrun", "--node-rank", "2", "t.py"}));
  EXPECT_EQ(PodUidFromCgroupFile(read.inputs.cgroup), kUid);
  EXPECT_EQ(read.inputs.service_account_namespace, "team-a");
}

TEST(ReadJobIdentityInputs, UnreadableEnvironFallsBackToRunmonsOwnAndSaysSo) {
  FixtureTree tree;
  // A directory where the file should be cannot be read (runmon refuses anything but a regular file), as
  // another user's environ cannot (the tests may run as root, whom permissions do not stop).
  tree.Mkdir("proc/4242/environ");
  tree.Write("proc/4242/cmdline", Nul({"python", "t.py"}));
  const auto read = ReadJobIdentityInputs(tree.paths(), 4242, {"SLURM_JOB_ID=own"}, {});
  EXPECT_EQ(read.inputs.environment, (Environment{{"SLURM_JOB_ID", "own"}}));
  ASSERT_EQ(read.notes.size(), 1u);
  EXPECT_NE(read.notes[0].find("proc/4242/environ"), std::string::npos) << read.notes[0];
  EXPECT_NE(read.notes[0].find("runmon's own environment"), std::string::npos) << read.notes[0];
  EXPECT_EQ(read.inputs.argv, (std::vector<std::string>{"python", "t.py"}));
}

TEST(ReadJobIdentityInputs, MissingFilesOfAGoneProcess) {
  FixtureTree tree;
  const auto read = ReadJobIdentityInputs(tree.paths(), 4242, {"RANK=1"}, {});
  EXPECT_EQ(read.inputs.environment, (Environment{{"RANK", "1"}}));
  ASSERT_EQ(read.notes.size(), 1u);  // the environ; a missing cgroup or namespace file is no news
  EXPECT_NE(read.notes[0].find("gone"), std::string::npos) << read.notes[0];
  EXPECT_TRUE(read.inputs.cgroup.empty());
  EXPECT_TRUE(read.inputs.service_account_namespace.empty());
}

TEST(ReadJobIdentityInputs, HugeEnviron) {
  FixtureTree tree;
  // Past the file reader's bound (16 MiB; the kernel's own for arguments and environment is 6 MiB).
  tree.Write("proc/7/environ", "X=" + std::string(kMaxFileBytes + 1, 'x'));
  auto read = ReadJobIdentityInputs(tree.paths(), 7, {"OWN=1"}, {});
  EXPECT_EQ(read.inputs.environment, (Environment{{"OWN", "1"}}));
  ASSERT_FALSE(read.notes.empty());
  EXPECT_NE(read.notes[0].find("larger than"), std::string::npos) << read.notes[0];
  // Within the bound but with too many entries: the first ones, and a note.
  std::string many = "SLURM_JOB_ID=5";
  many += '\0';
  for (size_t i = 0; i < kMaxEnvironEntries + 1; ++i) many += "V" + std::to_string(i) + "=1" + '\0';
  tree.Write("proc/7/environ", many);
  read = ReadJobIdentityInputs(tree.paths(), 7, {}, {});
  EXPECT_EQ(read.inputs.environment.at("SLURM_JOB_ID"), "5");
  ASSERT_EQ(read.notes.size(), 1u);
  EXPECT_NE(read.notes[0].find("were not read"), std::string::npos) << read.notes[0];
}

TEST(ReadJobIdentityInputs, TheCommandRunmonStarts) {
  FixtureTree tree;
  tree.Write("proc/self/cgroup", "0::/kubepods/besteffort/pod" + std::string(kUid) + "/c\n");
  tree.Write("proc/self/environ", "IGNORED=1");  // runmon's environment is given, not read
  const auto read =
      ReadJobIdentityInputs(tree.paths(), std::nullopt, {"SLURM_JOB_ID=9", "SLURM_JOB_ID=10"}, {"torchrun"});
  EXPECT_TRUE(read.notes.empty());
  EXPECT_EQ(read.inputs.environment, (Environment{{"SLURM_JOB_ID", "9"}}));
  EXPECT_EQ(read.inputs.argv, (std::vector<std::string>{"torchrun"}));
  EXPECT_EQ(PodUidFromCgroupFile(read.inputs.cgroup), kUid);
}

TEST(ReadJobIdentityInputs, EndToEndOnAFixture) {
  FixtureTree tree;
  tree.Write("proc/99/environ", Nul({"KUBERNETES_SERVICE_HOST=10.96.0.1", "HOSTNAME=trainer-1",
                                     "PET_NODE_RANK=1", "LOCAL_RANK=0"}));
  tree.Write("proc/99/cmdline",
             Nul({"/usr/bin/python3", "-m", "torch.distributed.run", "--rdzv-id=ft-3", "t.py"}));
  tree.Write("proc/99/cgroup", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                                   std::string(kUidUnderscores) + ".slice/cri-containerd-1.scope\n");
  tree.Write("var/run/secrets/kubernetes.io/serviceaccount/namespace", "research");
  const auto read = ReadJobIdentityInputs(tree.paths(), 99, {}, {});
  const auto detected = DetectJobIdentity(read.inputs, {});
  EXPECT_EQ(JobIdentityJson(detected.job), (json{{"jobId", "ft-3"},
                                                 {"nodeRank", "1"},
                                                 {"launcher", "torchelastic"},
                                                 {"kubernetes",
                                                  {{"namespace", "research"},
                                                   {"pod", "trainer-1"},
                                                   {"podUid", kUid},
                                                   {"serviceHost", "10.96.0.1"}}}}));
}

}  // namespace
}  // namespace runmon::cluster
