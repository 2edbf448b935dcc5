// StreamingTool against fake tools: neuron-monitor's documents replayed, a line split across writes with
// pauses, garbage, over-long lines and a flood without newlines reported or skipped while later documents
// still come, a tool that dies mid-line restarted with doubling delays (its partial line dropped), a
// missing tool retried, and Stop ending a tool that ignores SIGTERM, its grandchildren, or a restart
// delay, each well within its bound.
#include "host/streaming_tool.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fake_tool.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon {
namespace {

using test::ReadFile;
using test::SecondsSince;
using test::StopsRunning;
using test::TempDir;
using test::WriteFakeTool;
using testing::WaitUntil;
using Clock = std::chrono::steady_clock;

constexpr auto kPatience = std::chrono::seconds(10);

StreamingToolOptions QuickOptions() {
  StreamingToolOptions options;
  options.restart_initial_seconds = 0.05;
  options.restart_max_seconds = 0.2;
  options.stop_grace_seconds = 0.2;
  return options;
}

// What the tool delivered, gathered from the reader thread.
class Recorder {
 public:
  StreamingTool::DocumentHandler Documents() {
    return [this](nlohmann::json document) {
      std::lock_guard lock(mutex_);
      documents_.push_back(std::move(document));
    };
  }
  StreamingTool::WarningHandler Warnings() {
    return [this](const std::string& message) {
      std::lock_guard lock(mutex_);
      warnings_.push_back(message);
    };
  }
  std::vector<nlohmann::json> documents() const {
    std::lock_guard lock(mutex_);
    return documents_;
  }
  std::vector<std::string> warnings() const {
    std::lock_guard lock(mutex_);
    return warnings_;
  }
  bool WaitForDocuments(size_t count) const {
    return WaitUntil([&] { return documents().size() >= count; }, kPatience);
  }
  bool WaitForWarnings(size_t count) const {
    return WaitUntil([&] { return warnings().size() >= count; }, kPatience);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> documents_;
  std::vector<std::string> warnings_;
};

TEST(RestartDelay, DoublesFromTheInitialDelayUpToTheMaximum) {
  std::vector<double> delays;
  for (int restart = 1; restart <= 8; ++restart) delays.push_back(RestartDelaySeconds(restart, 1.0, 60.0));
  EXPECT_EQ(delays, (std::vector<double>{1, 2, 4, 8, 16, 32, 60, 60}));
}

TEST(StreamingTool, ReplaysNeuronMonitorsDocuments) {
  TempDir dir;
  const std::string fixture = RUNMON_FIXTURES_DIR "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl";
  // Like neuron-monitor: a document per period, then running until it is killed.
  const auto tool =
      WriteFakeTool(dir.path(), "neuron-monitor",
                    "while IFS= read -r line; do printf '%s\\n' \"$line\"; sleep 0.05; done < '" + fixture +
                        "'; exec sleep 1000");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(3));
  const auto documents = recorder.documents();
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0]["neuron_runtime_data"][0]["pid"], 1337);
  EXPECT_EQ(documents[2]["neuron_runtime_data"][0]["pid"], 16851);
  EXPECT_EQ(documents[2]["neuron_hardware_info"]["neuron_device_count"], 1);
  streaming.Stop();
  EXPECT_TRUE(recorder.warnings().empty()) << recorder.warnings().front();
  EXPECT_EQ(streaming.restarts(), 0);
}

TEST(StreamingTool, ReassemblesALineWrittenInPiecesWithPauses) {
  TempDir dir;
  const auto tool =
      WriteFakeTool(dir.path(), "tool",
                    "printf '{\"neuron'; sleep 0.2; printf '_device_count\": '; sleep 0.2; "
                    "printf '16}\\n{\"next\"'; sleep 0.2; printf ': true}\\n'; exec sleep 1000");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(2));
  EXPECT_EQ(recorder.documents()[0], nlohmann::json({{"neuron_device_count", 16}}));
  EXPECT_EQ(recorder.documents()[1], nlohmann::json({{"next", true}}));
  EXPECT_TRUE(recorder.warnings().empty());
}

TEST(StreamingTool, ReportsGarbageAndKeepsReading) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "echo 'neuron-monitor: starting'; printf '\\001\\377{\"a\":\\n'; echo; "
                                  "echo '{\"ok\": 1}'; exec sleep 1000");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  EXPECT_EQ(recorder.documents()[0], nlohmann::json({{"ok", 1}}));
  const auto warnings = recorder.warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], tool + ": skipped a line (not JSON): neuron-monitor: starting");
  EXPECT_EQ(warnings[1], tool + ": skipped a line (not JSON): ??{\"a\":");
  EXPECT_EQ(streaming.restarts(), 0);
}

