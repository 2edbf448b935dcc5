// Kernel files that are not what the kernel makes: every file the collectors and the start-up probes read
// is replaced in turn, on a container fixture, by a FIFO without a writer (whose plain open would block for
// ever) and by a symlink to /dev/zero (endless zeros). Nothing hangs (a watchdog bounds each case), the
// broken file is reported by its path under the tree (at start-up through the context's warn, per tick in
// the collector's error), and every value whose sources are intact still arrives.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture_tree.hpp"
#include "support/watchdog.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

// A file the collectors read, and what may go missing when it is broken: sample keys, or "/json/pointer"s
// into the metadata. `reported`: whether its reader must name it (the process tree's readers skip what
// they cannot read, as they skip processes that are gone).
struct Source {
  const char* file;
  std::vector<std::string> lost;
  bool reported = true;
};

// Everything the cgroup detection yields.
const std::vector<std::string> kCgroupKeys = {"cgroup.memory.limitMB",           "cgroup.cpu.limit",
                                              "cgroup.memory.oomKills",          "/runmon/cgroup",
                                              "/runmon/cgroup/memoryLimitBytes", "/runmon/cgroup/cpuLimit"};

const std::vector<Source>& Sources() {
  static const std::vector<Source> sources = {
      {"proc/meminfo", {"/memory"}},
      {"proc/stat", {"cpu_percent"}},
      {"proc/net/dev", {"network.sent"}},
      {"proc/diskstats", {"disk.in"}},
      {"proc/self/mountinfo", {}},  // disk I/O falls back to the physical disks
      {"proc/self/statm", {"runmon.rssMB"}},
      {"proc/cpuinfo", {"/runmon/cpuModel"}},
      {"proc/1/cgroup", kCgroupKeys},
      {"proc/1/mountinfo", kCgroupKeys},
      {"proc/1/status", {}},
      {"sys/devices/system/cpu/online", {}},  // counted from proc/stat instead
      {"sys/devices/system/cpu/cpu0/topology/core_cpus_list", {}},
      {"sys/fs/cgroup/memory.max", {"cgroup.memory.limitMB", "/runmon/cgroup/memoryLimitBytes"}},
      {"sys/fs/cgroup/memory.current", {}},  // memory against the host instead
      {"sys/fs/cgroup/cpu.max", {"cgroup.cpu.limit", "/runmon/cgroup/cpuLimit"}},
      {"sys/fs/cgroup/cpu.stat", {}},
      {"sys/fs/cgroup/memory.events", {"cgroup.memory.oomKills"}},
      {"etc/os-release", {"/runmon/osName"}},
      {"proc/loadavg", {}, false},
      {"proc/1/stat", {"cpu"}, false},
      {"proc/1/statm", {}, false},
      {"proc/1/task/1/children", {}, false},
      {"proc/7/stat", {}, false},
  };
  return sources;
}

// What is checked in every case: sample keys and metadata pointers.
const std::vector<std::string> kChecked = {"cpu_percent",
                                           "memory_percent",
                                           "network.sent",
                                           "disk.in",
                                           "cgroup.memory.limitMB",
                                           "cgroup.cpu.limit",
                                           "cgroup.memory.oomKills",
                                           "runmon.rssMB",
                                           "cpu",
                                           "/memory",
                                           "/cpu_count_logical",
                                           "/cpu_count",
                                           "/runmon/cpuModel",
                                           "/runmon/osName",
                                           "/runmon/cgroup",
                                           "/runmon/cgroup/memoryLimitBytes",
                                           "/runmon/cgroup/cpuLimit"};

void WriteTree(FixtureTree& tree) {
  tree.Write("proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n\n");
  tree.Write("proc/loadavg", "0.10 0.20 0.30 2/100 7\n");
  tree.Write("sys/devices/system/cpu/cpu0/topology/core_cpus_list", "0\n");
}

