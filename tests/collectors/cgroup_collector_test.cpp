// The cgroup collector (metrics.md A.3 "container truth"): cgroup.memory.limitMB and cgroup.cpu.limit from
// the limits detected at start, cgroup.cpu.throttledPercent from cpu.stat deltas of the cgroup holding the
// quota, cgroup.memory.oomKills from memory.events (v2) or memory.oom_control (v1), on fixture trees with
// two readings.
#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

TEST(CgroupCollector, V2ParentLimitThrottlingAndOomKills) {
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 100, clocks);
  auto collector = MakeCgroupCollector(ctx);

  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["cgroup.memory.limitMB"], 2048.0);  // job.slice's 2 GiB
  EXPECT_DOUBLE_EQ(first["cgroup.cpu.limit"], 1.5);
  EXPECT_FALSE(first.Has("cgroup.cpu.throttledPercent"));  // no previous reading
  EXPECT_DOUBLE_EQ(first["cgroup.memory.oomKills"], 2.0);  // the leaf's memory.events, not the parents'

  tree.MirrorFrom(test::HostFixture("cgroup-v2-parent-limit") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  // job.slice/cpu.stat: nr_periods 1000 -> 1200, nr_throttled 100 -> 150: 50 / 200.
  EXPECT_DOUBLE_EQ(second["cgroup.cpu.throttledPercent"], 25.0);
  EXPECT_DOUBLE_EQ(second["cgroup.memory.oomKills"], 3.0);
  EXPECT_DOUBLE_EQ(second["cgroup.memory.limitMB"], 2048.0);

  // An idle interval (no period ran) is 0 % throttled.
  clocks.Advance(2);
  const auto idle = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(idle["cgroup.cpu.throttledPercent"], 0.0);
}

TEST(CgroupCollector, V1QuotaThrottlingAndOomControl) {
  FixtureTree tree(test::HostFixture("cgroup-v1"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 200, clocks);
  auto collector = MakeCgroupCollector(ctx);

  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["cgroup.memory.limitMB"], 8192.0);
  EXPECT_DOUBLE_EQ(first["cgroup.cpu.limit"], 3.0);
  EXPECT_DOUBLE_EQ(first["cgroup.memory.oomKills"], 3.0);  // memory.oom_control "oom_kill 3"

  tree.MirrorFrom(test::HostFixture("cgroup-v1") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  // nr_periods 500 -> 600, nr_throttled 50 -> 80: 30 / 100.
  EXPECT_DOUBLE_EQ(second["cgroup.cpu.throttledPercent"], 30.0);
  EXPECT_DOUBLE_EQ(second["cgroup.memory.oomKills"], 4.0);
}

TEST(CgroupCollector, ContainerLimitsAndThrottling) {
  FixtureTree tree(test::HostFixture("container-overlay"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 1, clocks);
  auto collector = MakeCgroupCollector(ctx);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["cgroup.memory.limitMB"], 1024.0);
  EXPECT_DOUBLE_EQ(first["cgroup.cpu.limit"], 0.5);
  EXPECT_DOUBLE_EQ(first["cgroup.memory.oomKills"], 1.0);
  tree.MirrorFrom(test::HostFixture("container-overlay") / "t1");
  const auto second = test::CollectTick(*collector, 1);
  // nr_periods 400 -> 500, nr_throttled 40 -> 90.
  EXPECT_DOUBLE_EQ(second["cgroup.cpu.throttledPercent"], 50.0);
}

TEST(CgroupCollector, NoLimitsNoLimitKeys) {
  // The captured VM: no limits, but v1 memory.oom_control exists.
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto ctx = test::FixtureContext(tree.paths(), 7953, clocks);
  auto collector = MakeCgroupCollector(ctx);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok());
  EXPECT_FALSE(first.Has("cgroup.memory.limitMB"));
  EXPECT_FALSE(first.Has("cgroup.cpu.limit"));
  EXPECT_FALSE(first.Has("cgroup.cpu.throttledPercent"));
  EXPECT_DOUBLE_EQ(first["cgroup.memory.oomKills"], 0.0);
}

TEST(CgroupCollector, VanishedCgroupFilesAreLeftOut) {
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 100, clocks);
  auto collector = MakeCgroupCollector(ctx);
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.Remove("sys/fs/cgroup/user.slice/job.slice/cpu.stat");
  tree.Remove("sys/fs/cgroup/user.slice/job.slice/job-7.scope/memory.events");
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_TRUE(second.status.ok());
  EXPECT_FALSE(second.Has("cgroup.cpu.throttledPercent"));
  EXPECT_FALSE(second.Has("cgroup.memory.oomKills"));
  EXPECT_DOUBLE_EQ(second["cgroup.memory.limitMB"], 2048.0);
}

TEST(CgroupCollector, UnknownHostCpuCountMakesNoAffinityLimit) {
  // The captured VM (no quota; the process may run on both CPUs) without sys/devices/system/cpu/online and
  // with a /proc/stat that cannot be parsed: the host's CPU count is unknown, so the affinity mask cannot
  // be called narrower than the host, and no cgroup.cpu.limit appears.
  FixtureTree tree(test::HostFixture("debian12-vm"));
  tree.Remove("sys/devices/system/cpu/online");
  for (const char* stat : {static_cast<const char*>("cpu  garbage\n"), static_cast<const char*>(nullptr)}) {
    if (stat != nullptr) {
      tree.Write("proc/stat", stat);
    } else {
      tree.Remove("proc/stat");
    }
    test::FakeClocks clocks(837.37, 837.37);
    auto ctx = test::FixtureContext(tree.paths(), 7953, clocks);
    EXPECT_EQ(ctx.facts.logical_cpus, 0u);
    const auto first = test::CollectTick(*MakeCgroupCollector(ctx), 0);
    EXPECT_FALSE(first.Has("cgroup.cpu.limit")) << first["cgroup.cpu.limit"];
    EXPECT_FALSE(ctx.facts.cgroup.CpuLimit().has_value());
  }
}

TEST(CgroupCollector, UnreadableCgroupFileIsReported) {
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  auto ctx = test::FixtureContext(tree.paths(), 100, clocks);
  auto collector = MakeCgroupCollector(ctx);
  const std::string events = "sys/fs/cgroup/user.slice/job.slice/job-7.scope/memory.events";
  tree.Remove(events).Mkdir(events);  // not a file any more
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_NE(first.status.error().find(tree.Path(events).string()), std::string::npos) << first.status.error();
  EXPECT_FALSE(first.Has("cgroup.memory.oomKills"));
  EXPECT_DOUBLE_EQ(first["cgroup.memory.limitMB"], 2048.0);  // the rest still comes
}

}  // namespace
}  // namespace runmon
