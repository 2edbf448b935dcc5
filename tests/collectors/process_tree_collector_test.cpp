// The process-tree collector on fixture trees (two readings each): cpu = delta ticks / CLK_TCK /
// (interval x available CPUs) x 100, and on the first sample the average since the root started;
// proc.cpu.threads, proc.memory.rssMB (statm x 4 KiB pages), proc.memory.percent (RSS over the cgroup limit
// or MemTotal). Trees: a child that exits and one that appears, a reused PID, a zombie child, a kernel
// without CONFIG_PROC_CHILDREN (full /proc scan), a child forked by a non-main thread, truncated stat
// files, a cgroup-limited job, and a capture of a real tree. USER_HZ is 100 and pages are 4 KiB.
#include <gtest/gtest.h>

#include <cmath>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

constexpr double kPagesPerMiB = 256.0;    // 4 KiB pages
constexpr double kMemTotalMiB = 16384.0;  // hand-made trees: MemTotal 16777216 kB

void ExpectClose(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::fabs(expected)));
}

std::unique_ptr<Collector> MakeTree(const FixtureTree& tree, long pid, const test::FakeClocks& clocks,
                                    bool track_tree = true) {
  Settings settings;
  settings.track_process_tree = track_tree;
  return MakeProcessTreeCollector(test::FixtureContext(tree.paths(), pid, clocks, settings));
}

TEST(ProcessTreeCollector, ChildExitsAndNewChildAppears) {
  // t0 (boot clock 1000 s): root 1000 (4 threads, 4000 ticks, started at 500 s, 25600 pages), children
  // 1001 (1000 ticks, 5120 pages) and 1002 (2000 ticks, 12800 pages), grandchild 1003 (2 threads, 1000
  // ticks, 2560 pages). 8 CPUs.
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  // Average since the root started: 8000 ticks = 80 s over 500 s x 8 CPUs.
  EXPECT_DOUBLE_EQ(first["cpu"], 2.0);
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 8.0);
  EXPECT_DOUBLE_EQ(first["proc.memory.rssMB"], 180.0);  // 46080 pages
  EXPECT_DOUBLE_EQ(first["proc.memory.percent"], 180.0 / kMemTotalMiB * 100.0);
  EXPECT_EQ(first.Keys(), (std::vector<std::string>{"cpu", "proc.cpu.threads", "proc.memory.rssMB",
                                                    "proc.memory.percent"}));

  // t1 (2 s later): 1001 exited; root +100, 1002 +200, 1003 +100 ticks; new child 1004 started 0.5 s ago
  // with 50 ticks, all of them within the interval.
  tree.MirrorFrom(test::HostFixture("process-exit") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  EXPECT_DOUBLE_EQ(second["cpu"], 450.0 / 100.0 / (2.0 * 8.0) * 100.0);  // 28.125
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 8.0);                     // 4 + 1 + 2 + 1
  EXPECT_DOUBLE_EQ(second["proc.memory.rssMB"], 165.0);                  // 42240 pages
  EXPECT_DOUBLE_EQ(second["proc.memory.percent"], 165.0 / kMemTotalMiB * 100.0);

  // 1002 exits too; its child 1003 is re-parented to init and stays tracked (still the run's work).
  tree.Remove("proc/1002");
  tree.Write("proc/1000/task/1000/children", "1004 ");
  tree.Write("proc/1003/stat", test::PidStatLine(1003, "helper", 'S', 1, 1150, 0, 2, 60020));
  clocks.Advance(1);
  const auto third = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(third["proc.cpu.threads"], 7.0);            // 4 + 2 + 1
  EXPECT_DOUBLE_EQ(third["cpu"], 50.0 / 100.0 / 8.0 * 100.0);  // only 1003's +50 ticks in 1 s
  EXPECT_DOUBLE_EQ(third["proc.memory.rssMB"], 115.0);         // 25600 + 2560 + 1280 pages

  // Everything exits: no process keys, and no error (host metrics carry on): the source has ended.
  tree.Remove("proc/1000").Remove("proc/1003").Remove("proc/1004");
  clocks.Advance(1);
  EXPECT_FALSE(collector->Ended());
  const auto gone = test::CollectTick(*collector, 3);
  EXPECT_TRUE(gone.status.ok()) << gone.status.error();
  EXPECT_TRUE(gone.batch.empty()) << gone.Keys().size();
  EXPECT_TRUE(collector->Ended());
}

