// A property of the process-tree collector on this machine's real /proc: for random process trees, the CPU
// time its samples add up to (cpu / 100 x interval x CPUs, summed over the samples after the first) is the
// CPU time the kernel charged the tree's root (getrusage(RUSAGE_CHILDREN) of this test once the root is
// reaped) within 2 % plus one clock tick per sample, and no sample exceeds 100.
//
// Each seed builds a plan (random depth and fan-out, busy loops of random CPU length, children forked at
// random moments between ticks, parents that reap promptly or late, double-forked orphans, leaves that are
// shell loops run through `env`, `nohup`, `timeout` or `time` when present, with a nested `sh -c`). The
// root waits on a pipe until the first sample, so everything it does is inside the sampled window; samples
// come at random intervals of 5-70 ms, and the last one while the root is a zombie (as `runmon run` takes
// it). Orphans re-parented to init are outside what the kernel charges the root; runmon counts them while it
// sees them (they are still the run's work), so for them the sum may exceed the root's rusage by at most
// their own CPU time, which each orphan reports through a pipe. The seed is printed on failure.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

enum class Reap { kPrompt, kLate, kOrphan };

struct Node {
  int busy_ms = 0;        // CPU time the process burns itself
  int fork_delay_ms = 0;  // how long its parent sleeps before forking it
  Reap reap = Reap::kPrompt;
  std::string wrapper;  // a leaf run as `<wrapper> sh -c '<loop>; sh -c "<loop>"'`; empty: a forked node
  int shell_loops = 0;
  std::vector<Node> children;
};

struct Plan {
  Node root;
  int orphans = 0;
};

std::vector<std::string> AvailableWrappers() {
  std::vector<std::string> found;
  for (const char* path : {"/usr/bin/env", "/usr/bin/nohup", "/usr/bin/timeout", "/usr/bin/time"}) {
    if (::access(path, X_OK) == 0) found.emplace_back(path);
  }
  return found;
}

Node RandomNode(std::mt19937& rng, int depth, Plan& plan, const std::vector<std::string>& wrappers) {
  auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  Node node;
  node.busy_ms = uniform(0, 200);
  node.fork_delay_ms = uniform(0, 60);
  const int fan_out = depth >= 3 ? 0 : uniform(0, depth == 0 ? 4 : 2);
  for (int i = 0; i < fan_out; ++i) {
    Node child;
    const int kind = uniform(0, 9);
    if (kind < 3 && !wrappers.empty()) {
      child.wrapper = wrappers[static_cast<size_t>(uniform(0, static_cast<int>(wrappers.size()) - 1))];
      child.shell_loops = uniform(2000, 30000);
      child.fork_delay_ms = uniform(0, 60);
    } else {
      child = RandomNode(rng, depth + 1, plan, wrappers);
      if (kind == 3 && depth > 0) {
        child.reap = Reap::kOrphan;
        child.children.clear();
        ++plan.orphans;
      } else if (kind >= 7) {
        child.reap = Reap::kLate;
      }
    }
    node.children.push_back(std::move(child));
  }
  return node;
}

double ProcessCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void Busy(int milliseconds) {
  const double until = ProcessCpuSeconds() + milliseconds / 1000.0;
  volatile unsigned long spin = 0;
  while (ProcessCpuSeconds() < until) {
    for (int i = 0; i < 1000; ++i) spin = spin + 1;
  }
}

