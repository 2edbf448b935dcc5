// RunTool against fake tools: output and stderr kept, argv without a shell, the environment given and
// nothing else (no inherited fds, default signals); a missing tool, a nonzero exit and a signal reported
// with stderr's tail; a tool that hangs (also one whose grandchild holds the pipe, one that closes its
// pipes, one that ignores SIGTERM) ended at the deadline with its whole group; a flood cut at the cap;
// many tools at once from several threads.
#include "host/tool_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fake_tool.hpp"
#include "support/temp_dir.hpp"

namespace runmon {
namespace {

using test::ReadFile;
using test::SecondsSince;
using test::StopsRunning;
using test::TempDir;
using test::WriteFakeTool;
using Clock = std::chrono::steady_clock;

ToolLimits QuickLimits() {
  ToolLimits limits;
  limits.deadline_seconds = 0.5;
  limits.kill_grace_seconds = 0.2;
  return limits;
}

TEST(TailBuffer, KeepsTheLastBytesAcrossAppendsAndSaysWhenSomeWereDropped) {
  TailBuffer tail(8);
  tail.Append("  ab");
  EXPECT_EQ(tail.Text(), "ab");
  tail.Append("cdef\n");  // 9 bytes: the first space is dropped
  EXPECT_EQ(tail.Text(), "...abcdef");
  tail.Append("ghij");
  EXPECT_EQ(tail.Text(), "...def\nghij");
  tail.Append("0123456789");
  EXPECT_EQ(tail.Text(), "...23456789");
  tail.Clear();
  tail.Append("\n\t ");
  EXPECT_EQ(tail.Text(), "");
}

TEST(RunTool, KeepsStdoutAndTheTailOfStderr) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "echo '{\"card0\": 1}'; echo 'a warning' >&2");
  auto run = RunTool({.executable = tool}, QuickLimits());
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->stdout_text, "{\"card0\": 1}\n");
  EXPECT_EQ(run->stderr_tail, "a warning");
}

TEST(RunTool, PassesArgumentsWithoutAShellAndOnlyTheGivenEnvironment) {
  TempDir dir;
  const auto tool =
      WriteFakeTool(dir.path(), "tool", R"(printf '%s|' "$@"; printf '%s|%s' "$ONLY" "${HOME:-unset}")");
  ToolCommand command{.executable = tool,
                      .arguments = {"two words", "$HOME;", "*"},
                      .environment = std::vector<std::string>{"ONLY=given"}};
  auto run = RunTool(command, QuickLimits());
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->stdout_text, "two words|$HOME;|*|given|unset");
}

TEST(RunTool, FindsANameOnTheGivenSearchPath) {
  TempDir dir;
  WriteFakeTool(dir.path(), "rocm-smi", "echo found");
  auto run = RunTool({.executable = "rocm-smi", .search_path = "/nonexistent:" + dir.path().string()},
                     QuickLimits());
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->stdout_text, "found\n");
}

TEST(RunTool, AMissingToolIsAClearError) {
  TempDir dir;
  auto by_name = RunTool({.executable = "no-such-tool", .search_path = dir.path().string()}, QuickLimits());
  ASSERT_FALSE(by_name.ok());
  EXPECT_EQ(by_name.error(), "no-such-tool: command not found");
  const std::string path = (dir.path() / "absent").string();
  auto by_path = RunTool({.executable = path}, QuickLimits());
  ASSERT_FALSE(by_path.ok());
  EXPECT_EQ(by_path.error(), path + ": no such file");
}

TEST(RunTool, ANonzeroExitCarriesTheTailOfStderr) {
  TempDir dir;
  // 3000 bytes of stderr, then the real reason: the message keeps the last 2048 bytes.
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "head -c 3000 /dev/zero | tr '\\0' x >&2; echo >&2; "
                                  "echo 'ERROR: GPU not found' >&2; echo partial; exit 3");
  auto run = RunTool({.executable = tool}, QuickLimits());
  ASSERT_FALSE(run.ok());
  const std::string& message = run.error();
  EXPECT_EQ(message.rfind(tool + ": exited with status 3: ...xxx", 0), 0u) << message;
  EXPECT_TRUE(message.ends_with("xxx\nERROR: GPU not found")) << message;
  EXPECT_LE(message.size(), tool.size() + 2048 + 40);
}

TEST(RunTool, ASignalIsNamed) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "echo 'about to crash' >&2; kill -SEGV $$");
  auto run = RunTool({.executable = tool}, QuickLimits());
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": killed by SIGSEGV: about to crash");
}

TEST(RunTool, AHangingToolAndItsGrandchildHoldingThePipeAreKilledAtTheDeadline) {
  TempDir dir;
  const auto pid_file = dir.path() / "grandchild";
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "sleep 1000 & echo $! > '" + pid_file.string() + "'; echo started; wait");
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, QuickLimits());
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": timed out after 0.5 s");
  const int grandchild = std::stoi(ReadFile(pid_file));
  EXPECT_TRUE(StopsRunning(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(RunTool, AStopRequestEndsTheToolBeforeItsDeadline) {
  TempDir dir;
  const auto pid_file = dir.path() / "grandchild";
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "sleep 1000 & echo $! > '" + pid_file.string() + "'; echo started; wait");
  std::atomic<bool> stop{false};
  ToolLimits limits = QuickLimits();
  limits.deadline_seconds = 600;
  limits.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, limits);
  stopper.join();
  EXPECT_LT(SecondsSince(start), 30.0);  // not the 600 s deadline
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": stopped");
  EXPECT_TRUE(StopsRunning(std::stoi(ReadFile(pid_file))));
}

