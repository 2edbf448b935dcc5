// The data of symon's GPU process table: JoinGpuProcesses (GPU listing + host facts), GpuProcessWatch
// against the fake libnvidia-ml.so.1 with real processes of this machine (this test and a child it starts),
// a watch without NVML, a driver call that hangs (the last snapshot stays, the screen never waits), and
// SymonSource handing the snapshot to its view model.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "app/gpu_process_watch.hpp"
#include "app/symon_source.hpp"
#include "nvml_test_support.hpp"

namespace runmon {
namespace {

using namespace std::chrono_literals;
using test::DefaultDevice;
using test::FakeHooks;
using test::Json;

const tui::GpuProcessRow* FindRow(const tui::GpuProcessSnapshot& snapshot, unsigned gpu, long pid) {
  for (const auto& row : snapshot.rows) {
    if (row.gpu == gpu && row.pid == pid) return &row;
  }
  return nullptr;
}

HostProcessOptions ThisHost() {
  return {.paths = HostPaths::System(),
          .ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK)),
          .page_bytes = static_cast<uint64_t>(sysconf(_SC_PAGESIZE))};
}

TEST(JoinGpuProcessesTest, HostFactsJoinedAndUnknownPidsLeftOut) {
  gpu::GpuProcessListing listing;
  listing.processes = {{0, 10, 1000, 50.0}, {1, 11, std::nullopt, std::nullopt}, {1, 12, 5, 1.0}};
  listing.problems = {"GPU 2: NVML cannot list its processes: Unknown Error"};
  std::map<long, HostProcess> host;
  host[10] = {.pid = 10,
              .ppid = 9,
              .user = "alice",
              .cpu_percent = 12.5,
              .rss_bytes = 4096,
              .command = "python x",
              .run = RunMembership{8, 9, "python train.py"}};
  host[11] = {
      .pid = 11, .ppid = 1, .user = "bob", .cpu_percent = {}, .rss_bytes = {}, .command = "Xorg", .run = {}};
  const tui::GpuProcessSnapshot snapshot = JoinGpuProcesses(listing, host);
  EXPECT_TRUE(snapshot.available);
  EXPECT_EQ(snapshot.problems, listing.problems);
  ASSERT_EQ(snapshot.rows.size(), 2u);  // 12 vanished
  const auto& a = snapshot.rows[0];
  EXPECT_EQ(a.gpu, 0u);
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.gpu_memory_bytes, 1000u);
  EXPECT_EQ(a.sm_percent, 50.0);
  EXPECT_EQ(a.cpu_percent, 12.5);
  EXPECT_EQ(a.rss_bytes, 4096u);
  EXPECT_TRUE(a.in_run);
  EXPECT_EQ(a.run_child_pid, 9);
  EXPECT_EQ(a.run_command, "python train.py");
  const auto& b = snapshot.rows[1];
  EXPECT_FALSE(b.in_run);
  EXPECT_FALSE(b.gpu_memory_bytes.has_value());
  EXPECT_FALSE(b.sm_percent.has_value());
}

class GpuProcessWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeHooks::Full().ResetState();
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      ::execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  void TearDown() override {
    ::unsetenv("RUNMON_FAKE_NVML_SCENARIO");
    ::unsetenv("RUNMON_NVML_LIBRARY");
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
  }

  // Two GPUs: this test on both, the child on GPU 1, and a PID no process has.
  void UseScenario(const Json& fail = Json::object()) {
    Json gpu0 = DefaultDevice(0);
    gpu0["compute_processes"] = Json::array({{{"pid", ::getpid()}, {"used_memory", 1u << 30}}});
    gpu0["graphics_processes"] = Json::array();
    gpu0["process_utilization"] = Json::array({{{"pid", ::getpid()}, {"sm", 70}, {"timestamp", "now"}}});
    if (!fail.empty()) gpu0["fail"] = fail;
    Json gpu1 = DefaultDevice(1);
    gpu1["compute_processes"] =
        Json::array({{{"pid", child_}, {"used_memory", 4096}}, {{"pid", 4194304 + 7}, {"used_memory", 1}}});
    gpu1["graphics_processes"] = Json::array({{{"pid", ::getpid()}, {"used_memory", "N/A"}}});
    const Json scenario{{"driver_version", "550.90.07"}, {"devices", Json::array({gpu0, gpu1})}};
    ::setenv("RUNMON_FAKE_NVML_SCENARIO", dir_.Write(scenario).c_str(), 1);
  }

  static std::shared_ptr<const tui::GpuProcessSnapshot> WaitFor(const GpuProcessWatch& watch,
                                                                uint64_t listings) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (watch.listings() < listings && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(10ms);
    return watch.Latest();
  }

  pid_t child_ = -1;
  test::ScenarioDir dir_;
};

