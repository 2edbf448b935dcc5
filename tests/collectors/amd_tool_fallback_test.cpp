// The AMD family's tool fallback against the fake rocm-smi and amd-smi (tests/fakes/amd_tools), found on the
// PATH of the collector context's injected environment and run through its run_tool: which tool is chosen
// (amd-smi over rocm-smi, neither), a normal reading and its staleness, the interval between runs, amd-smi's
// list paired with its metrics, and the failures: a tool that hangs (Request returns while it runs, no
// second one starts, the deadline ends it, the destructor does not wait for ever), garbage, a non-zero
// exit, a flood past the output cap, an empty output; each said once and retried with a backoff; and
// Debian's real rocm-smi on a host without an AMD GPU.
#include "collectors/amd/amd_tool_fallback.hpp"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/collector_context.hpp"
#include "host/fake_tool.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon::amd {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

fs::path FakesDir() {
  return fs::path(RUNMON_FIXTURES_DIR).parent_path() / "fakes" / "amd_tools";
}

std::string FixturePath(const std::string& relative) {
  return (fs::path(RUNMON_FIXTURES_DIR) / relative).string();
}

constexpr const char* kRocmSmiDir = "rocm_smi";
constexpr const char* kAmdSmiDir = "amd_smi";

// A collector context whose PATH holds the fake tools' directories, and the fake's settings.
class FakeAmdTools {
 public:
  FakeAmdTools(const std::vector<std::string>& tool_dirs, const std::string& behaviour,
               const std::string& fixture = {}) {
    // Debian's own rocm-smi is in /usr/bin (and /bin): a test without fakes has a PATH of nothing else.
    std::string path = dir_.path().string();
    if (!tool_dirs.empty()) {
      path.clear();
      for (const std::string& dir : tool_dirs) path += (FakesDir() / dir).string() + ":";
      path += "/usr/bin:/bin";  // cat, sleep and yes for the fake
    }
    ctx_.environment = {
        {"PATH", path},
        {"RUNMON_FAKE_AMD_LOG", log_path().string()},
        {"RUNMON_FAKE_AMD_BEHAVIOUR", behaviour},
        {"RUNMON_FAKE_AMD_FIXTURE", fixture},
        {"RUNMON_FAKE_AMD_SMI_LIST", FixturePath("amd_smi/amdsmi6.2_mi300x_2gpus_list.json")}};
  }

  Result<std::unique_ptr<AmdToolFallback>> Find(ToolFallbackOptions options = QuickOptions()) {
    return AmdToolFallback::Find(ctx_.run_tool, ToolSearchPath(ctx_), ctx_.environment, options);
  }

  static ToolFallbackOptions QuickOptions() {
    ToolFallbackOptions options;
    options.interval_seconds = 1;
    options.deadline_seconds = 3;
    options.kill_grace_seconds = 0.2;
    options.max_stdout_bytes = 64 * 1024;
    return options;
  }

  // The runs the fake logged: "start <tool> <pid> <args>".
  std::vector<std::string> Starts() const {
    std::vector<std::string> starts;
    std::ifstream in(log_path());
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("start ")) starts.push_back(line);
    }
    return starts;
  }

  static int PidOf(const std::string& start) {
    std::istringstream fields(start);
    std::string word, tool;
    int pid = -1;
    fields >> word >> tool >> pid;
    return pid;
  }

 private:
  fs::path log_path() const { return dir_.path() / "runs.log"; }

  test::TempDir dir_{"runmon-amd-tools"};
  CollectorContext ctx_;
};

