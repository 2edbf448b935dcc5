// The built-in collector list run by the sampler on fixture trees: on the captured VM every host and
// process key of metrics.md A.1/A.3 is present in one sample; on a tree with malformed files (garbage
// meminfo, a truncated diskstats line) the collectors reading them fail visibly while the others' values
// still arrive in the same sample.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/builtin.hpp"
#include "fixture_tree.hpp"
#include "sampler/sampler.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

struct SamplerRun {
  std::vector<Sample> samples;
  std::vector<std::string> logs;
  std::vector<CollectorState> states;
};

// One sample from BuiltinCollectors(ctx), waiting for every lane.
SamplerRun SampleOnce(const CollectorContext& ctx) {
  SamplerRun run;
  std::mutex mutex;
  SamplerOptions options;
  options.interval_seconds = 0.1;
  options.max_samples = 1;
  options.lane_timeout_seconds = 10;
  Sampler sampler(
      BuiltinCollectors(ctx), options,
      [&](const Sample& s) {
        std::lock_guard guard(mutex);
        run.samples.push_back(s);
      },
      [&](const std::string& line) {
        std::lock_guard guard(mutex);
        run.logs.push_back(line);
      });
  sampler.Run();
  run.states = sampler.States();
  return run;
}

const CollectorState* State(const SamplerRun& run, std::string_view name) {
  for (const auto& s : run.states) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

FilesystemStatFunction FakeRoot() {
  return [](const std::string& path) -> Result<FilesystemUsage> {
    if (path == "/") return FilesystemUsage{uint64_t{100} << 30, uint64_t{25} << 30, uint64_t{75} << 30};
    return Error{path + ": not mounted"};
  };
}

TEST(BuiltinCollectors, CapturedVmHasEveryHostKey) {
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto ctx = test::FixtureContext(tree.paths(), 7953, clocks);
  ctx.stat_filesystem = FakeRoot();
  const SamplerRun run = SampleOnce(ctx);
  ASSERT_EQ(run.samples.size(), 1u);
  const MetricBatch& m = run.samples[0].metrics;
  for (const char* key :
       {"cpu", "proc.cpu.threads", "proc.memory.rssMB", "proc.memory.percent", "memory_percent",
        "proc.memory.availableMB", "cpu_percent", "disk.vda.in", "disk.vda.out", "disk.in", "disk.out",
        "network.sent", "network.recv", "disk./.usagePercent", "disk./.usageGB", "cgroup.memory.oomKills",
        "runmon.rssMB", "runmon.sampleMillis"}) {
    EXPECT_NE(m.Find(key), nullptr) << key;
  }
  EXPECT_DOUBLE_EQ(m.Find("proc.cpu.threads")->value, 9.0);
  EXPECT_DOUBLE_EQ(m.Find("disk./.usagePercent")->value, 25.0);
  EXPECT_DOUBLE_EQ(m.Find("runmon.rssMB")->value, 854.0 / 256.0);  // proc/self/statm: 854 pages
  for (const auto& state : run.states) {
    EXPECT_EQ(state.health, CollectorHealth::kOk) << state.name << ": " << state.message;
  }
  EXPECT_TRUE(run.logs.empty()) << run.logs.front();
}

TEST(BuiltinCollectors, MalformedFilesFailTheirCollectorsOnly) {
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 6100, clocks);
  ctx.stat_filesystem = FakeRoot();
  const SamplerRun run = SampleOnce(ctx);
  ASSERT_EQ(run.samples.size(), 1u);
  const MetricBatch& m = run.samples[0].metrics;
  // Still there: host CPU, network, the process tree (6100; its truncated child skipped), disk usage, cost.
  for (const char* key : {"cpu_percent", "network.sent", "network.recv", "cpu", "proc.cpu.threads",
                          "proc.memory.rssMB", "disk./.usageGB", "runmon.rssMB", "runmon.sampleMillis"}) {
    EXPECT_NE(m.Find(key), nullptr) << key;
  }
  EXPECT_DOUBLE_EQ(m.Find("proc.cpu.threads")->value, 2.0);
  // Gone: memory (garbage meminfo; also no MemTotal for proc.memory.percent) and disk I/O (truncated line).
  for (const char* key :
       {"memory_percent", "proc.memory.availableMB", "proc.memory.percent", "disk.in", "disk.out"}) {
    EXPECT_EQ(m.Find(key), nullptr) << key;
  }
  ASSERT_NE(State(run, "memory"), nullptr);
  EXPECT_EQ(State(run, "memory")->health, CollectorHealth::kFailing);
  EXPECT_NE(State(run, "memory")->message.find("meminfo"), std::string::npos);
  ASSERT_NE(State(run, "disk_io"), nullptr);
  EXPECT_EQ(State(run, "disk_io")->health, CollectorHealth::kFailing);
  EXPECT_NE(State(run, "disk_io")->message.find("diskstats"), std::string::npos);
  for (const char* ok : {"process_tree", "cpu", "network", "disk_usage", "runmon", "cgroup"}) {
    ASSERT_NE(State(run, ok), nullptr) << ok;
    EXPECT_EQ(State(run, ok)->health, CollectorHealth::kOk) << ok << ": " << State(run, ok)->message;
  }
  size_t failure_logs = 0;
  for (const auto& line : run.logs) failure_logs += line.find("failed") != std::string::npos ? 1 : 0;
  EXPECT_EQ(failure_logs, 2u);
}

