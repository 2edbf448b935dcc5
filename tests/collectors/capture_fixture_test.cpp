// tools/capture_fixture.sh on this machine: capture a small live tree (a sleeping child with two sleeping
// grandchildren) with a second reading, then run collectors on the captured tree: the host facts match the
// real machine's, and the process-tree collector finds the three processes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "fixture_tree.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;

class CaptureFixture : public ::testing::Test {
 protected:
  void TearDown() override {
    for (pid_t pid : grandchildren_) ::kill(pid, SIGKILL);
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
  }

  // A child that forks two sleeping grandchildren, reports their PIDs, then sleeps itself.
  bool SpawnTree() {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    child_ = ::fork();
    if (child_ == 0) {
      ::close(fds[0]);
      pid_t kids[2];
      for (pid_t& kid : kids) {
        kid = ::fork();
        if (kid == 0) {
          ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
          ::_exit(127);
        }
      }
      if (::write(fds[1], kids, sizeof kids) != static_cast<ssize_t>(sizeof kids)) ::_exit(126);
      ::close(fds[1]);
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    pid_t kids[2] = {-1, -1};
    const bool ok = child_ > 0 && ::read(fds[0], kids, sizeof kids) == static_cast<ssize_t>(sizeof kids);
    ::close(fds[0]);
    if (ok) grandchildren_ = {kids[0], kids[1]};
    // Let the child finish its exec, so the capture sees "sleep" rather than a copy of this test.
    for (int i = 0; i < 200 && ok; ++i) {
      auto comm = ReadFileToString("/proc/" + std::to_string(child_) + "/comm");
      if (comm && comm->starts_with("sleep")) break;
      ::usleep(10000);
    }
    return ok;
  }

  pid_t child_ = -1;
  std::vector<pid_t> grandchildren_;
};

TEST_F(CaptureFixture, CapturedTreeFeedsTheCollectors) {
  ASSERT_TRUE(SpawnTree());
  test::FixtureTree out;  // an empty temp dir; the script fills it
  const fs::path script = test::FixturesDir() / ".." / ".." / "tools" / "capture_fixture.sh";
  ASSERT_TRUE(fs::exists(script)) << script;
  const std::string command = "bash '" + script.string() + "' -p " + std::to_string(child_) + " -t 0.2 '" +
                              out.root().string() + "' >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  for (const char* file :
       {"proc/stat", "proc/meminfo", "proc/diskstats", "proc/net/dev", "proc/cpuinfo", "proc/self/mountinfo",
        "sys/devices/system/cpu/online", "etc/os-release", "README.md"}) {
    EXPECT_TRUE(out.Exists(file)) << file;
  }
  const std::string pid_dir = "proc/" + std::to_string(child_) + "/";
  for (const char* file : {"stat", "statm", "status", "cgroup", "mountinfo"}) {
    EXPECT_TRUE(out.Exists(pid_dir + file)) << pid_dir << file;
  }
  for (pid_t kid : grandchildren_) {
    EXPECT_TRUE(out.Exists("proc/" + std::to_string(kid) + "/stat")) << kid;
  }
  EXPECT_TRUE(fs::is_directory(out.Path("t1/proc")));
  EXPECT_NE(out.Read("README.md").find("-p " + std::to_string(child_)), std::string::npos);
  // Only the tree was captured: not this test process.
  EXPECT_FALSE(out.Exists("proc/" + std::to_string(::getpid()) + "/stat"));

  // Host facts from the capture are the machine's.
  const HostFacts captured = DetectHostFacts(out.paths(), Settings{}, child_);
  const HostFacts real = DetectHostFacts(HostPaths::System(), Settings{}, child_);
  EXPECT_EQ(captured.logical_cpus, real.logical_cpus);
  EXPECT_EQ(captured.memory_total_bytes, real.memory_total_bytes);
  EXPECT_EQ(captured.cgroup.memory_limit_bytes, real.cgroup.memory_limit_bytes);
  EXPECT_EQ(captured.cgroup.CpuLimit(), real.cgroup.CpuLimit());

  // The process tree on the captured files: the child and its two grandchildren, one thread each.
  test::FakeClocks clocks(1e6, 1e6);
  auto collector = MakeProcessTreeCollector(test::FixtureContext(out.paths(), child_, clocks));
  const auto c = test::CollectTick(*collector, 0);
  ASSERT_TRUE(c.status.ok()) << c.status.error();
  EXPECT_DOUBLE_EQ(c["proc.cpu.threads"], 3.0);
  EXPECT_GT(c["proc.memory.rssMB"], 0.0);
}

TEST(CaptureFixtureUsage, RejectsBadArguments) {
  const fs::path script = test::FixturesDir() / ".." / ".." / "tools" / "capture_fixture.sh";
  test::FixtureTree out;
  out.Write("occupied", "x");
  const std::string quiet = " >/dev/null 2>&1";
  EXPECT_NE(std::system(("bash '" + script.string() + "'" + quiet).c_str()), 0);
  EXPECT_NE(std::system(("bash '" + script.string() + "' -p notapid /tmp/x" + quiet).c_str()), 0);
  EXPECT_NE(std::system(("bash '" + script.string() + "' -p 1 -t soon /tmp/x" + quiet).c_str()), 0);
  // A non-empty destination is never overwritten.
  EXPECT_NE(
      std::system(("bash '" + script.string() + "' -p 1 '" + out.root().string() + "'" + quiet).c_str()), 0);
  EXPECT_EQ(out.Read("occupied"), "x");
}

}  // namespace
}  // namespace runmon