TEST(ProcessTreeCollector, RootSeenAsAZombieReportsItsLastIntervalOnly) {
  // `runmon run` takes its final sample after the command exited but before reaping it: the zombie's
  // stat still has its final times, so the last interval's CPU is known; nothing else is (no RSS).
  FixtureTree tree(test::HostFixture("process-exit"));
  tree.Remove("proc/1001").Remove("proc/1002").Remove("proc/1003");
  tree.Write("proc/1000/task/1000/children", "");
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["cpu"], 4000.0 / 100.0 / (500.0 * 8.0) * 100.0);
  // 2 s later the root is a zombie: +100 ticks of its own (3050 + 1050), and a child it forked and reaped
  // within the interval, never seen alive, brought 40 ticks (cutime 30 + cstime 10).
  tree.Write("proc/1000/stat",
             "1000 (python) Z 1 1000 1000 0 -1 4194304 1200 0 3 0 3050 1050 30 10 20 0 1 0 50000 0 0 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0");
  clocks.Advance(2);
  const auto last = test::CollectTick(*collector, 1);
  ASSERT_TRUE(last.status.ok()) << last.status.error();
  EXPECT_EQ(last.Keys(), (std::vector<std::string>{"cpu"}));
  EXPECT_DOUBLE_EQ(last["cpu"], 140.0 / 100.0 / (2.0 * 8.0) * 100.0);
  // Then it is reaped: nothing more to say.
  tree.Remove("proc/1000");
  clocks.Advance(2);
  const auto gone = test::CollectTick(*collector, 2);
  EXPECT_TRUE(gone.status.ok());
  EXPECT_TRUE(gone.batch.empty());
}

// Adds a child of 1000 to the process-exit tree and lists it (with `listed`) in 1000's children file.
void AddChild(FixtureTree& tree, long pid, uint64_t start_ticks, const std::string& listed) {
  tree.Write("proc/1000/task/1000/children", listed);
  tree.Write("proc/" + std::to_string(pid) + "/stat",
             test::PidStatLine(pid, "worker", 'S', 1000, 10, 0, 1, start_ticks));
  tree.Write("proc/" + std::to_string(pid) + "/statm", "100 10 0 0 0 0 0\n");
}

// Both PID namespace links, as the kernel shows them (targets need not exist).
void SetPidNamespaces(FixtureTree& tree, const std::string& own, const std::string& monitored) {
  for (const auto& [dir, target] : {std::pair{"proc/self/ns", own}, std::pair{"proc/1000/ns", monitored}}) {
    std::filesystem::create_directories(tree.root() / dir);
    std::filesystem::remove(tree.root() / dir / "pid");
    std::filesystem::create_symlink(target, tree.root() / dir / "pid");
  }
}