bool Finishes(const AmdToolFallback& fallback) {
  return testing::WaitUntil([&] { return !fallback.InFlight(); }, std::chrono::milliseconds(20'000));
}

std::unique_ptr<AmdToolFallback> Started(FakeAmdTools& tools,
                                         ToolFallbackOptions options = FakeAmdTools::QuickOptions()) {
  auto found = tools.Find(options);
  EXPECT_TRUE(found.ok()) << found.error();
  return found.ok() ? std::move(*found) : nullptr;
}

// One request and its run to the end: the failure it left.
std::optional<std::string> FailureOfOneRun(FakeAmdTools& tools) {
  auto fallback = Started(tools);
  if (!fallback) return std::nullopt;
  fallback->Request(0);
  EXPECT_TRUE(Finishes(*fallback));
  EXPECT_FALSE(fallback->Latest(0));
  return fallback->TakeFailure();
}

TEST(AmdToolFallback, PrefersAmdSmiTakesRocmSmiAndSaysWhenNeitherIsThere) {
  FakeAmdTools both({kRocmSmiDir, kAmdSmiDir}, "print");
  auto found = both.Find();
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ((*found)->tool(), VendorTool::kAmdSmi);

  FakeAmdTools rocm({kRocmSmiDir}, "print");
  found = rocm.Find();
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ((*found)->tool(), VendorTool::kRocmSmi);

  FakeAmdTools neither({}, "print");
  found = neither.Find();
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().rfind("neither amd-smi nor rocm-smi is on PATH (", 0), 0u) << found.error();
  EXPECT_TRUE(neither.Starts().empty());
}

TEST(AmdToolFallback, RocmSmiReadingFreshForThreeIntervalsAndNoMoreOftenThanTheInterval) {
  FakeAmdTools tools({kRocmSmiDir}, "print",
                     FixturePath("amd_rocm_smi/rocm6_mi300x_1card_current_socket_power.json"));
  auto fallback = Started(tools);
  ASSERT_TRUE(fallback);
  EXPECT_FALSE(fallback->Latest(0));
  fallback->Request(10);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_FALSE(fallback->TakeFailure());
  auto reading = fallback->Latest(10.5);
  ASSERT_TRUE(reading);
  EXPECT_EQ(reading->taken_at_seconds, 10.0);
  ASSERT_EQ(reading->cards.size(), 1u);
  EXPECT_EQ(reading->cards[0].pci_bus, "0000:0c:00.0");
  EXPECT_EQ(reading->cards[0].values.power_watts, 383.0);
  EXPECT_EQ(reading->cards[0].values.vram_used_bytes, 167174946816u);
  EXPECT_TRUE(fallback->Latest(13.0));   // three intervals old
  EXPECT_FALSE(fallback->Latest(13.5));  // stale
  ASSERT_EQ(tools.Starts().size(), 1u);
  EXPECT_EQ(tools.Starts()[0].substr(tools.Starts()[0].rfind(' ') + 1), "--json");

  fallback->Request(10.5);  // within the interval of the last start: nothing
  EXPECT_FALSE(fallback->InFlight());
  EXPECT_EQ(tools.Starts().size(), 1u);
  fallback->Request(11);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(tools.Starts().size(), 2u);
  EXPECT_EQ(fallback->Latest(11)->taken_at_seconds, 11.0);
}

TEST(AmdToolFallback, AmdSmiListsOnceAndPairsEachGpuWithItsBus) {
  FakeAmdTools tools({kRocmSmiDir, kAmdSmiDir}, "print",
                     FixturePath("amd_smi/amdsmi6.2_mi300x_2gpus_metric_value_unit.json"));
  auto fallback = Started(tools);
  ASSERT_TRUE(fallback);
  fallback->Request(0);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_FALSE(fallback->TakeFailure());
  auto reading = fallback->Latest(0);
  ASSERT_TRUE(reading);
  ASSERT_EQ(reading->cards.size(), 2u);
  EXPECT_EQ(reading->cards[0].pci_bus, "0000:0c:00.0");
  EXPECT_EQ(reading->cards[1].pci_bus, "0000:22:00.0");
  EXPECT_EQ(reading->cards[1].values.power_watts, 139.0);
  fallback->Request(1);
  ASSERT_TRUE(Finishes(*fallback));
  const auto starts = tools.Starts();
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NE(starts[0].find("amd-smi"), std::string::npos);
  EXPECT_NE(starts[0].find(" list --json"), std::string::npos);
  EXPECT_NE(starts[1].find(" metric --usage"), std::string::npos);
  EXPECT_NE(starts[2].find(" metric --usage"), std::string::npos);
}

TEST(AmdToolFallback, AHangingToolNeitherBlocksTheCallerNorGetsASecondOneAndTheDeadlineEndsIt) {
  FakeAmdTools tools({kRocmSmiDir}, "hang");
  auto fallback = Started(tools);
  ASSERT_TRUE(fallback);
  fallback->Request(0);
  // Request has returned while the tool runs: the run is in flight and has no reading yet.
  ASSERT_TRUE(
      testing::WaitUntil([&] { return tools.Starts().size() == 1; }, std::chrono::milliseconds(10'000)));
  const int pid = FakeAmdTools::PidOf(tools.Starts()[0]);
  EXPECT_TRUE(test::IsRunning(pid));
  EXPECT_TRUE(fallback->InFlight());
  EXPECT_FALSE(fallback->Latest(0));
  for (double now : {1.0, 2.0, 5.0, 60.0}) fallback->Request(now);  // all while the tool hangs
  EXPECT_TRUE(fallback->InFlight());                                // the deadline is seconds away
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_TRUE(test::StopsRunning(pid));
  EXPECT_EQ(tools.Starts().size(), 1u);
  const auto failure = fallback->TakeFailure();
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->find("rocm-smi: timed out after"), std::string::npos) << *failure;
}

TEST(AmdToolFallback, TheDestructorEndsAHangingToolInsteadOfWaitingForIt) {
  FakeAmdTools tools({kAmdSmiDir}, "hang");
  ToolFallbackOptions options = FakeAmdTools::QuickOptions();
  options.deadline_seconds = 600;  // the destructor must not wait for it
  auto fallback = Started(tools, options);
  ASSERT_TRUE(fallback);
  fallback->Request(0);
  ASSERT_TRUE(
      testing::WaitUntil([&] { return tools.Starts().size() == 1; }, std::chrono::milliseconds(10'000)));
  const int pid = FakeAmdTools::PidOf(tools.Starts()[0]);
  fallback.reset();
  // The runner reaps the tool before it returns, and the destructor waits for that: gone by now.
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(tools.Starts().size(), 1u);  // and amd-smi's metric run after its list was never started
}

TEST(AmdToolFallback, GarbageIsSaidOnceAndRetriedWithADoublingBackoff) {
  FakeAmdTools tools({kRocmSmiDir}, "garbage");
  auto fallback = Started(tools);
  ASSERT_TRUE(fallback);
  fallback->Request(0);
  ASSERT_TRUE(Finishes(*fallback));
  const auto failure = fallback->TakeFailure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(*failure, "rocm-smi: output is not valid JSON");
  EXPECT_FALSE(fallback->TakeFailure());
  EXPECT_FALSE(fallback->Latest(0));

  // One failure: the next try two intervals after its start, not one.
  fallback->Request(1);
  EXPECT_FALSE(fallback->InFlight());
  EXPECT_EQ(tools.Starts().size(), 1u);
  fallback->Request(2);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(tools.Starts().size(), 2u);
  EXPECT_FALSE(fallback->TakeFailure());  // the same failure again: not said again
  // Two in a row: four intervals.
  fallback->Request(5);
  EXPECT_FALSE(fallback->InFlight());
  EXPECT_EQ(tools.Starts().size(), 2u);
  fallback->Request(6);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(tools.Starts().size(), 3u);
}

TEST(AmdToolFallback, ASuccessEndsTheBackoffAndTheSameFailureIsSaidAgainAfterIt) {
  const auto output = [](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };
  test::TempDir dir;
  const fs::path fixture = dir.path() / "output.json";
  FakeAmdTools replay({kRocmSmiDir}, "print", fixture.string());
  auto fallback = Started(replay);
  ASSERT_TRUE(fallback);
  output(fixture, "{\"card0\": ");
  fallback->Request(0);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(fallback->TakeFailure(), "rocm-smi: output is not valid JSON");
  output(fixture, R"json({"card0": {"GPU use (%)": "12"}})json");
  fallback->Request(2);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_FALSE(fallback->TakeFailure());
  ASSERT_TRUE(fallback->Latest(2));
  EXPECT_EQ(fallback->Latest(2)->cards[0].values.busy_percent, 12.0);
  output(fixture, "{}");
  fallback->Request(3);  // one interval after a success: no backoff left
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(fallback->TakeFailure(), "rocm-smi: no GPU in its output");
  EXPECT_TRUE(fallback->Latest(3));  // the last good reading, still fresh
  output(fixture, "{\"card0\": ");
  fallback->Request(5);
  ASSERT_TRUE(Finishes(*fallback));
  EXPECT_EQ(fallback->TakeFailure(), "rocm-smi: output is not valid JSON");  // differs from the last said
}

TEST(AmdToolFallback, ANonZeroExitIsReportedWithItsStderr) {
  FakeAmdTools tools({kAmdSmiDir}, "fail");
  const auto failure = FailureOfOneRun(tools);
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->find("amd-smi: exited with status 2"), std::string::npos) << *failure;
  EXPECT_NE(failure->find("amdgpu driver not loaded"), std::string::npos) << *failure;
}

TEST(AmdToolFallback, AFloodIsCutAtTheOutputCap) {
  FakeAmdTools tools({kRocmSmiDir}, "flood");
  const auto failure = FailureOfOneRun(tools);
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->find("rocm-smi: output over 65536 bytes"), std::string::npos) << *failure;
  EXPECT_TRUE(test::StopsRunning(FakeAmdTools::PidOf(tools.Starts().at(0))));
}

TEST(AmdToolFallback, NothingOnStdoutSaysWhatTheToolSaidOnStderr) {
  FakeAmdTools tools({kRocmSmiDir}, "empty");
  EXPECT_EQ(FailureOfOneRun(tools),
            "rocm-smi: printed nothing: ERROR:root:Driver not initialized (amdgpu not found in modules)");
}

TEST(AmdToolFallback, AToolThatLeavesThePathBetweenRunsIsAFailure) {
  // Found at start, gone later (a package removed): the runner's own "command not found".
  test::TempDir dir;
  fs::create_directories(dir.path() / "bin");
  fs::copy_file(FakesDir() / kRocmSmiDir / "rocm-smi", dir.path() / "bin" / "rocm-smi");
  CollectorContext ctx;
  ctx.environment = {{"PATH", (dir.path() / "bin").string()}};
  auto found =
      AmdToolFallback::Find(ctx.run_tool, ToolSearchPath(ctx), ctx.environment, FakeAmdTools::QuickOptions());
  ASSERT_TRUE(found.ok()) << found.error();
  fs::remove(dir.path() / "bin" / "rocm-smi");
  (*found)->Request(0);
  ASSERT_TRUE(Finishes(**found));
  EXPECT_EQ((*found)->TakeFailure(), "rocm-smi: command not found");
}

// Debian's rocm-smi 5.2 (package rocm-smi) on a host without the amdgpu driver: it exits 0
// having printed nothing, and the reason it gave on stderr is the failure runmon keeps.
TEST(AmdToolFallback, DebiansRocmSmiWithoutAnAmdGpuSaysWhy) {
  if (!fs::exists("/usr/bin/rocm-smi")) GTEST_SKIP() << "Debian's rocm-smi is not installed";
  if (fs::exists("/sys/module/amdgpu/initstate")) GTEST_SKIP() << "this host has the amdgpu driver";
  CollectorContext ctx;
  ctx.environment = {{"PATH", "/usr/bin"}};
  ToolFallbackOptions options = FakeAmdTools::QuickOptions();
  options.deadline_seconds = 30;  // a Python start-up on a loaded machine
  auto found = AmdToolFallback::Find(ctx.run_tool, ToolSearchPath(ctx), ctx.environment, options);
  ASSERT_TRUE(found.ok()) << found.error();
  ASSERT_EQ((*found)->tool(), VendorTool::kRocmSmi);
  (*found)->Request(0);
  ASSERT_TRUE(Finishes(**found));
  EXPECT_FALSE((*found)->Latest(0));
  const auto failure = (*found)->TakeFailure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->rfind("rocm-smi: printed nothing: ", 0), 0u) << *failure;
  EXPECT_NE(failure->find("Driver not initialized"), std::string::npos) << *failure;
}

TEST(ToolFallbackOptions, DeadlineOfTheIntervalWithinOneToFiveSeconds) {
  EXPECT_EQ(ToolFallbackOptions::ForInterval(0.1).deadline_seconds, 1.0);
  EXPECT_EQ(ToolFallbackOptions::ForInterval(2).deadline_seconds, 2.0);
  EXPECT_EQ(ToolFallbackOptions::ForInterval(15).deadline_seconds, 5.0);
  EXPECT_EQ(ToolFallbackOptions::ForInterval(15).interval_seconds, 15.0);
}

}  // namespace
}  // namespace runmon::amd
