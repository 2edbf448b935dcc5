// How the process-tree collector counts CPU time and memory on fixture trees (the process-exit tree: root
// 1000 with 4000 ticks, children 1001 (1000 ticks) and 1002 (2000), grandchild 1003 (1000, 2 threads);
// 8 CPUs, MemTotal 16 GiB, USER_HZ 100): every CPU-second once, through exits the parent reaps together, late
// reaping, a child reaped between its parent's read and its own, PID reuse; what cannot be true (a cstime
// of INT64_MAX, a resident size of 2^64 - 1 pages, counters that go backwards) dropped with a warning;
// missing or garbled statm leaving the memory keys out; schedstat's nanoseconds for short windows; no
// sample above 100; and the monitored process's exit as the quiet end of the source, not a failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fixture_tree.hpp"
#include "sampler/sampler.hpp"

namespace runmon {
namespace {

using test::FixtureTree;
using test::PidStatLine;

constexpr double kPercentPerTick = 1.0 / 100.0 / 8.0 * 100.0;  // one tick in 1 s on 8 CPUs

struct Harness {
  FixtureTree tree{test::HostFixture("process-exit")};
  test::FakeClocks clocks{1000, 1000};
  std::vector<std::string> warnings;
  std::unique_ptr<Collector> collector;
  uint64_t index = 0;

  explicit Harness(long root = 1000) {
    auto ctx = test::FixtureContext(tree.paths(), root, clocks);
    ctx.warn = [this](const std::string& line) { warnings.push_back(line); };
    collector = MakeProcessTreeCollector(ctx);
  }
  test::Collected Tick(double advance_seconds) {
    clocks.Advance(advance_seconds);
    return test::CollectTick(*collector, index++);
  }
};

TEST(ProcessTreeAccounting, NestedShellsExitingTogetherCountOnce) {
  // `sh -c 'sh -c "python3 busy.py; true"; sleep 2'`: within one interval grandchild 1003 used 30 more
  // ticks and exited, 1002 reaped it (cutime 1030), used 20 more and exited, and the root reaped 1002
  // (cutime 2020 + 1030) and used 10 itself. Only the 60 new ticks count.
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Remove("proc/1003").Remove("proc/1002");
  h.tree.Write("proc/1000/task/1000/children", "1001 ");
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "sh", 'S', 1, 3010, 1000, 4, 50000, 3050));
  const auto second = h.Tick(1);
  EXPECT_DOUBLE_EQ(second["cpu"], 60 * kPercentPerTick);
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0);
  EXPECT_TRUE(h.warnings.empty());
}

TEST(ProcessTreeAccounting, ParentReapingLateCountsOnce) {
  // 1001 exits (+10 ticks) and stays a zombie for 8 s before the root reaps it.
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'Z', 1000, 510, 500, 1, 60000));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 10 * kPercentPerTick);
  for (int second = 0; second < 8; ++second) EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0) << second;
  h.tree.Remove("proc/1001");
  h.tree.Write("proc/1000/task/1000/children", "1002 ");
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000, 1010));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0);
}

TEST(ProcessTreeAccounting, ChildReapedBetweenItsParentsReadAndItsOwn) {
  // 1001 is gone (+5 ticks before it exited) but the root's stat, read just before, does not show it yet;
  // the next tick's does: its last 5 ticks count then. 1002 disappears and never shows up in the root's
  // reaped time (its parent ignored SIGCHLD): its due is dropped after a tick, so a short-lived child
  // reaped later (40 ticks) is not swallowed by it.
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Remove("proc/1001");
  h.tree.Write("proc/1000/task/1000/children", "1002 ");
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0);
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000, 1005));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 5 * kPercentPerTick);

  h.tree.Remove("proc/1003").Remove("proc/1002");
  h.tree.Write("proc/1000/task/1000/children", "");
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0);
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 0.0);
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000, 1045));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 40 * kPercentPerTick);
}

TEST(ProcessTreeAccounting, PidReusedAfterTheParentReapedTheOldProcess) {
  // 1001 used 10 more ticks, exited and was reaped by the root (cutime 1010); the root then forked a new
  // child that got PID 1001 again (started 0.5 s ago, 40 ticks).
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000, 1010));
  h.tree.Write("proc/1001/stat", PidStatLine(1001, "new job", 'R', 1000, 40, 0, 1, 100050));
  const auto second = h.Tick(1);
  EXPECT_DOUBLE_EQ(second["cpu"], 50 * kPercentPerTick);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 8.0);
}