TEST(ProcessTreeCollector, WalkSkippedWhileNoPidWasHandedOut) {
  // /proc/loadavg's last PID moves with every fork; while it stays, no children list can have grown and
  // the walk is skipped, except on the tick after a move and at least every 5 s.
  FixtureTree tree(test::HostFixture("process-exit"));
  SetPidNamespaces(tree, "pid:[4026531836]", "pid:[4026531836]");
  tree.Write("proc/loadavg", "0.00 0.01 0.05 1/120 1003\n");
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  auto threads_at = [&](uint64_t tick, double advance) {
    clocks.Advance(advance);
    return test::CollectTick(*collector, tick)["proc.cpu.threads"];
  };
  ASSERT_DOUBLE_EQ(threads_at(0, 0), 8.0);
  EXPECT_DOUBLE_EQ(threads_at(1, 0.5), 8.0);  // walks once more after the first move; nothing new

  AddChild(tree, 1004, 100000, "1001 1002 1004 ");
  EXPECT_DOUBLE_EQ(threads_at(2, 0.5), 8.0);  // no PID handed out: the lists are not read

  tree.Write("proc/loadavg", "0.00 0.01 0.05 1/121 1004\n");
  EXPECT_DOUBLE_EQ(threads_at(3, 0.5), 9.0);  // a PID was handed out: 1004 is found

  AddChild(tree, 1005, 100100, "1001 1002 1004 1005 ");
  EXPECT_DOUBLE_EQ(threads_at(4, 0.5), 10.0);  // the tick after a move walks too (fork still linking)

  AddChild(tree, 1006, 100200, "1001 1002 1004 1005 1006 ");
  EXPECT_DOUBLE_EQ(threads_at(5, 0.5), 10.0);
  EXPECT_DOUBLE_EQ(threads_at(6, 3), 11.0);  // 5 s since the last full walk

  tree.Write("proc/loadavg", "garbage\n");
  AddChild(tree, 1007, 100300, "1001 1002 1004 1005 1006 1007 ");
  EXPECT_DOUBLE_EQ(threads_at(7, 0.5), 12.0);  // unreadable: every tick walks
}

TEST(ProcessTreeCollector, WalkGateOffInAnotherPidNamespace) {
  // loadavg's last PID belongs to the reader's namespace: forks in another one do not move it.
  FixtureTree tree(test::HostFixture("process-exit"));
  SetPidNamespaces(tree, "pid:[4026532100]", "pid:[4026531836]");
  tree.Write("proc/loadavg", "0.00 0.01 0.05 1/120 1003\n");
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  ASSERT_DOUBLE_EQ(test::CollectTick(*collector, 0)["proc.cpu.threads"], 8.0);
  clocks.Advance(1);
  test::CollectTick(*collector, 1);
  AddChild(tree, 1004, 100000, "1001 1002 1004 ");
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 2)["proc.cpu.threads"], 9.0);
}

TEST(ProcessTreeCollector, MainThreadGoneOtherThreadsRunning) {
  // A process whose main thread exited shows 'Z' while its other threads run: it is still counted.
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  ASSERT_DOUBLE_EQ(test::CollectTick(*collector, 0)["proc.cpu.threads"], 8.0);
  tree.Write("proc/1003/stat", test::PidStatLine(1003, "helper", 'Z', 1002, 1150, 0, 2, 60020));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 1)["proc.cpu.threads"], 8.0);
  tree.Write("proc/1003/stat", test::PidStatLine(1003, "helper", 'Z', 1002, 1150, 0, 1, 60020));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 2)["proc.cpu.threads"], 6.0);  // a real zombie now
}

// A stat line of a sleeping process whose cutime (reaped children's CPU) is `reaped`.
std::string StatWithReaped(long pid, std::string_view comm, long ppid, uint64_t utime, uint64_t stime,
                           uint64_t reaped, long threads, uint64_t start) {
  return test::PidStatLine(pid, comm, 'S', ppid, utime, stime, threads, start, reaped);
}

