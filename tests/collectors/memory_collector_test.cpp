// The memory collector: memory_percent and proc.memory.availableMB from /proc/meminfo (MemAvailable, or
// MemFree + Buffers + Cached on old kernels), or against the tightest cgroup limit when there is one
// (usage re-read each tick, host numbers for a tick whose usage file cannot be read, with an error naming
// it). Errors name the file actually read.
#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

constexpr double kMiB = 1024.0 * 1024.0;

CollectorContext HostOnly(const FixtureTree& tree, const test::FakeClocks& clocks) {
  return test::FixtureContext(tree.paths(), std::nullopt, clocks);
}

TEST(MemoryCollector, HostMemAvailable) {
  FixtureTree tree;
  tree.Write("proc/meminfo",
             "MemTotal:       16384000 kB\nMemFree:         1024000 kB\nMemAvailable:    4096000 kB\n"
             "Buffers:          100000 kB\nCached:          2000000 kB\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeMemoryCollector(HostOnly(tree, clocks));
  const auto m = test::CollectTick(*collector, 0);
  ASSERT_TRUE(m.status.ok()) << m.status.error();
  EXPECT_DOUBLE_EQ(m["memory_percent"], 75.0);             // (16384000 - 4096000) / 16384000
  EXPECT_DOUBLE_EQ(m["proc.memory.availableMB"], 4000.0);  // 4096000 kB / 1024
  EXPECT_EQ(m.Keys(), (std::vector<std::string>{"memory_percent", "proc.memory.availableMB"}));

  // Re-read on every tick (same inode, new text).
  tree.Write("proc/meminfo", "MemTotal:       16384000 kB\nMemFree:   1 kB\nMemAvailable:    8192000 kB\n");
  const auto again = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(again["memory_percent"], 50.0);
  EXPECT_DOUBLE_EQ(again["proc.memory.availableMB"], 8000.0);
}

TEST(MemoryCollector, OldKernelWithoutMemAvailable) {
  FixtureTree tree;
  tree.Write("proc/meminfo",
             "MemTotal:        8192000 kB\nMemFree:         1024000 kB\nBuffers:          1024000 kB\n"
             "Cached:          2048000 kB\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeMemoryCollector(HostOnly(tree, clocks));
  const auto m = test::CollectTick(*collector, 0);
  ASSERT_TRUE(m.status.ok()) << m.status.error();
  EXPECT_DOUBLE_EQ(m["memory_percent"], 50.0);  // available = 1024000 + 1024000 + 2048000 = half
  EXPECT_DOUBLE_EQ(m["proc.memory.availableMB"], 4000.0);
}

TEST(MemoryCollector, CgroupLimitIsTheDenominator) {
  // cgroup-v2-parent-limit: job.slice holds the 2 GiB limit; its memory.current is 1.5 GiB at t0 and
  // 1.75 GiB at t1.
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeMemoryCollector(test::FixtureContext(tree.paths(), 100, clocks));
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["memory_percent"], 75.0);
  EXPECT_DOUBLE_EQ(first["proc.memory.availableMB"], 512.0);

  tree.MirrorFrom(test::HostFixture("cgroup-v2-parent-limit") / "t1");
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["memory_percent"], 87.5);
  EXPECT_DOUBLE_EQ(second["proc.memory.availableMB"], 256.0);
}

TEST(MemoryCollector, CgroupV1Limit) {
  FixtureTree tree(test::HostFixture("cgroup-v1"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeMemoryCollector(test::FixtureContext(tree.paths(), 200, clocks));
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["memory_percent"], 25.0);  // 2 GiB of 8 GiB
  EXPECT_DOUBLE_EQ(first["proc.memory.availableMB"], 6144.0);
  tree.MirrorFrom(test::HostFixture("cgroup-v1") / "t1");
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["memory_percent"], 37.5);  // 3 GiB of 8 GiB
  EXPECT_DOUBLE_EQ(second["proc.memory.availableMB"], 5120.0);
}

TEST(MemoryCollector, UsageAboveLimitClampsAvailableAtZero) {
  FixtureTree tree(test::HostFixture("container-overlay"));
  tree.Write("sys/fs/cgroup/memory.current",
             "1207959552\n");  // 1.125 GiB of 1 GiB (kernel memory can overshoot)
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeMemoryCollector(test::FixtureContext(tree.paths(), 1, clocks));
  const auto m = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(m["memory_percent"], 112.5);
  EXPECT_DOUBLE_EQ(m["proc.memory.availableMB"], 0.0);
}

