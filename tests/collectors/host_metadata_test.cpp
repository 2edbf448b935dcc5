// ProbeHostMetadata on fixture trees: W&B's wandb-metadata.json fields (cpu_count = distinct
// core_cpus_list / thread_siblings_list sets, cpu_count_logical = cpuinfo processors, memory.total and
// disk.{path}.total/used as decimal strings, slurm from SLURM_*) and runmon's additions under "runmon" (CPU
// model, OS name from os-release, scheduler identity, cgroup limits). Settings override the counts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using nlohmann::json;
using test::FixtureTree;

void WriteSmtHost(FixtureTree& tree) {
  // 4 logical CPUs, 2 cores with 2 hyper-threads each.
  tree.Write("sys/devices/system/cpu/online", "0-3\n");
  const char* siblings[] = {"0-1", "0-1", "2-3", "2-3"};
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i) {
    tree.Write("sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/core_cpus_list",
               std::string(siblings[i]) + "\n");
    tree.Write("sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/thread_siblings_list",
               std::string(siblings[i]) + "\n");
    cpuinfo += "processor\t: " + std::to_string(i) +
               "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
               "physical id\t: 0\ncore id\t\t: " +
               std::to_string(i / 2) + "\n\n";
  }
  // Not a CPU: must not be counted.
  tree.Write("sys/devices/system/cpu/cpufreq/policy0/scaling_driver", "acpi-cpufreq\n");
  tree.Write("proc/cpuinfo", cpuinfo);
  tree.Write("proc/meminfo", "MemTotal:       32768000 kB\nMemAvailable:   16384000 kB\n");
  tree.Write("etc/os-release", "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nID=ubuntu\n");
}

CollectorContext Context(const FixtureTree& tree, Settings settings = Settings{},
                         std::optional<long> pid = std::nullopt) {
  static const test::FakeClocks clocks(100, 100);
  auto ctx = test::FixtureContext(tree.paths(), pid, clocks, settings);
  ctx.stat_filesystem = [](const std::string& path) -> Result<FilesystemUsage> {
    if (path == "/") return FilesystemUsage{500107862016, 123456789012, 350000000000};
    return Error{path + ": not mounted"};
  };
  return ctx;
}

TEST(HostMetadata, SmtHostWithSchedulerEnvironment) {
  FixtureTree tree;
  WriteSmtHost(tree);
  const json meta = ProbeHostMetadata(
      Context(tree), {"SLURM_JOB_ID=42", "SLURM_PROCID=3", "SLURM_JOB_NAME=train=big", "RANK=1",
                      "LOCAL_RANK=0", "WORLD_SIZE=8", "PATH=/usr/bin", "SLURM_=x", "NOEQUALS"});
  EXPECT_EQ(meta.at("cpu_count"), 2);
  EXPECT_EQ(meta.at("cpu_count_logical"), 4);
  EXPECT_EQ(meta.at("memory"), json({{"total", "33554432000"}}));
  EXPECT_EQ(meta.at("disk"), json({{"/", {{"total", "500107862016"}, {"used", "123456789012"}}}}));
  EXPECT_EQ(meta.at("slurm"), json({{"job_id", "42"}, {"procid", "3"}, {"job_name", "train=big"}}));
  EXPECT_TRUE(meta.at("os").get<std::string>().starts_with("Linux-")) << meta["os"];
  EXPECT_FALSE(meta.contains("gpu_count"));
  EXPECT_FALSE(meta.contains("gpu"));
  const json& extra = meta.at("runmon");
  EXPECT_EQ(extra.at("cpuModel"), "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
  EXPECT_EQ(extra.at("osName"), "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(extra.at("scheduler"), json({{"rank", "1"},
                                         {"localRank", "0"},
                                         {"worldSize", "8"},
                                         {"slurmJobId", "42"},
                                         {"slurmProcId", "3"},
                                         {"slurmJobName", "train=big"}}));
  EXPECT_FALSE(extra.contains("cgroup"));
}