void SleepMs(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

[[noreturn]] void ExecWrapped(const Node& node) {
  const int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
  }
  const std::string inner = std::to_string(node.shell_loops / 2);
  const std::string script = "i=0; while [ $i -lt " + std::to_string(node.shell_loops) +
                             " ]; do i=$((i+1)); done; sh -c 'j=0; while [ $j -lt " + inner +
                             " ]; do j=$((j+1)); done'";
  const std::string& wrapper = node.wrapper;
  if (wrapper.ends_with("/timeout")) {
    ::execl(wrapper.c_str(), "timeout", "60", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
  } else if (wrapper.ends_with("/time")) {
    ::execl(wrapper.c_str(), "time", "-o", "/dev/null", "sh", "-c", script.c_str(),
            static_cast<char*>(nullptr));
  } else {
    ::execl(wrapper.c_str(), wrapper.c_str(), "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
  }
  ::_exit(127);
}

// Runs in a forked process; never returns.
[[noreturn]] void RunNode(const Node& node, int orphan_fd) {
  std::vector<std::pair<pid_t, Reap>> children;
  for (const Node& child : node.children) {
    SleepMs(child.fork_delay_ms);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (child.reap == Reap::kOrphan) {
        // Double fork: the grandchild runs on, re-parented to init once this intermediate exits.
        if (::fork() == 0) {
          Busy(child.busy_ms);
          rusage own{};
          ::getrusage(RUSAGE_SELF, &own);
          const long micros = own.ru_utime.tv_sec * 1000000L + own.ru_utime.tv_usec +
                              own.ru_stime.tv_sec * 1000000L + own.ru_stime.tv_usec;
          if (::write(orphan_fd, &micros, sizeof micros) != static_cast<ssize_t>(sizeof micros)) ::_exit(1);
          ::_exit(0);
        }
        ::_exit(0);
      }
      if (!child.wrapper.empty()) ExecWrapped(child);
      RunNode(child, orphan_fd);
    }
    if (pid > 0) children.emplace_back(pid, child.reap);
  }
  Busy(node.busy_ms);
  for (const auto& [pid, reap] : children) {
    if (reap == Reap::kLate) continue;
    ::waitpid(pid, nullptr, 0);
  }
  bool late = false;
  for (const auto& [pid, reap] : children) {
    if (reap != Reap::kLate) continue;
    if (!late) SleepMs(150);  // its late children are zombies meanwhile
    late = true;
    ::waitpid(pid, nullptr, 0);
  }
  ::_exit(0);
}

double ChildrenCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

TEST(ProcessTreeCpuProperty, SamplesAddUpToTheRootsRusage) {
  const auto wrappers = AvailableWrappers();
  const double tick_seconds = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const unsigned seed : {11u, 23u, 37u, 59u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Plan plan;
    plan.root = RandomNode(rng, 0, plan, wrappers);
    int go[2], orphans[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe2(orphans, O_CLOEXEC), 0);
    const double rusage_before = ChildrenCpuSeconds();
    const pid_t root = ::fork();
    ASSERT_GE(root, 0);
    if (root == 0) {
      ::close(go[1]);
      char byte = 0;
      if (::read(go[0], &byte, 1) != 1) ::_exit(1);
      RunNode(plan.root, orphans[1]);
    }
    ::close(go[0]);
    ::close(orphans[1]);

    CollectorContext ctx;
    ctx.paths = HostPaths::System();
    ctx.pid = root;
    ctx.facts = DetectHostFacts(ctx.paths, ctx.settings, ctx.pid);
    ctx.facts.cgroup = CgroupLimits{};  // the denominator is then the logical CPUs
    const double cpus = ctx.facts.logical_cpus > 0 ? ctx.facts.logical_cpus : 1.0;
    auto last_mono = std::make_shared<double>(0);
    const Clocks system = Clocks::System();
    ctx.clocks = Clocks{system.seconds_since_boot, [system, last_mono] {
                          *last_mono = system.monotonic_seconds();
                          return *last_mono;
                        }};
    auto collector = MakeProcessTreeCollector(ctx);
    ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
    double previous_mono = *last_mono;
    ASSERT_EQ(::write(go[1], "g", 1), 1);
    ::close(go[1]);

    std::uniform_int_distribution<int> pause(5, 70);
    double summed = 0;
    size_t samples = 0;
    for (uint64_t index = 1;; ++index) {
      SleepMs(pause(rng));
      siginfo_t info{};
      ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(root), &info, WEXITED | WNOHANG | WNOWAIT), 0);
      const bool root_exited = info.si_pid == root;
      const auto c = test::CollectTick(*collector, index, root_exited);
      ASSERT_TRUE(c.status.ok()) << c.status.error();
      if (c.Has("cpu")) {
        EXPECT_GE(c["cpu"], 0.0);
        EXPECT_LE(c["cpu"], 100.0) << "sample " << index;
        summed += c["cpu"] / 100.0 * (*last_mono - previous_mono) * cpus;
      }
      previous_mono = *last_mono;
      ++samples;
      if (root_exited) break;
      ASSERT_LT(index, 2000u) << "the tree did not finish";
    }
    ASSERT_EQ(::waitpid(root, nullptr, 0), root);
    const double charged = ChildrenCpuSeconds() - rusage_before;

    // Every orphan reports its own CPU time when it is done (at most 10 s from now).
    double orphan_seconds = 0;
    for (int reported = 0; reported < plan.orphans; ++reported) {
      pollfd readable{orphans[0], POLLIN, 0};
      ASSERT_EQ(::poll(&readable, 1, 10000), 1) << "an orphan did not report";
      long micros = 0;
      ASSERT_EQ(::read(orphans[0], &micros, sizeof micros), static_cast<ssize_t>(sizeof micros));
      orphan_seconds += static_cast<double>(micros) * 1e-6;
    }
    ::close(orphans[0]);

    const double tolerance = 0.02 * charged + static_cast<double>(samples) * tick_seconds;
    EXPECT_GE(summed, charged - tolerance) << "samples " << samples << ", orphans " << plan.orphans;
    EXPECT_LE(summed, charged + orphan_seconds + tolerance)
        << "samples " << samples << ", orphans " << plan.orphans << " (" << orphan_seconds << " s)";
    std::printf("seed %u: %zu samples, sum %.3f s, rusage %.3f s, %d orphans %.3f s, tolerance %.3f s\n",
                seed, samples, summed, charged, plan.orphans, orphan_seconds, tolerance);
  }
}

}  // namespace
}  // namespace runmon