TEST(MemoryCollector, UnreadableCgroupUsageFallsBackToHostForTheTick) {
  FixtureTree tree(test::HostFixture("container-overlay"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeMemoryCollector(test::FixtureContext(tree.paths(), 1, clocks));
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 0)["memory_percent"], 75.0);  // 768 MiB of 1 GiB

  tree.Write("sys/fs/cgroup/memory.current", "garbage\n");
  const auto host = test::CollectTick(*collector, 1);
  // The host's numbers, and the reason they stand in (the sampler shows the collector as degraded).
  EXPECT_NE(
      host.status.error().find(tree.Path("sys/fs/cgroup/memory.current").string() + ": not a byte count"),
      std::string::npos)
      << host.status.error();
  // meminfo: MemTotal 16 GiB, MemAvailable 12 GiB.
  EXPECT_DOUBLE_EQ(host["memory_percent"], 25.0);
  EXPECT_DOUBLE_EQ(host["proc.memory.availableMB"], 12288.0);

  tree.Write("sys/fs/cgroup/memory.current", "268435456\n");
  EXPECT_TRUE(test::CollectTick(*collector, 2).status.ok());
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 2)["memory_percent"],
                   25.0);  // 256 MiB of 1 GiB, the limit again
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 3)["proc.memory.availableMB"], 768.0);
}

TEST(MemoryCollector, GarbageMeminfoIsAnError) {
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeMemoryCollector(HostOnly(tree, clocks));
  const auto m = test::CollectTick(*collector, 0);
  EXPECT_FALSE(m.status.ok());
  EXPECT_NE(m.status.error().find("meminfo"), std::string::npos) << m.status.error();
  EXPECT_TRUE(m.batch.empty());
}

TEST(MemoryCollector, MissingMeminfoIsAnError) {
  FixtureTree tree;
  tree.Mkdir("proc");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeMemoryCollector(HostOnly(tree, clocks));
  const auto m = test::CollectTick(*collector, 0);
  EXPECT_FALSE(m.status.ok());
  EXPECT_TRUE(m.batch.empty());
  // It appears later: picked up on the next tick.
  tree.Write("proc/meminfo", "MemTotal: 1024 kB\nMemAvailable: 256 kB\n");
  const auto later = test::CollectTick(*collector, 1);
  ASSERT_TRUE(later.status.ok()) << later.status.error();
  EXPECT_DOUBLE_EQ(later["memory_percent"], 75.0);
  EXPECT_DOUBLE_EQ(later["proc.memory.availableMB"], 256.0 / 1024.0);
}

TEST(MemoryCollector, CapturedVm) {
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto collector = MakeMemoryCollector(test::FixtureContext(tree.paths(), 7953, clocks));
  const auto m = test::CollectTick(*collector, 0);
  ASSERT_TRUE(m.status.ok()) << m.status.error();
  // MemTotal 24683652 kB, MemAvailable 24198076 kB; no cgroup limit on this VM.
  EXPECT_DOUBLE_EQ(m["memory_percent"], (24683652.0 - 24198076.0) / 24683652.0 * 100.0);
  EXPECT_DOUBLE_EQ(m["proc.memory.availableMB"], 24198076.0 * 1024.0 / kMiB);
}

TEST(MemoryCollector, ErrorsNameTheFileRead) {
  FixtureTree tree;
  tree.Write("proc/meminfo", "MemTotal: 1024 kB\nMemFree: 10 kB\n");  // no way to tell what is available
  test::FakeClocks clocks(100, 100);
  auto collector = MakeMemoryCollector(HostOnly(tree, clocks));
  const auto m = test::CollectTick(*collector, 0);
  EXPECT_EQ(m.status.error(),
            tree.Path("proc/meminfo").string() + ": neither MemAvailable nor MemFree+Buffers+Cached");
  EXPECT_TRUE(m.batch.empty());
  tree.Write("proc/meminfo", "MemTotal: lots\n");
  EXPECT_EQ(test::CollectTick(*collector, 1).status.error(),
            tree.Path("proc/meminfo").string() + ": bad value");
}

}  // namespace
}  // namespace runmon