TEST(HostMetadata, ArmTopologyWithoutCoreCpusList) {
  // Older Arm kernels: thread_siblings_list only, cpuinfo without "model name" or physical/core ids.
  FixtureTree tree;
  tree.Write("sys/devices/system/cpu/online", "0-3\n");
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i) {
    tree.Write("sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/thread_siblings_list",
               std::to_string(i) + "\n");
    cpuinfo += "processor\t: " + std::to_string(i) + "\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\n\n";
  }
  cpuinfo += "Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
  tree.Write("proc/cpuinfo", cpuinfo);
  tree.Write("proc/meminfo", "MemTotal:        3884000 kB\n");
  const json meta = ProbeHostMetadata(Context(tree), {});
  EXPECT_EQ(meta.at("cpu_count"), 4);
  EXPECT_EQ(meta.at("cpu_count_logical"), 4);
  EXPECT_EQ(meta.at("runmon").at("cpuModel"), "BCM2835");
  EXPECT_FALSE(meta.contains("slurm"));
  EXPECT_FALSE(meta.at("runmon").contains("osName"));  // no etc/os-release
  EXPECT_FALSE(meta.at("runmon").contains("scheduler"));
}

TEST(HostMetadata, SettingsOverrideCountsAndGpu) {
  FixtureTree tree;
  WriteSmtHost(tree);
  Settings settings;
  settings.cpu_count = 16;
  settings.cpu_logical_count = 32;
  settings.gpu_count = 2;
  settings.gpu_type = "NVIDIA H100 80GB HBM3";
  settings.disk_paths = {"/", "/scratch"};
  const json meta = ProbeHostMetadata(Context(tree, settings), {});
  EXPECT_EQ(meta.at("cpu_count"), 16);
  EXPECT_EQ(meta.at("cpu_count_logical"), 32);
  EXPECT_EQ(meta.at("gpu_count"), 2);
  EXPECT_EQ(meta.at("gpu"), "NVIDIA H100 80GB HBM3");
  // /scratch cannot be read: left out, "/" still there.
  EXPECT_EQ(meta.at("disk").size(), 1u);
  EXPECT_TRUE(meta.at("disk").contains("/"));
}

TEST(HostMetadata, NoTopologyFallsBackToCpuinfoThenLogical) {
  FixtureTree tree;
  WriteSmtHost(tree);
  tree.Remove("sys/devices/system/cpu/cpu0").Remove("sys/devices/system/cpu/cpu1");
  tree.Remove("sys/devices/system/cpu/cpu2").Remove("sys/devices/system/cpu/cpu3");
  // cpuinfo's distinct (physical id, core id) pairs: 2.
  EXPECT_EQ(ProbeHostMetadata(Context(tree), {}).at("cpu_count"), 2);
  // Without them either: the logical count.
  tree.Write("proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n\nprocessor\t: 2\n");
  const json meta = ProbeHostMetadata(Context(tree), {});
  EXPECT_EQ(meta.at("cpu_count"), 3);
  EXPECT_EQ(meta.at("cpu_count_logical"), 3);
}

