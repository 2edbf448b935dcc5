// The process-tree collector on this machine's real /proc: the test process forks a small tree (sleepers,
// a child with a grandchild, a busy child) and monitors itself as the root. Checks that every descendant is
// found (proc.cpu.threads covers them all), that a child that exits and is reaped disappears from the next
// sample, and that a busy child shows CPU use. Exact values are not asserted: these are live processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fixture_tree.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

long ThreadsOf(pid_t pid) {
  auto text = ReadFileToString("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return -1;
  auto stat = ParsePidStat(*text);
  return stat ? stat->num_threads : -1;
}

class LiveProcessTree : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : others_) ::kill(pid, SIGKILL);  // grandchildren: reaped by init, not by us
    for (pid_t pid : children_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  pid_t SpawnSleeper() {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid > 0) children_.push_back(pid);
    return pid;
  }

  pid_t SpawnBusy() {
    const pid_t pid = ::fork();
    if (pid == 0) {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    if (pid > 0) children_.push_back(pid);
    return pid;
  }

  // A child that forks a sleeping grandchild, reports its PID through a pipe, then sleeps itself.
  pid_t SpawnWithGrandchild() {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      const pid_t grandchild = ::fork();
      if (grandchild == 0) {
        ::close(fds[1]);
        ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      if (::write(fds[1], &grandchild, sizeof grandchild) != static_cast<ssize_t>(sizeof grandchild))
        ::_exit(126);
      ::close(fds[1]);
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    if (pid > 0) {
      children_.push_back(pid);
      pid_t grandchild = -1;
      if (::read(fds[0], &grandchild, sizeof grandchild) == static_cast<ssize_t>(sizeof grandchild) &&
          grandchild > 0) {
        others_.push_back(grandchild);
      }
    }
    ::close(fds[0]);
    return pid;
  }

  CollectorContext LiveContext() {
    CollectorContext ctx;
    ctx.paths = HostPaths::System();
    ctx.pid = ::getpid();
    ctx.facts = DetectHostFacts(ctx.paths, ctx.settings, ctx.pid);
    ctx.clocks = Clocks::System();
    return ctx;
  }

  std::vector<pid_t> children_;
  std::vector<pid_t> others_;
};

TEST_F(LiveProcessTree, FindsEveryDescendantAndDropsAnExitedOne) {
  const pid_t sleeper1 = SpawnSleeper();
  const pid_t sleeper2 = SpawnSleeper();
  const pid_t parent = SpawnWithGrandchild();
  ASSERT_GT(sleeper1, 0);
  ASSERT_GT(sleeper2, 0);
  ASSERT_GT(parent, 0);
  ASSERT_EQ(others_.size(), 1u) << "the grandchild did not report its PID";

  auto collector = MakeProcessTreeCollector(LiveContext());
  // Each descendant is single-threaded (forked from one thread, then exec'd), so the tree's thread count is
  // this process's plus one per descendant: 2 children + 1 child with its grandchild = 4.
  const long own_before = ThreadsOf(::getpid());
  const auto first = test::CollectTick(*collector, 0);
  const long own_after = ThreadsOf(::getpid());
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  ASSERT_TRUE(first.Has("proc.cpu.threads"));
  if (own_before == own_after) {
    EXPECT_DOUBLE_EQ(first["proc.cpu.threads"], static_cast<double>(own_before + 4));
  } else {
    EXPECT_GE(first["proc.cpu.threads"], static_cast<double>(std::min(own_before, own_after) + 4));
  }
  EXPECT_GT(first["proc.memory.rssMB"], 0.0);
  EXPECT_GT(first["proc.memory.percent"], 0.0);
  EXPECT_GE(first["cpu"], 0.0);  // the first sample: average since this process started

  // A child exits and is reaped: it is gone from the next sample.
  ASSERT_EQ(::kill(sleeper2, SIGKILL), 0);
  ASSERT_EQ(::waitpid(sleeper2, nullptr, 0), sleeper2);
  std::erase(children_, sleeper2);
  const long own_now = ThreadsOf(::getpid());
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  if (own_now == own_before) {
    EXPECT_DOUBLE_EQ(second["proc.cpu.threads"], static_cast<double>(own_now + 3));
  }
  EXPECT_DOUBLE_EQ(second["proc.cpu.threads"],
                   first["proc.cpu.threads"] - 1.0 + static_cast<double>(own_now - own_before));

  // A new child appears between samples: adopted on the next one.
  ASSERT_GT(SpawnSleeper(), 0);
  const auto third = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(third["proc.cpu.threads"],
                   second["proc.cpu.threads"] + 1.0 + static_cast<double>(ThreadsOf(::getpid()) - own_now));
}

TEST_F(LiveProcessTree, BusyChildShowsCpu) {
  ASSERT_GT(SpawnBusy(), 0);
  auto collector = MakeProcessTreeCollector(LiveContext());
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  // Give the child at least several scheduler ticks of CPU (generous for slow, shared CI machines).
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto second = test::CollectTick(*collector, 1);
  ASSERT_TRUE(second.status.ok()) << second.status.error();
  ASSERT_TRUE(second.Has("cpu"));
  EXPECT_GT(second["cpu"], 0.0);
  EXPECT_LE(second["cpu"], 120.0);  // a percentage of the available CPUs (plus tick-sampling jitter)
}

}  // namespace
}  // namespace runmon