TEST_F(GpuProcessWatchTest, ListsTheGpusProcessesWithTheirHostFacts) {
  UseScenario();
  GpuProcessWatch watch(NvidiaProcessListerFactory(test::FakeFullPath()), ThisHost(), 50ms);
  const auto snapshot = WaitFor(watch, 3);
  ASSERT_NE(snapshot, nullptr);
  ASSERT_TRUE(snapshot->available) << snapshot->unavailable_reason;
  EXPECT_TRUE(snapshot->problems.empty());
  ASSERT_EQ(snapshot->rows.size(), 3u) << "the PID without a process is left out";
  const auto* self = FindRow(*snapshot, 0, ::getpid());
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->gpu_memory_bytes, 1u << 30);
  EXPECT_FALSE(self->user.empty());
  EXPECT_NE(self->command.find("gpu_process_watch_test"), std::string::npos) << self->command;
  EXPECT_TRUE(self->cpu_percent.has_value()) << "a later listing has the CPU % since the one before";
  EXPECT_TRUE(self->rss_bytes.has_value() && *self->rss_bytes > 0);
  const auto* sleeper = FindRow(*snapshot, 1, child_);
  ASSERT_NE(sleeper, nullptr);
  EXPECT_EQ(sleeper->command, "sleep 60");
  EXPECT_FALSE(sleeper->in_run);
  const auto* graphics = FindRow(*snapshot, 1, ::getpid());
  ASSERT_NE(graphics, nullptr);
  EXPECT_FALSE(graphics->gpu_memory_bytes.has_value());
}

TEST_F(GpuProcessWatchTest, WithoutNvml) {
  GpuProcessWatch watch(NvidiaProcessListerFactory("/nonexistent/libnvidia-ml.so.1"), ThisHost(), 50ms);
  const auto snapshot = WaitFor(watch, 1);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_FALSE(snapshot->available);
  EXPECT_EQ(snapshot->unavailable_reason.rfind("no NVIDIA GPU (", 0), 0u) << snapshot->unavailable_reason;
}

TEST_F(GpuProcessWatchTest, DriverNotLoaded) {
  // No scenario: the fake's nvmlInit answers DRIVER_NOT_LOADED.
  GpuProcessWatch watch(NvidiaProcessListerFactory(test::FakeFullPath()), ThisHost(), 50ms);
  const auto snapshot = WaitFor(watch, 1);
  ASSERT_NE(snapshot, nullptr);
  EXPECT_FALSE(snapshot->available);
  EXPECT_EQ(snapshot->unavailable_reason.rfind("NVML cannot list processes: ", 0), 0u)
      << snapshot->unavailable_reason;
}

TEST_F(GpuProcessWatchTest, HungDriverKeepsTheLastSnapshot) {
  UseScenario({{"nvmlDeviceGetComputeRunningProcesses_v3", {{"hang_seconds", 4}, {"after_calls", 1}}}});
  const auto started = std::chrono::steady_clock::now();
  {
    GpuProcessWatch watch(NvidiaProcessListerFactory(test::FakeFullPath()), ThisHost(), 50ms);
    const auto first = WaitFor(watch, 1);
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->available) << first->unavailable_reason;
    std::this_thread::sleep_for(500ms);  // the second listing hangs in the driver meanwhile
    const auto asked = std::chrono::steady_clock::now();
    const auto latest = watch.Latest();
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 100ms);
    EXPECT_EQ(latest, first);
    EXPECT_EQ(watch.listings(), 1u);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s) << "leaving does not wait for the driver";
  std::this_thread::sleep_for(4s);  // the abandoned listing ends before the next test resets the fake
}

TEST_F(GpuProcessWatchTest, SymonSourceHandsTheSnapshotToTheView) {
  UseScenario();
  ::setenv("RUNMON_NVML_LIBRARY", test::FakeFullPath().c_str(), 1);
  auto source = SymonSource::Start("100ms");
  ASSERT_TRUE(source.ok()) << source.error();
  (*source)->WaitForGpuProcesses(2, 10s);
  tui::LeetView view;
  const tui::ViewModel model = (*source)->BuildViewModel(view, 0);
  ASSERT_NE(model.gpu_processes, nullptr);
  EXPECT_EQ(model.gpu_processes, (*source)->gpu_processes().get());
  ASSERT_TRUE(model.gpu_processes->available) << model.gpu_processes->unavailable_reason;
  EXPECT_NE(FindRow(*model.gpu_processes, 0, ::getpid()), nullptr);
  EXPECT_NE(FindRow(*model.gpu_processes, 1, child_), nullptr);
}

}  // namespace
}  // namespace runmon