TEST(StreamingTool, SkipsALineOverTheLimitAndKeepsTheNext) {
  TempDir dir;
  const auto tool =
      WriteFakeTool(dir.path(), "tool",
                    "printf '{\"big\": \"'; head -c 3000000 /dev/zero | tr '\\0' x; printf '\"}\\n'; "
                    "echo '{\"after\": 2}'; exec sleep 1000");
  StreamingToolOptions options = QuickOptions();
  options.max_line_bytes = 1 << 20;
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  EXPECT_EQ(recorder.documents()[0], nlohmann::json({{"after", 2}}));
  ASSERT_EQ(recorder.warnings().size(), 1u);
  EXPECT_EQ(recorder.warnings()[0], tool + ": skipped a line of 3000011 bytes (the limit is 1048576)");
}

TEST(StreamingTool, AFloodWithoutNewlinesIsReadAndDroppedAndStillStops) {
  TempDir dir;
  // 64 MiB without a newline, then a document: the flood is skipped (never held), the document kept.
  const auto tool = WriteFakeTool(
      dir.path(), "tool", "head -c 67108864 /dev/zero; echo; echo '{\"after\": 3}'; exec cat /dev/zero");
  StreamingToolOptions options = QuickOptions();
  options.max_line_bytes = 1 << 20;
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(WaitUntil([&] { return !recorder.documents().empty(); }, std::chrono::seconds(60)));
  EXPECT_EQ(recorder.documents()[0], nlohmann::json({{"after", 3}}));
  ASSERT_GE(recorder.warnings().size(), 1u);
  EXPECT_EQ(recorder.warnings()[0], tool + ": skipped a line of 67108864 bytes (the limit is 1048576)");
  const auto start = Clock::now();
  streaming.Stop();  // while `cat /dev/zero` floods
  EXPECT_LT(SecondsSince(start), 5.0);
}

TEST(StreamingTool, TakesADocumentNearTheDefaultLimitOf16MiB) {
  TempDir dir;
  const auto tool =
      WriteFakeTool(dir.path(), "tool",
                    "printf '{\"big\": \"'; head -c 16000000 /dev/zero | tr '\\0' x; printf '\"}\\n'; "
                    "exec sleep 1000");
  Recorder recorder;
  StreamingToolOptions options = QuickOptions();
  options.max_line_bytes = StreamingToolOptions{}.max_line_bytes;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(WaitUntil([&] { return !recorder.documents().empty(); }, std::chrono::seconds(60)));
  EXPECT_EQ(recorder.documents()[0]["big"].get_ref<const std::string&>().size(), 16000000u);
  EXPECT_TRUE(recorder.warnings().empty());
}

TEST(StreamingTool, AToolDyingMidLineIsRestartedWithDoublingDelaysAndItsPartialLineDropped) {
  TempDir dir;
  const auto tool =
      WriteFakeTool(dir.path(), "tool", "printf '{\"partial\": '; echo 'device lost' >&2; exit 3");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(4));
  streaming.Stop();
  const auto warnings = recorder.warnings();
  const std::string ended =
      tool + ": exited with status 3 in the middle of a line (12 bytes dropped): device lost";
  EXPECT_EQ(warnings[0], ended + "; starting it again in 0.05 s");
  EXPECT_EQ(warnings[1], ended + "; starting it again in 0.1 s");
  EXPECT_EQ(warnings[2], ended + "; starting it again in 0.2 s");
  EXPECT_EQ(warnings[3], ended + "; starting it again in 0.2 s");
  EXPECT_GE(streaming.restarts(), 3);
  EXPECT_TRUE(recorder.documents().empty());  // the partial lines were never joined into a document
}

TEST(StreamingTool, ARunThatLastedStartsTheDelaysAgain) {
  TempDir dir;
  // Each run outlasts restart_max_seconds (0.2 s): every restart waits the initial delay.
  const auto tool = WriteFakeTool(dir.path(), "tool", "echo '{\"up\": 1}'; sleep 0.3; exit 1");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(3));
  streaming.Stop();
  for (const auto& warning : recorder.warnings()) {
    EXPECT_EQ(warning, tool + ": exited with status 1; starting it again in 0.05 s");
  }
  EXPECT_GE(recorder.documents().size(), 3u);
}