TEST(ProcessTreeAccounting, CstimeOfInt64MaxIsDroppedWithAWarning) {
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  // 1002's cstime cannot be true; the root used 100 ticks.
  h.tree.Write("proc/1002/stat",
               PidStatLine(1002, "worker", 'S', 1000, 2000, 0, 1, 60010, 0, uint64_t{INT64_MAX}));
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3100, 1000, 4, 50000));
  const auto second = h.Tick(1);
  EXPECT_DOUBLE_EQ(second["cpu"], 100 * kPercentPerTick);
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], 8.0);  // the rest of its stat is used
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_NE(h.warnings[0].find("process 1002"), std::string::npos) << h.warnings[0];
  // Sane again: compared with its last valid reading (2000 ticks). The same warning again would be held
  // back (at most one per 10 minutes).
  h.tree.Write("proc/1002/stat", PidStatLine(1002, "worker", 'S', 1000, 2050, 0, 1, 60010));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 50 * kPercentPerTick);
}

TEST(ProcessTreeAccounting, RootsImpossibleCpuLeavesCpuOut) {
  Harness h;
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000,
                                             uint64_t{INT64_MAX}, uint64_t{INT64_MAX}));
  const auto first = h.Tick(0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_FALSE(first.Has("cpu"));
  EXPECT_TRUE(first.Has("proc.memory.rssMB"));
  // Its next sane reading is its baseline; the others' CPU of the tick in between comes with it.
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3000, 1000, 4, 50000));
  h.tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'S', 1000, 520, 500, 1, 60000));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 20 * kPercentPerTick);
}

TEST(ProcessTreeAccounting, CountersGoingBackwardsAreDropped) {
  Harness h;
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Write("proc/1002/stat", PidStatLine(1002, "worker", 'S', 1000, 1500, 0, 1, 60010));
  h.tree.Write("proc/1000/stat", PidStatLine(1000, "python", 'S', 1, 3100, 1000, 4, 50000));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 100 * kPercentPerTick);
  EXPECT_EQ(h.warnings.size(), 1u);
  h.tree.Write("proc/1002/stat", PidStatLine(1002, "worker", 'S', 1000, 2100, 0, 1, 60010));
  EXPECT_DOUBLE_EQ(h.Tick(1)["cpu"], 100 * kPercentPerTick);  // against 2000, its last valid reading
}

TEST(ProcessTreeAccounting, ResidentSizeThatCannotBeTrueIsDropped) {
  // 2^64 - 1 pages overflow any byte count; the root's leaves both memory keys out, a descendant's leaves
  // the sum of the others (180 MiB - 1003's 10 MiB).
  Harness h;
  h.tree.Write("proc/1003/statm", "1 18446744073709551615 0 0 0 0 0\n");
  const auto first = h.Tick(0);
  EXPECT_DOUBLE_EQ(first["proc.memory.rssMB"], 170.0);
  EXPECT_EQ(h.warnings.size(), 1u);
  h.tree.Write("proc/1000/statm", "1 18446744073709551615 0 0 0 0 0\n");
  const auto second = h.Tick(1);
  EXPECT_FALSE(second.Has("proc.memory.rssMB"));
  EXPECT_FALSE(second.Has("proc.memory.percent"));
  EXPECT_TRUE(second.Has("proc.cpu.threads"));
  // More than MemTotal (16 GiB) is not true either.
  h.tree.Write("proc/1000/statm", "1 4194305 0 0 0 0 0\n");
  EXPECT_FALSE(h.Tick(1).Has("proc.memory.rssMB"));
}

TEST(ProcessTreeAccounting, MissingOrGarbledStatmIsLeftOut) {
  for (const bool garbled : {false, true}) {
    Harness h;
    if (garbled) {
      h.tree.Write("proc/1000/statm", "garbage\n");
    } else {
      h.tree.Remove("proc/1000/statm");
    }
    const auto c = h.Tick(0);
    ASSERT_TRUE(c.status.ok()) << c.status.error();
    EXPECT_FALSE(c.Has("proc.memory.rssMB")) << garbled;
    EXPECT_FALSE(c.Has("proc.memory.percent")) << garbled;
    EXPECT_DOUBLE_EQ(c["proc.cpu.threads"], 8.0);
  }
}

