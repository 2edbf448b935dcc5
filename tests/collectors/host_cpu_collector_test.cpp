// The host CPU collector: cpu_percent (and opt-in cpu.{i}.cpu_percent) from /proc/stat tick deltas; the
// first sample is the average since boot; offline CPUs are skipped; counters that go backwards restart.
// busy = user + nice + system + irq + softirq + steal, total = busy + idle + iowait.
#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

std::unique_ptr<Collector> Make(const FixtureTree& tree, bool per_core, const test::FakeClocks& clocks) {
  Settings settings;
  settings.per_core_cpu = per_core;
  return MakeHostCpuCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks, settings));
}

TEST(HostCpuCollector, FirstSampleSinceBootThenDeltas) {
  FixtureTree tree;
  //                  user nice system idle iowait irq softirq steal guest guest_nice
  tree.Write("proc/stat",
             "cpu  1000 0 500 8000 500 0 0 0 0 0\ncpu0 1000 0 500 8000 500 0 0 0 0 0\nbtime 1\n");
  test::FakeClocks clocks(100, 100);
  auto collector = Make(tree, false, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["cpu_percent"], 15.0);  // busy 1500 of 10000
  EXPECT_FALSE(first.Has("cpu.0.cpu_percent"));  // per-core is opt-in

  // +600 user, +200 system, +600 idle, +100 iowait, +30 irq, +40 softirq, +30 steal, +50 guest (inside user).
  tree.Write("proc/stat", "cpu  1600 0 700 8600 600 30 40 30 50 0\ncpu0 1600 0 700 8600 600 30 40 30 50 0\n");
  const auto second = test::CollectTick(*collector, 1);
  // busy delta 600 + 200 + 30 + 40 + 30 = 900; total delta 900 + 600 + 100 = 1600.
  EXPECT_DOUBLE_EQ(second["cpu_percent"], 900.0 / 1600.0 * 100.0);

  // No tick elapsed: no value rather than a division by zero.
  const auto same = test::CollectTick(*collector, 2);
  EXPECT_TRUE(same.status.ok());
  EXPECT_FALSE(same.Has("cpu_percent"));
}

TEST(HostCpuCollector, PerCoreWithOfflineAndHotPluggedCpus) {
  FixtureTree tree;
  tree.Write("proc/stat",
             "cpu  400 0 0 1600 0 0 0 0 0 0\n"
             "cpu0 100 0 0 400 0 0 0 0 0 0\ncpu1 200 0 0 300 0 0 0 0 0 0\n"
             "cpu2 50 0 0 450 0 0 0 0 0 0\ncpu3 50 0 0 450 0 0 0 0 0 0\n");
  test::FakeClocks clocks(100, 100);
  auto collector = Make(tree, true, clocks);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["cpu_percent"], 20.0);
  EXPECT_DOUBLE_EQ(first["cpu.0.cpu_percent"], 20.0);
  EXPECT_DOUBLE_EQ(first["cpu.1.cpu_percent"], 40.0);
  EXPECT_DOUBLE_EQ(first["cpu.2.cpu_percent"], 10.0);
  EXPECT_DOUBLE_EQ(first["cpu.3.cpu_percent"], 10.0);

  // cpu2 went offline (no line); cpu3 was unplugged and plugged back in (its counters restarted).
  tree.Write("proc/stat",
             "cpu  700 0 0 1800 0 0 0 0 0 0\n"
             "cpu0 200 0 0 500 0 0 0 0 0 0\ncpu1 200 0 0 400 0 0 0 0 0 0\n"
             "cpu3 30 0 0 10 0 0 0 0 0 0\n");
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  EXPECT_DOUBLE_EQ(second["cpu_percent"], 60.0);        // busy +300 of total +500
  EXPECT_DOUBLE_EQ(second["cpu.0.cpu_percent"], 50.0);  // +100 of +200
  EXPECT_DOUBLE_EQ(second["cpu.1.cpu_percent"], 0.0);   // +0 of +100
  EXPECT_FALSE(second.Has("cpu.2.cpu_percent"));
  EXPECT_DOUBLE_EQ(second["cpu.3.cpu_percent"], 75.0);  // a fresh start: 30 of 40
}

TEST(HostCpuCollector, MalformedStatIsAnErrorAndRecovers) {
  FixtureTree tree;
  tree.Write("proc/stat", "cpu  garbage\n");
  test::FakeClocks clocks(100, 100);
  auto collector = Make(tree, false, clocks);
  const auto bad = test::CollectTick(*collector, 0);
  EXPECT_FALSE(bad.status.ok());
  EXPECT_TRUE(bad.batch.empty());
  tree.Write("proc/stat", "cpu  10 0 0 30 0 0 0 0 0 0\n");
  const auto good = test::CollectTick(*collector, 1);
  ASSERT_TRUE(good.status.ok()) << good.status.error();
  EXPECT_DOUBLE_EQ(good["cpu_percent"], 25.0);
}

TEST(HostCpuCollector, MissingStatIsAnError) {
  FixtureTree tree;
  tree.Mkdir("proc");
  test::FakeClocks clocks(100, 100);
  auto collector = Make(tree, false, clocks);
  EXPECT_FALSE(test::CollectTick(*collector, 0).status.ok());
}

TEST(HostCpuCollector, CapturedVmTwoReadings) {
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto collector = Make(tree, true, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  // t0 "cpu  25143 0 4294 137098 379 0 34 20 0 0": busy 29491, total 166968.
  EXPECT_DOUBLE_EQ(first["cpu_percent"], 29491.0 / 166968.0 * 100.0);
  EXPECT_TRUE(first.Has("cpu.0.cpu_percent"));
  EXPECT_TRUE(first.Has("cpu.1.cpu_percent"));
  EXPECT_FALSE(first.Has("cpu.2.cpu_percent"));

  tree.MirrorFrom(test::HostFixture("debian12-vm") / "t1");
  clocks.Set(840.33, 840.33);
  const auto second = test::CollectTick(*collector, 1);
  // t1 "cpu  25620 0 4411 137098 379 0 34 20 0 0": busy +594, idle and iowait +0 (both CPUs were busy).
  EXPECT_DOUBLE_EQ(second["cpu_percent"], 100.0);
}

TEST(HostCpuCollector, ParseErrorNamesTheFileRead) {
  FixtureTree tree;
  tree.Write("proc/stat", "cpu  garbage\n");
  test::FakeClocks clocks(100, 100);
  EXPECT_EQ(test::CollectTick(*Make(tree, false, clocks), 0).status.error(),
            tree.Path("proc/stat").string() + ": malformed aggregate cpu line");
}

TEST(HostCpuCollector, NoTicksElapsedLeavesThePercentOut) {
  // No tick counted since the last reading (or since boot): a percentage of nothing, not 0 %.
  FixtureTree tree;
  tree.Write("proc/stat", "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n");
  test::FakeClocks clocks(100, 100);
  auto collector = Make(tree, true, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_TRUE(first.batch.empty()) << first.Keys().front();
  tree.Write("proc/stat", "cpu  10 0 0 30 0 0 0 0 0 0\ncpu0 10 0 0 30 0 0 0 0 0 0\n");
  ASSERT_TRUE(test::CollectTick(*collector, 1).status.ok());
  const auto idle = test::CollectTick(*collector, 2);  // the same counters again
  EXPECT_TRUE(idle.batch.empty()) << idle.Keys().front();
}

}  // namespace
}  // namespace runmon