enum class Breakage { kFifo, kDevZero };

void Break(FixtureTree& tree, const std::string& file, Breakage how) {
  const auto path = tree.Path(file);
  std::filesystem::remove(path);
  if (how == Breakage::kFifo) {
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  } else {
    std::filesystem::create_symlink("/dev/zero", path);
  }
}

struct Observed {
  std::vector<std::string> present;  // of kChecked
  std::string reports;               // warnings and collector errors, one per line
};

Observed CollectEverything(const FixtureTree& tree) {
  Observed observed;
  test::FakeClocks clocks(1000, 1000);
  const ProblemReporter warn = [&](const std::string& line) { observed.reports += line + "\n"; };
  const CollectorContext ctx = test::FixtureContext(tree.paths(), 1, clocks, Settings{}, warn);
  const nlohmann::json meta = ProbeHostMetadata(ctx, {});
  std::vector<std::unique_ptr<Collector>> collectors;
  collectors.push_back(MakeProcessTreeCollector(ctx));
  collectors.push_back(MakeHostCpuCollector(ctx));
  collectors.push_back(MakeMemoryCollector(ctx));
  collectors.push_back(MakeDiskIoCollector(ctx));
  collectors.push_back(MakeNetworkCollector(ctx));
  collectors.push_back(MakeCgroupCollector(ctx));
  collectors.push_back(MakeSelfCostCollector(ctx));
  std::set<std::string> keys;  // of either tick (rates and percentages need two readings that differ)
  for (uint64_t tick = 0; tick < 2; ++tick) {  // the second tick re-reads kept files (or retries opening)
    clocks.Advance(1);
    for (auto& collector : collectors) {
      const auto collected = test::CollectTick(*collector, tick);
      if (!collected.status.ok()) observed.reports += collected.status.error() + "\n";
      for (const auto& key : collected.Keys()) keys.insert(key);
    }
  }
  for (const auto& key : kChecked) {
    const bool present =
        key.front() == '/' ? meta.contains(nlohmann::json::json_pointer(key)) : keys.count(key) != 0;
    if (present) observed.present.push_back(key);
  }
  return observed;
}

TEST(BadSources, IntactTreeHasEveryCheckedValue) {
  FixtureTree tree(test::HostFixture("container-overlay"));
  WriteTree(tree);
  const Observed observed = CollectEverything(tree);
  EXPECT_EQ(observed.present, kChecked);
  EXPECT_EQ(observed.reports, "");
}

TEST(BadSources, FifoOrDeviceAtEachKernelFileIsReportedAndSkipped) {
  for (const Source& source : Sources()) {
    for (Breakage how : {Breakage::kFifo, Breakage::kDevZero}) {
      const std::string label =
          std::string(source.file) + (how == Breakage::kFifo ? " as a FIFO" : " as a link to /dev/zero");
      SCOPED_TRACE(label);
      FixtureTree tree(test::HostFixture("container-overlay"));
      WriteTree(tree);
      ASSERT_TRUE(tree.Exists(source.file));
      Break(tree, source.file, how);
      Observed observed;
      test::RunWithin(std::chrono::seconds(20), label, [&] { observed = CollectEverything(tree); });
      if (source.reported) {
        EXPECT_NE(observed.reports.find(tree.Path(source.file).string()), std::string::npos)
            << "not reported; reports:\n"
            << observed.reports;
      }
      for (const auto& key : kChecked) {
        const bool may_be_lost = std::find(source.lost.begin(), source.lost.end(), key) != source.lost.end();
        const bool present =
            std::find(observed.present.begin(), observed.present.end(), key) != observed.present.end();
        if (!may_be_lost) {
          EXPECT_TRUE(present) << key << " is missing; reports:\n" << observed.reports;
        } else if (source.reported) {
          EXPECT_FALSE(present) << key << " came from a broken source";
        }
      }
    }
  }
}

}  // namespace
}  // namespace runmon