TEST(ProcessTreeCollector, ReapedChildrenCountOnceThroughTheParent) {
  // Root 1000 (3000 + 1000 ticks) with children 1001 (500 + 500) and 1002 (2000), grandchild 1003
  // (1000); 8 CPUs.
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks);
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());

  // A child lived and died between two ticks: never seen, but reaped by the root: +30 ticks of cutime.
  tree.Write("proc/1000/stat", StatWithReaped(1000, "python", 1, 3000, 1000, 30, 4, 50000));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 1)["cpu"], 30.0 / 100.0 / 8.0 * 100.0);

  // Tracked child 1001 (1000 ticks counted so far) used 20 more, exited and was reaped: the root's cutime
  // grows by its whole 1020; only the 20 are new.
  tree.Remove("proc/1001");
  tree.Write("proc/1000/task/1000/children", "1002 ");
  tree.Write("proc/1000/stat", StatWithReaped(1000, "python", 1, 3000, 1000, 30 + 1020, 4, 50000));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 2)["cpu"], 20.0 / 100.0 / 8.0 * 100.0);

  // The same exit seen in two steps: 1003 becomes a zombie (+10 ticks before exiting), then is reaped.
  tree.Write("proc/1003/stat", test::PidStatLine(1003, "helper", 'Z', 1002, 1010, 0, 1, 60020));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 3)["cpu"], 10.0 / 100.0 / 8.0 * 100.0);
  tree.Remove("proc/1003");
  tree.Write("proc/1002/task/1002/children", "");
  tree.Write("proc/1002/stat", StatWithReaped(1002, "worker", 1000, 2000, 0, 1010, 1, 60010));
  clocks.Advance(1);
  EXPECT_DOUBLE_EQ(test::CollectTick(*collector, 4)["cpu"], 0.0);
}

TEST(ProcessTreeCollector, RootOnlyWhenTreeTrackingIsOff) {
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 1000, clocks, /*track_tree=*/false);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["cpu"], 1.0);  // 4000 ticks over 500 s x 8 CPUs
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 4.0);
  EXPECT_DOUBLE_EQ(first["proc.memory.rssMB"], 100.0);
  tree.MirrorFrom(test::HostFixture("process-exit") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["cpu"], 100.0 / 100.0 / (2.0 * 8.0) * 100.0);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 4.0);
}

TEST(ProcessTreeCollector, ReusedPidIsNotTheSameProcess) {
  // t1: PID 2001 now belongs to an unrelated process (start time 990 s instead of 600 s, parent init,
  // 5000 ticks, 7 threads); the root's children list no longer has it. 4 CPUs.
  FixtureTree tree(test::HostFixture("pid-reuse"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 2000, clocks);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["cpu"], 1300.0 / 100.0 / (500.0 * 4.0) * 100.0);
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 2.0);
  tree.MirrorFrom(test::HostFixture("pid-reuse") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["cpu"], 12.5);  // the root's +100 ticks only
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 1.0);
  EXPECT_DOUBLE_EQ(second["proc.memory.rssMB"], 25600.0 / kPagesPerMiB);
}

TEST(ProcessTreeCollector, ReusedPidListedAsChildIsANewChild) {
  // If the reused PID is (legitimately) a new child of the tree, it is adopted as a new process: its CPU
  // counts only from its start, not as a delta against the old process's counters.
  FixtureTree tree(test::HostFixture("pid-reuse"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 2000, clocks);
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.MirrorFrom(test::HostFixture("pid-reuse") / "t1");
  tree.Write("proc/2001/stat",
             test::PidStatLine(2001, "worker", 'S', 2000, 30, 10, 1, 100100));  // started at 1001 s
  tree.Write("proc/2000/task/2000/children", "2001 ");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["cpu"], (100.0 + 40.0) / 100.0 / (2.0 * 4.0) * 100.0);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 2.0);
}

TEST(ProcessTreeCollector, ZombieChildIsNotCounted) {
  // t1: child 2501 has exited but is not reaped yet: state Z, still in its parent's children list (as the
  // kernel lists zombies until they are reaped). It no longer counts as a process (threads 1, RSS the
  // root's), but the CPU it used before exiting does: the root's +100 and the zombie's final +50 ticks
  // over 2 s x 4 CPUs.
  FixtureTree tree(test::HostFixture("zombie-child"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 2500, clocks);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 2.0);
  tree.MirrorFrom(test::HostFixture("zombie-child") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 1.0);
  EXPECT_DOUBLE_EQ(second["cpu"], 18.75);
  EXPECT_DOUBLE_EQ(second["proc.memory.rssMB"], 100.0);
  // And it stays out on later ticks.
  clocks.Advance(2);
  const auto third = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(third["proc.cpu.threads"], 1.0);
  EXPECT_DOUBLE_EQ(third["cpu"], 0.0);
}