TEST(HostMetadata, ContainerCgroupLimits) {
  FixtureTree tree(test::HostFixture("container-overlay"));
  const json meta = ProbeHostMetadata(Context(tree, Settings{}, 1), {});
  EXPECT_EQ(meta.at("runmon").at("cgroup"), json({{"path", "/kubepods/burstable/pod1/ctr1"},
                                                  {"memoryLimitBytes", "1073741824"},
                                                  {"cpuLimit", 0.5}}));
  EXPECT_EQ(meta.at("runmon").at("osName"), "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(meta.at("memory").at("total"), "17179869184");
}

TEST(HostMetadata, CapturedVm) {
  FixtureTree tree(test::HostFixture("debian12-vm"));
  const json meta = ProbeHostMetadata(Context(tree, Settings{}, 7953), {});
  EXPECT_EQ(meta.at("cpu_count"), 2);
  EXPECT_EQ(meta.at("cpu_count_logical"), 2);
  EXPECT_EQ(meta.at("memory").at("total"), "25276059648");  // 24683652 kB
  EXPECT_EQ(meta.at("runmon").at("cpuModel"), "AMD EPYC");
  EXPECT_EQ(meta.at("runmon").at("osName"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_FALSE(meta.at("runmon").at("cgroup").contains("memoryLimitBytes"));
  EXPECT_FALSE(meta.at("runmon").at("cgroup").contains("cpuLimit"));
}

TEST(HostMetadata, ArmV6CpuinfoWithoutEntriesCountsFromSysfs) {
  // An old ARM kernel's cpuinfo names the CPU but lists no "processor : N" entries; neither
  // sys/devices/system/cpu/online nor /proc/stat is there, sys/devices/system/cpu/present is.
  FixtureTree tree;
  tree.Write("proc/cpuinfo",
             "Processor\t: ARMv6-compatible processor rev 7 (v6l)\nBogoMIPS\t: 697.95\n"
             "CPU implementer\t: 0x41\nCPU part\t: 0xb76\n\nHardware\t: BCM2708\n");
  tree.Write("sys/devices/system/cpu/present", "0\n");
  tree.Write("proc/meminfo", "MemTotal:         444532 kB\n");
  const json meta = ProbeHostMetadata(Context(tree), {});
  EXPECT_EQ(meta.at("cpu_count_logical"), 1);
  EXPECT_EQ(meta.at("cpu_count"), 1);
  EXPECT_EQ(meta.at("runmon").at("cpuModel"), "ARMv6-compatible processor rev 7 (v6l)");
}

TEST(HostMetadata, LoongArchModelName) {
  FixtureTree tree;
  tree.Write("sys/devices/system/cpu/online", "0-1\n");
  tree.Write("proc/cpuinfo",
             "system type\t\t: generic-loongson-machine\n\nprocessor\t\t: 0\nCPU Family\t\t: Loongson-64bit\n"
             "Model Name\t\t: Loongson-3A5000\n\nprocessor\t\t: 1\nCPU Family\t\t: Loongson-64bit\n"
             "Model Name\t\t: Loongson-3A5000\n\n");
  const json meta = ProbeHostMetadata(Context(tree), {});
  EXPECT_EQ(meta.at("cpu_count_logical"), 2);
  EXPECT_EQ(meta.at("runmon").at("cpuModel"), "Loongson-3A5000");
}

TEST(HostMetadata, NothingReadableLeavesTheFactsOut) {
  // A tree without any of the files: no count, memory or model is made up (none written as 0).
  FixtureTree tree;
  tree.Mkdir("proc").Mkdir("sys").Mkdir("etc");
  const json meta = ProbeHostMetadata(Context(tree), {});
  for (const char* key : {"cpu_count", "cpu_count_logical", "memory"}) {
    EXPECT_FALSE(meta.contains(key)) << key << ": " << meta.dump();
  }
  EXPECT_EQ(meta.at("runmon"), json::object());
}

TEST(HostMetadata, UnreadableFilesAreReportedByTheirPathUnderTheRoot) {
  FixtureTree tree;
  WriteSmtHost(tree);
  tree.Write("proc/cpuinfo", "garbage\n");
  tree.Write("proc/meminfo", "MemTotal: lots\n");
  std::vector<std::string> warnings;
  static const test::FakeClocks clocks(100, 100);
  const auto ctx = test::FixtureContext(tree.paths(), std::nullopt, clocks, Settings{},
                                        [&](const std::string& line) { warnings.push_back(line); });
  const json meta = ProbeHostMetadata(ctx, {});
  EXPECT_FALSE(meta.contains("memory"));
  EXPECT_FALSE(meta.at("runmon").contains("cpuModel"));
  EXPECT_EQ(meta.at("cpu_count_logical"), 4);  // sysfs online
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          tree.Path("proc/meminfo").string() + ": bad value",
                          tree.Path("proc/cpuinfo").string() + ": no processor entries and no CPU model"}));
}

TEST(HostMetadata, TopologyThatDoesNotCoverTheCpusIsNotUsed) {
  // partial-sysfs: sibling lists for 2 of the 8 CPUs; counting them gave 2 cores. cpuinfo's core ids say 4.
  FixtureTree tree(test::HostFixture("partial-sysfs"));
  const json meta = ProbeHostMetadata(Context(tree), {});
  EXPECT_EQ(meta.at("cpu_count"), 4);
  EXPECT_EQ(meta.at("cpu_count_logical"), 8);
}

}  // namespace
}  // namespace runmon