TEST(StreamingTool, AMissingToolIsReportedAndTriedAgain) {
  TempDir dir;
  Recorder recorder;
  StreamingTool streaming({.executable = "neuron-monitor", .search_path = dir.path().string()},
                          QuickOptions(), JsonLines(recorder.Documents()), recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(2));
  streaming.Stop();
  EXPECT_EQ(recorder.warnings()[0], "neuron-monitor: command not found; starting it again in 0.05 s");
  EXPECT_EQ(recorder.warnings()[1], "neuron-monitor: command not found; starting it again in 0.1 s");
  EXPECT_GE(streaming.restarts(), 1);
}

TEST(StreamingTool, StopEndsAToolIgnoringSigtermAndEverythingItStarted) {
  TempDir dir;
  const auto pids = dir.path() / "pids";
  const auto tool = WriteFakeTool(dir.path(), "tool",
                                  "trap '' TERM; sleep 1000 & echo \"$$ $!\" > '" + pids.string() +
                                      "'; echo '{\"up\": 1}'; while :; do sleep 0.05; done");
  Recorder recorder;
  auto streaming = std::make_unique<StreamingTool>(ToolCommand{.executable = tool}, QuickOptions(),
                                                   JsonLines(recorder.Documents()), recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  int tool_pid = 0, grandchild = 0;
  std::istringstream(ReadFile(pids)) >> tool_pid >> grandchild;
  ASSERT_GT(tool_pid, 0);
  ASSERT_GT(grandchild, 0);
  const auto start = Clock::now();
  streaming.reset();  // the destructor stops it
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_TRUE(StopsRunning(grandchild));
  // Reaped: no zombie of ours is left.
  int status = 0;
  EXPECT_EQ(::waitpid(tool_pid, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_TRUE(recorder.warnings().empty());
}

TEST(StreamingTool, StopDoesNotWaitOutARestartDelay) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "exit 1");
  StreamingToolOptions options = QuickOptions();
  options.restart_initial_seconds = 600;
  options.restart_max_seconds = 600;
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(1));
  const auto start = Clock::now();
  streaming.Stop();
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_EQ(recorder.warnings()[0], tool + ": exited with status 1; starting it again in 600 s");
  EXPECT_EQ(streaming.restarts(), 0);
}

TEST(StreamingTool, StopEndsASilentTool) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "exec sleep 1000");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = Clock::now();
  streaming.Stop();
  streaming.Stop();  // idempotent
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_TRUE(recorder.warnings().empty());
}

TEST(StreamingTool, ALineTheHandlerRejectsIsReportedWithItsReasonAndTheNextIsTaken) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "echo 'first'; echo 'second'; exec sleep 1000");
  Recorder recorder;
  std::mutex mutex;
  std::vector<std::string> taken;
  const auto on_line = [&](std::string_view line) -> Status {
    if (line == "first") return Error{"not a document"};
    std::lock_guard lock(mutex);
    taken.emplace_back(line);
    return OkStatus();
  };
  StreamingTool streaming({.executable = tool}, QuickOptions(), on_line, recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(1));
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::lock_guard lock(mutex);
        return !taken.empty();
      },
      kPatience));
  streaming.Stop();
  EXPECT_EQ(recorder.warnings(), std::vector<std::string>{tool + ": skipped a line (not a document): first"});
  EXPECT_EQ(taken, std::vector<std::string>{"second"});
}

// Like runmon's IPU helper: one answer per request line on stdin, exit at its end.
constexpr const char* kAnsweringTool =
    "n=0; while IFS= read -r request; do n=$((n+1)); echo \"{\\\"answer\\\": $n, \\\"to\\\": "
    "\\\"$request\\\"}\"; "
    "done; exit 0";

TEST(StreamingTool, SendsRequestsOnStdinAndTheToolsAnswersArrive) {
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", kAnsweringTool);
  StreamingToolOptions options = QuickOptions();
  options.requests_on_stdin = true;
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  // The run is up once Send succeeds.
  ASSERT_TRUE(WaitUntil([&] { return streaming.Send("devices"); }, kPatience));
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  ASSERT_TRUE(streaming.Send("again"));
  ASSERT_TRUE(recorder.WaitForDocuments(2));
  EXPECT_EQ(recorder.documents()[0], nlohmann::json({{"answer", 1}, {"to", "devices"}}));
  EXPECT_EQ(recorder.documents()[1], nlohmann::json({{"answer", 2}, {"to", "again"}}));
  const auto start = Clock::now();
  streaming.Stop();  // its stdin closes: it could also have ended by itself
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_TRUE(recorder.warnings().empty()) << recorder.warnings().front();
}