TEST(ProcessTreeCollector, KernelWithoutProcChildrenScansProc) {
  // No task/*/children files anywhere: the collector walks parent links from every /proc/PID/stat.
  // Tree: 3000 (2 threads, 1000 ticks) -> 3001 (300) -> 3002 (100); 3100 (50 threads) and init are not
  // descendants.
  FixtureTree tree(test::HostFixture("no-proc-children"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 3000, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(collector->Name(), "process_tree (full /proc scan)");
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 4.0);
  EXPECT_DOUBLE_EQ(first["cpu"], 1400.0 / 100.0 / (500.0 * 8.0) * 100.0);
  EXPECT_DOUBLE_EQ(first["proc.memory.rssMB"], 125.0);

  // t1: 3002 exited, 3003 (3 threads, started 1 s ago, 20 ticks) forked by 3001.
  tree.MirrorFrom(test::HostFixture("no-proc-children") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 6.0);
  EXPECT_DOUBLE_EQ(second["cpu"], 20.0 / 100.0 / (2.0 * 8.0) * 100.0);
  EXPECT_DOUBLE_EQ(second["proc.memory.rssMB"], 130.0);
}

TEST(ProcessTreeCollector, ChildForkedByNonMainThread) {
  // Root 4000 has threads 4000, 4001, 4002; only task/4002/children lists its child 4010.
  FixtureTree tree(test::HostFixture("thread-forked-child"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 4000, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(collector->Name(), "process_tree");
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 4.0);  // 3 + 4010's 1
  EXPECT_DOUBLE_EQ(first["cpu"], 1500.0 / 100.0 / (500.0 * 8.0) * 100.0);

  // t1: thread 4001 forked 4011 (2 threads, started at 1001 s, 100 ticks). Per-thread lists are re-read
  // every 5 s, so 2 s after the first sample it is not seen yet...
  tree.MirrorFrom(test::HostFixture("thread-forked-child") / "t1");
  clocks.Set(1002, 1002);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 4.0);
  EXPECT_DOUBLE_EQ(second["cpu"], 600.0 / 100.0 / (2.0 * 8.0) * 100.0);  // root +400, 4010 +200
  // ...and 6 s after it, it is: its 100 ticks over its 5 s of life, pro rata for the 4 s interval.
  clocks.Set(1006, 1006);
  const auto third = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(third["proc.cpu.threads"], 6.0);
  EXPECT_DOUBLE_EQ(third["cpu"], 80.0 / 100.0 / (4.0 * 8.0) * 100.0);
}

TEST(ProcessTreeCollector, TruncatedRootStatIsAnError) {
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 6000, clocks);
  const auto bad = test::CollectTick(*collector, 0);
  EXPECT_FALSE(bad.status.ok());
  EXPECT_NE(bad.status.error().find("6000"), std::string::npos) << bad.status.error();
  EXPECT_TRUE(bad.batch.empty());
  // Fixed on disk: picked up on the next tick (the first sample is then the average since start).
  tree.Write("proc/6000/stat", test::PidStatLine(6000, "truncated", 'S', 1, 10, 0, 1, 50000));
  const auto good = test::CollectTick(*collector, 1);
  ASSERT_TRUE(good.status.ok()) << good.status.error();
  EXPECT_DOUBLE_EQ(good["cpu"], 10.0 / 100.0 / (500.0 * 2.0) * 100.0);
}

TEST(ProcessTreeCollector, TruncatedChildStatIsSkipped) {
  // 6100 (2 threads, 200 ticks, 2560 pages) is fine; its child 6101's stat is cut short. MemTotal is
  // garbage in this tree, so proc.memory.percent has no denominator and is left out.
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 6100, clocks);
  const auto c = test::CollectTick(*collector, 0);
  ASSERT_TRUE(c.status.ok()) << c.status.error();
  EXPECT_DOUBLE_EQ(c["proc.cpu.threads"], 2.0);
  EXPECT_DOUBLE_EQ(c["proc.memory.rssMB"], 10.0);
  EXPECT_DOUBLE_EQ(c["cpu"], 200.0 / 100.0 / (500.0 * 2.0) * 100.0);
  EXPECT_FALSE(c.Has("proc.memory.percent"));
}