TEST(ProcessTreeAccounting, ShortWindowUsesSchedstatNanoseconds) {
  // Root 1001 alone (single-threaded, 1000 ticks): 9 ms later stat shows one more tick (10 ms) but it ran
  // 9 ms by schedstat: 9 ms of 9 ms x 8 CPUs, not 10 ms. Multi-threaded processes ignore schedstat (it
  // covers the main thread alone).
  Harness h(1001);
  h.tree.Write("proc/1001/schedstat", "10000000000 0 100\n");
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'R', 1000, 501, 500, 1, 60000));
  h.tree.Write("proc/1001/schedstat", "10009000000 0 101\n");
  EXPECT_NEAR(h.Tick(0.009)["cpu"], 100.0 / 8.0, 1e-6);
  // A schedstat that stops moving cannot drift the count: stat's ticks win beyond 3 ticks.
  double sum_ms = 0;
  for (int i = 1; i <= 10; ++i) {
    h.tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'R', 1000, 501 + 10 * i, 500, 1, 60000));
    sum_ms += h.Tick(0.1)["cpu"] / 100.0 * 0.1 * 8 * 1000;
  }
  EXPECT_NEAR(sum_ms, 1000.0 - 30.0 + 1.0, 1e-3);  // 100 ticks, less the 3-tick bound, plus the 1 ms
}

TEST(ProcessTreeAccounting, NoSampleAboveWhatTheWindowAllows) {
  // One single-threaded process, no schedstat: 2 ticks (20 ms) in a 9 ms window are tick quantisation. It
  // shows at most 9 ms (one CPU busy of 8), and the rest is carried into the next sample.
  Harness h(1001);
  ASSERT_TRUE(h.Tick(0).status.ok());
  h.tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'R', 1000, 502, 500, 1, 60000));
  EXPECT_NEAR(h.Tick(0.009)["cpu"], 100.0 / 8.0, 1e-6);  // the clocks add up in floating point
  EXPECT_NEAR(h.Tick(1)["cpu"], 0.011 * 100.0 / 8.0, 1e-9);
}

TEST(ProcessTreeAccounting, MonitoredProcessExitIsTheQuietEndOfTheSource) {
  // A command that exited before the first look (gone), and one whose only process is a zombie: no
  // failure logged, nothing retried; the zombie's lifetime average is the first sample's cpu.
  FixtureTree tree(test::HostFixture("process-exit"));
  tree.Write("proc/1001/stat", PidStatLine(1001, "short job", 'Z', 1000, 500, 500, 1, 60000));
  test::FakeClocks clocks(1000, 1000);
  for (const long pid : {4242L, 1001L}) {
    std::vector<CollectorSpec> specs;
    specs.push_back(
        CollectorSpec{MakeProcessTreeCollector(test::FixtureContext(tree.paths(), pid, clocks)), "host"});
    SamplerOptions options;
    options.interval_seconds = 0.1;
    options.max_samples = 3;
    std::vector<std::string> logs;
    std::vector<Sample> samples;
    Sampler sampler(
        std::move(specs), options, [&](const Sample& s) { samples.push_back(s); },
        [&](const std::string& line) { logs.push_back(line); });
    sampler.Run();
    EXPECT_TRUE(logs.empty()) << logs.front();
    ASSERT_EQ(samples.size(), 3u);
    const Metric* cpu = samples[0].metrics.Find("cpu");
    if (pid == 1001) {
      ASSERT_NE(cpu, nullptr);
      EXPECT_DOUBLE_EQ(cpu->value, 1000.0 / 100.0 / (400.0 * 8.0) * 100.0);
      EXPECT_EQ(sampler.States()[0].health, CollectorHealth::kOk);
    } else {
      EXPECT_EQ(cpu, nullptr);
      EXPECT_EQ(sampler.States()[0].health, CollectorHealth::kEnded);
      EXPECT_EQ(sampler.States()[0].collections, 1u);  // not run again
    }
  }
}

}  // namespace
}  // namespace runmon