TEST(StreamingTool, SendFailsWithoutAStdinPipeAndWhileNoRunIsUp) {
  TempDir dir;
  Recorder recorder;
  const auto silent = WriteFakeTool(dir.path(), "silent", "exec sleep 1000");
  StreamingTool without_pipe({.executable = silent}, QuickOptions(), JsonLines(recorder.Documents()),
                             recorder.Warnings());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(without_pipe.Send("devices"));
  StreamingToolOptions options = QuickOptions();
  options.requests_on_stdin = true;
  StreamingTool missing({.executable = "ipu-helper", .search_path = dir.path().string()}, options,
                        JsonLines(recorder.Documents()), recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForWarnings(1));
  EXPECT_FALSE(missing.Send("devices"));
}

TEST(StreamingTool, SendingToAToolThatClosedItsStdinFailsQuietly) {
  TempDir dir;
  // Closes stdin at once, then keeps running: a write raises SIGPIPE, which must not end the caller.
  const auto tool = WriteFakeTool(dir.path(), "tool", "exec 0<&-; echo '{\"up\": 1}'; exec sleep 1000");
  StreamingToolOptions options = QuickOptions();
  options.requests_on_stdin = true;
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, options, JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  EXPECT_FALSE(streaming.Send("devices"));
  EXPECT_FALSE(streaming.Send("devices"));  // the closed pipe is not written to again
  streaming.Stop();
  EXPECT_TRUE(recorder.warnings().empty());
}

TEST(StreamingTool, EndRunEndsAHungToolWithTheReasonAndStartsItAgain) {
  TempDir dir;
  const auto runs = dir.path() / "runs";
  const auto tool = WriteFakeTool(
      dir.path(), "tool",
      "trap '' TERM; echo run >> '" + runs.string() + "'; echo '{\"up\": 1}'; while :; do sleep 0.05; done");
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  ASSERT_TRUE(recorder.WaitForDocuments(1));
  streaming.EndRun("no document for 30 s");
  ASSERT_TRUE(recorder.WaitForDocuments(2));  // the next run's first document
  streaming.Stop();
  ASSERT_GE(recorder.warnings().size(), 1u);
  EXPECT_EQ(recorder.warnings()[0], tool + ": no document for 30 s; starting it again in 0.05 s");
  EXPECT_EQ(streaming.restarts(), 1);
  EXPECT_EQ(ReadFile(runs), "run\nrun\n");
}

std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// The signals a thread has blocked, from /proc/self/task/TID/status.
unsigned long long BlockedSignals(const std::string& tid) {
  std::istringstream status(ReadFile("/proc/self/task/" + tid + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigBlk:")) return std::stoull(line.substr(7), nullptr, 16);
  }
  return 0;
}

TEST(StreamingTool, ItsReaderThreadNeverTakesTheProcesssStopSignals) {
  // This thread has SIGTERM unblocked, as a command's has before it starts its signal waiter.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_UNBLOCK, &term, nullptr);
  TempDir dir;
  const auto tool = WriteFakeTool(dir.path(), "tool", "exec sleep 1000");
  const auto before = ThreadIds();
  Recorder recorder;
  StreamingTool streaming({.executable = tool}, QuickOptions(), JsonLines(recorder.Documents()),
                          recorder.Warnings());
  // One reading of the new thread's mask is checked whole: a second reading could meet a thread that has
  // since ended (its status file gone).
  std::string reader;
  unsigned long long blocked = 0;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const auto& id : ThreadIds()) {
          if (before.contains(id)) continue;
          reader = id;
          blocked = BlockedSignals(id);
          if ((blocked & (1ull << (SIGTERM - 1))) != 0) return true;
        }
        return false;
      },
      kPatience))
      << "reader thread " << reader << " has SIGTERM unblocked";
  for (int signal : {SIGINT, SIGHUP, SIGQUIT, SIGCHLD}) {
    EXPECT_NE(blocked & (1ull << (signal - 1)), 0u) << signal << " in thread " << reader;
  }
  streaming.Stop();
}

}  // namespace
}  // namespace runmon