TEST(ProcessTreeCollector, NoPidMeansNoProcessMetrics) {
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  for (std::optional<long> pid : {std::optional<long>(), std::optional<long>(0), std::optional<long>(-1)}) {
    auto collector = MakeProcessTreeCollector(test::FixtureContext(tree.paths(), pid, clocks));
    const auto c = test::CollectTick(*collector, 0);
    EXPECT_TRUE(c.status.ok());
    EXPECT_TRUE(c.batch.empty());
  }
}

TEST(ProcessTreeCollector, MissingRootEndsTheSource) {
  // Gone before the first look (a command that exited at once): not an error to retry, the end.
  FixtureTree tree(test::HostFixture("process-exit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 4242, clocks);
  const auto c = test::CollectTick(*collector, 0);
  EXPECT_TRUE(c.status.ok()) << c.status.error();
  EXPECT_TRUE(c.batch.empty());
  EXPECT_TRUE(collector->Ended());
}

TEST(ProcessTreeCollector, CgroupLimitsAreTheDenominators) {
  // cgroup-v2-parent-limit: 1.5 CPUs (job.slice's cpu.max) of 8, 2 GiB memory limit; pid 100 has
  // 131072 pages (512 MiB), 300 ticks at t0 (started at 900 s) and 600 at t1.
  FixtureTree tree(test::HostFixture("cgroup-v2-parent-limit"));
  test::FakeClocks clocks(1000, 1000);
  auto collector = MakeTree(tree, 100, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["cpu"], 3.0 / (100.0 * 1.5) * 100.0);  // 2 %
  EXPECT_DOUBLE_EQ(first["proc.memory.percent"], 25.0);
  tree.MirrorFrom(test::HostFixture("cgroup-v2-parent-limit") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["cpu"], 100.0);  // 3 s of CPU in 2 s with 1.5 CPUs available
}

TEST(ProcessTreeCollector, CapturedVmTree) {
  // A real tree captured on a 2-CPU Debian 12 VM (tools/capture_fixture.sh -p 7953 -t 2): bash 7953 with
  // children sleep 7955, subshell 7956 (-> sleep 7958), a busy-looping subshell 7957, sleep 2 (7959, gone
  // in t1) and python3 7960 with 3 threads. Boot clock from proc/uptime: 837.37 s, then 840.33 s. Root
  // start 83683 ticks. Ticks (utime + stime) at t0: 7957 44, 7960 4, others 0; at t1 7957 254. python3
  // 7960 has also reaped children worth 4 ticks (cutime + cstime), which the first sample's average
  // since start includes.
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto collector = MakeTree(tree, 7953, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  ExpectClose(first["cpu"], 100.0 * 52.0 / 100.0 / ((837.37 - 836.83) * 2.0));
  EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], 9.0);
  // statm resident pages 759 + 454 + 368 + 402 + 448 + 446 + 3396.
  EXPECT_DOUBLE_EQ(first["proc.memory.rssMB"], 6273.0 / kPagesPerMiB);
  ExpectClose(first["proc.memory.percent"], 6273.0 * 4096.0 / (24683652.0 * 1024.0) * 100.0);

  tree.MirrorFrom(test::HostFixture("debian12-vm") / "t1");
  clocks.Set(840.33, 840.33);
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  ExpectClose(second["cpu"], 100.0 * 210.0 / 100.0 / ((840.33 - 837.37) * 2.0));
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 8.0);
  EXPECT_DOUBLE_EQ(second["proc.memory.rssMB"], 5827.0 / kPagesPerMiB);
}

}  // namespace
}  // namespace runmon