TEST(BuiltinCollectors, NoCgroupSettingDropsTheCgroupCollector) {
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  Settings settings;
  settings.no_cgroup = true;
  auto ctx = test::FixtureContext(tree.paths(), 100, clocks, settings);
  ctx.stat_filesystem = FakeRoot();
  EXPECT_FALSE(ctx.facts.cgroup.LimitsDetected());
  const SamplerRun run = SampleOnce(ctx);
  ASSERT_EQ(run.samples.size(), 1u);
  const MetricBatch& m = run.samples[0].metrics;
  EXPECT_EQ(State(run, "cgroup"), nullptr);
  EXPECT_EQ(m.Find("cgroup.memory.limitMB"), nullptr);
  // Host denominators: MemTotal 16 GiB, MemAvailable 12 GiB; 512 MiB resident.
  EXPECT_DOUBLE_EQ(m.Find("memory_percent")->value, 25.0);
  EXPECT_DOUBLE_EQ(m.Find("proc.memory.percent")->value, 512.0 / 16384.0 * 100.0);
}

// The factory table: every family once, each with a start; the host lane's order is the families' order
// with disk_usage (statvfs can block) moved last; and a family that is absent says why.
TEST(CollectorFamilies, TableAndLaneOrder) {
  std::set<std::string_view> names;
  for (const CollectorFamily* family : CollectorFamilies()) {
    EXPECT_TRUE(names.insert(family->name).second) << family->name;
    EXPECT_NE(family->start, nullptr) << family->name;
  }
  EXPECT_TRUE(names.contains("nvidia") && names.contains("openmetrics") && names.contains("process"));

  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 1000, clocks);
  ctx.stat_filesystem = FakeRoot();
  ctx.environment = {{"RUNMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};
  std::vector<std::string> host_lane;
  for (const CollectorSpec& spec : BuiltinCollectors(ctx)) {
    if (spec.lane == "host") host_lane.emplace_back(spec.collector->Name());
  }
  ASSERT_FALSE(host_lane.empty());
  EXPECT_EQ(host_lane.front(), "process_tree");
  EXPECT_EQ(host_lane.back(), "disk_usage");
}

TEST(CollectorFamilies, AbsentFamiliesSayWhy) {
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  Settings settings;
  settings.no_cgroup = true;
  auto ctx = test::FixtureContext(tree.paths(), std::nullopt, clocks, settings);
  ctx.environment = {{"RUNMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};
  std::vector<std::string> warnings;
  ctx.warn = [&](const std::string& message) { warnings.push_back(message); };
  for (const CollectorFamily* family : CollectorFamilies()) {
    const FamilyStart started = family->start(ctx);
    const std::string_view name = family->name;
    if (name == "process" || name == "cgroup" || name == "nvidia" || name == "openmetrics") {
      EXPECT_TRUE(started.collectors.empty()) << name;
      EXPECT_FALSE(started.absent_reason.empty()) << name;
    }
    if (name == "nvidia") {
      EXPECT_NE(started.absent_reason.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
          << started.absent_reason;
    }
  }
  // The library was named in the (injected) environment: its absence is worth a warning.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no NVIDIA metrics"), std::string::npos) << warnings[0];
}

TEST(CollectorContext, EnvironmentFromEnvironStrings) {
  const auto environment = EnvironmentMap({"A=1", "EMPTY=", "B=x=y", "no-equals", "A=2"});
  EXPECT_EQ(environment, (std::map<std::string, std::string>{{"A", "1"}, {"B", "x=y"}, {"EMPTY", ""}}));
  CollectorContext ctx;
  ctx.environment = environment;
  EXPECT_EQ(EnvironmentValue(ctx, "A"), "1");
  EXPECT_EQ(EnvironmentValue(ctx, "EMPTY"), std::nullopt);
  EXPECT_EQ(EnvironmentValue(ctx, "MISSING"), std::nullopt);
}

TEST(CollectorContext, ToolsRunThroughTheHostRunnerOnTheInjectedPath) {
  CollectorContext ctx;
  EXPECT_EQ(ToolSearchPath(ctx), ToolCommand{}.search_path);
  const std::string tools = ::testing::TempDir() + "/context-tools";
  std::filesystem::create_directories(tools);
  const std::string tool = tools + "/vendor-smi";
  {
    std::ofstream script(tool);
    script << "#!/bin/sh\necho \"{\\\"devices\\\": $#}\"\n";
  }
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  ctx.environment = {{"PATH", tools}};
  ASSERT_EQ(ToolSearchPath(ctx), tools);

  // The default runner is the host's: the tool is found on the context's PATH, not runmon's.
  ToolCommand once{.executable = "vendor-smi", .arguments = {"--json"}, .search_path = ToolSearchPath(ctx)};
  auto output = ctx.run_tool(once, ToolLimits{});
  ASSERT_TRUE(output) << output.error();
  EXPECT_EQ(output->stdout_text, "{\"devices\": 1}\n");

  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<nlohmann::json> documents;
  ToolCommand streaming{
      .executable = "vendor-smi", .arguments = {"a", "b"}, .search_path = ToolSearchPath(ctx)};
  auto stream = ctx.start_streaming_tool(
      streaming, StreamingToolOptions{.restart_initial_seconds = 0.05, .restart_max_seconds = 0.05},
      JsonLines([&](nlohmann::json document) {
        std::lock_guard lock(mutex);
        documents.push_back(std::move(document));
        arrived.notify_all();
      }),
      [](const std::string&) {});
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, std::chrono::seconds(10), [&] { return !documents.empty(); }));
    EXPECT_EQ(documents.front(), nlohmann::json({{"devices", 2}}));
  }
  stream->Stop();
}

}  // namespace
}  // namespace runmon