TEST(RunTool, AToolThatExitsWhileItsChildHoldsThePipeTimesOutAndTheChildIsKilled) {
  TempDir dir;
  const auto pid_file = dir.path() / "grandchild";
  const auto tool =
      WriteFakeTool(dir.path(), "tool", "sleep 1000 & echo $! > '" + pid_file.string() + "'; exit 0");
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, QuickLimits());
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": timed out after 0.5 s");
  EXPECT_TRUE(StopsRunning(std::stoi(ReadFile(pid_file))));
}

TEST(RunTool, AToolThatClosesItsPipesAndGoesOnIsKilledAtTheDeadline) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "exec >&- 2>&-; sleep 1000");
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, QuickLimits());
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": timed out after 0.5 s");
}

TEST(RunTool, AToolIgnoringSigtermGetsSigkill) {
  TempDir dir;
  const auto pid_file = dir.path() / "pid";
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "trap '' TERM; echo $$ > '" + pid_file.string() +
                                      "'; echo 'still here' >&2; while :; do sleep 0.05; done");
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, QuickLimits());
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(
      run.error(),
      tool + ": timed out after 0.5 s (killed with SIGKILL after ignoring SIGTERM for 0.2 s): still here");
  EXPECT_TRUE(StopsRunning(std::stoi(ReadFile(pid_file))));
}

TEST(RunTool, AFloodIsCutAtTheCap) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "exec cat /dev/zero");
  ToolLimits limits = QuickLimits();
  limits.deadline_seconds = 30;
  limits.max_stdout_bytes = 1 << 20;
  const auto start = Clock::now();
  auto run = RunTool({.executable = tool}, limits);
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error(), tool + ": output over 1048576 bytes");
}

TEST(RunTool, OutputUpToTheCapIsKept) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "head -c 1048576 /dev/zero");
  ToolLimits limits = QuickLimits();
  limits.deadline_seconds = 30;
  limits.max_stdout_bytes = 1 << 20;
  auto run = RunTool({.executable = tool}, limits);
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->stdout_text.size(), 1u << 20);
}

TEST(RunTool, TheToolGetsNoInheritedDescriptorDefaultSignalsAndAnEmptyStdin) {
  TempDir dir;
  // Opened without O_CLOEXEC, as a library might: the tool must still not get it.
  const int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 3);
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous);
  const auto previous_pipe = ::signal(SIGPIPE, SIG_IGN);
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "if [ -e /proc/$$/fd/" + std::to_string(leaked) +
                                      " ]; then echo leaked; else echo closed; fi; "
                                      "cat; exec grep -E '^Sig(Blk|Ign)' /proc/self/status");
  auto run = RunTool({.executable = tool}, QuickLimits());
  ::signal(SIGPIPE, previous_pipe);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(leaked);
  ASSERT_TRUE(run.ok()) << run.error();
  const std::string expected_start = "closed\nSigBlk:\t0000000000000000\nSigIgn:\t";
  ASSERT_EQ(run->stdout_text.substr(0, expected_start.size()), expected_start);
  // glibc's posix_spawn sets its own two internal signals (32, 33) to SIG_IGN; the classic ones
  // (1-31) are all back to their defaults, SIGPIPE included.
  const unsigned long long ignored = std::stoull(run->stdout_text.substr(expected_start.size()), nullptr, 16);
  EXPECT_EQ(ignored & 0x7fffffffULL, 0u) << run->stdout_text;
}

TEST(RunTool, ManyThreadsRunToolsAtOnceEachGettingItsOwnOutput) {
  TempDir dir;
  const auto slow = WriteFakeTool(dir.path(), "slow", "exec sleep 1000");
  const auto quick = WriteFakeTool(dir.path(), "quick", "echo \"$1\"");
  ToolLimits slow_limits = QuickLimits();
  slow_limits.deadline_seconds = 8;
  std::thread slow_thread([&] { (void)RunTool({.executable = slow}, slow_limits); });
  // While the slow tool runs, quick tools started from many threads finish on their own time: none holds
  // another's pipe.
  constexpr int kThreads = 8;
  constexpr int kRunsEach = 5;
  std::vector<std::vector<std::string>> outputs(kThreads);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsEach; ++i) {
        auto run = RunTool({.executable = quick, .arguments = {std::to_string(t * 100 + i)}}, slow_limits);
        outputs[t].push_back(run.ok() ? run->stdout_text : run.error());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LT(SecondsSince(start), 5.0);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kRunsEach; ++i) EXPECT_EQ(outputs[t][i], std::to_string(t * 100 + i) + "\n");
  }
  slow_thread.join();
}

}  // namespace
}  // namespace runmon
