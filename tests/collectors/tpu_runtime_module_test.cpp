// The tpu-runtime-metrics module as runmon uses it: loaded from runmon-modules beside this test (a link to
// the build's module directory) through LoadRuntimeMetricsClient, with the fake service as a process of its
// own (this test links no gRPC or protobuf code, like runmon; the module's descriptors would be registered
// twice in one libprotobuf otherwise). The client reads through the module, the threads gRPC starts have
// runmon's request signals blocked although the calling thread has not, and the caller's mask is as it was;
// the fake service process takes the flags end-to-end tests give it.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/tpu/runtime_metrics_client.hpp"

extern char** environ;

namespace runmon::tpu {
namespace {

constexpr RuntimeServiceTimeouts kPatient{.probe_seconds = 1, .connect_seconds = 5, .request_seconds = 5};

// fake_tpu_runtime_service as a child process, ended with SIGTERM.
class FakeServiceProcess {
 public:
  explicit FakeServiceProcess(const std::vector<std::string>& arguments) {
    int pipe_ends[2];
    if (::pipe(pipe_ends) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
    std::vector<std::string> argv_strings = {RUNMON_FAKE_TPU_RUNTIME_SERVICE};
    argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& argument : argv_strings) argv.push_back(argument.data());
    argv.push_back(nullptr);
    const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_ends[1]);
    if (spawned != 0) {
      pid_ = -1;
      ::close(pipe_ends[0]);
      return;
    }
    FILE* output = ::fdopen(pipe_ends[0], "r");
    char line[128] = {};
    if (std::fgets(line, sizeof(line), output) != nullptr) line_ = line;
    std::fclose(output);
  }
  ~FakeServiceProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  FakeServiceProcess(const FakeServiceProcess&) = delete;
  FakeServiceProcess& operator=(const FakeServiceProcess&) = delete;

  // "127.0.0.1:PORT" from its line "listening 127.0.0.1:PORT"; empty when it did not say so.
  std::string address() const {
    const std::string prefix = "listening ";
    if (!line_.starts_with(prefix) || !line_.ends_with("\n")) return "";
    return line_.substr(prefix.size(), line_.size() - prefix.size() - 1);
  }

 private:
  pid_t pid_ = -1;
  std::string line_;
};

std::string V5eFixture() {
  return std::string(RUNMON_FIXTURES_DIR) + "/tpu/runtime_v5e_4chip.json";
}

std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// The thread's blocked signals, from /proc/self/task/<id>/status (SigBlk, hexadecimal).
unsigned long long BlockedSignals(const std::string& thread) {
  std::ifstream status("/proc/self/task/" + thread + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigBlk:")) return std::stoull(line.substr(7), nullptr, 16);
  }
  return 0;
}

bool Blocks(unsigned long long mask, int signal) {
  return (mask >> (signal - 1)) & 1;
}

TEST(TpuRuntimeModule, ReadsAMetricThroughTheModule) {
  FakeServiceProcess service({"--responses", V5eFixture()});
  ASSERT_FALSE(service.address().empty());
  auto client = LoadRuntimeMetricsClient(service.address(), kPatient);
  ASSERT_TRUE(client.ok()) << client.error();
  EXPECT_TRUE((*client)->Listening());
  const auto results = (*client)->GetRuntimeMetrics({"tpu.runtime.hbm.memory.total.bytes"});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RuntimeMetricReading>(results[0]))
      << std::get<RuntimeCallError>(results[0]).message;
  const auto& reading = std::get<RuntimeMetricReading>(results[0]);
  EXPECT_EQ(reading.name, "tpu.runtime.hbm.memory.total.bytes");
  ASSERT_EQ(reading.metrics.size(), 4u);
  EXPECT_EQ(reading.metrics[2].attribute.int_value, 2);
  ASSERT_TRUE(std::holds_alternative<double>(reading.metrics[2].measure));
  EXPECT_DOUBLE_EQ(std::get<double>(reading.metrics[2].measure), 17179869184.0);
}

TEST(TpuRuntimeModule, GrpcsThreadsLeaveRequestSignalsToRunmon) {
  sigset_t unblocked;
  sigemptyset(&unblocked);
  sigaddset(&unblocked, SIGTERM);
  sigaddset(&unblocked, SIGINT);
  ASSERT_EQ(::pthread_sigmask(SIG_UNBLOCK, &unblocked, nullptr), 0);
  const std::string self = std::to_string(::gettid());
  const std::set<std::string> before = ThreadIds();

  FakeServiceProcess service({"--responses", V5eFixture(), "--not-found", "hlo.queue.size.gauge"});
  ASSERT_FALSE(service.address().empty());
  auto client = LoadRuntimeMetricsClient(service.address(), kPatient);
  ASSERT_TRUE(client.ok()) << client.error();
  const auto names = (*client)->ListSupportedMetrics();
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(names));
  const auto results = (*client)->GetRuntimeMetrics(std::get<std::vector<std::string>>(names));
  ASSERT_EQ(results.size(), 15u);
  std::size_t readings = 0;
  for (const auto& result : results) readings += std::holds_alternative<RuntimeMetricReading>(result) ? 1 : 0;
  EXPECT_EQ(readings, 14u);

  std::size_t started = 0;
  for (const std::string& thread : ThreadIds()) {
    if (before.contains(thread)) continue;
    ++started;
    const unsigned long long blocked = BlockedSignals(thread);
    EXPECT_TRUE(Blocks(blocked, SIGTERM) && Blocks(blocked, SIGINT))
        << "thread " << thread << " SigBlk " << std::hex << blocked;
  }
  EXPECT_GT(started, 0u) << "gRPC started no thread: nothing was checked";
  const unsigned long long mine = BlockedSignals(self);
  EXPECT_FALSE(Blocks(mine, SIGTERM) || Blocks(mine, SIGINT)) << "the caller's mask was not restored";
  client->reset();
  EXPECT_FALSE(Blocks(BlockedSignals(self), SIGTERM));
}

// The fake service's flags, as end-to-end tests use them: a case of a cases file, a delay, UNAVAILABLE, a
// stalled listener.
TEST(TpuRuntimeModule, TheFakeServiceProcessTakesItsFlags) {
  const std::string mocks = std::string(RUNMON_FIXTURES_DIR) + "/tpu/grpc_runtime_metric_mock_responses.json";
  const RuntimeServiceTimeouts quick{.probe_seconds = 0.5, .connect_seconds = 2, .request_seconds = 0.3};
  {
    FakeServiceProcess service({"--responses", mocks, "--case", "v4_non_sequential_device_ids"});
    ASSERT_FALSE(service.address().empty());
    auto client = LoadRuntimeMetricsClient(service.address(), kPatient);
    ASSERT_TRUE(client.ok()) << client.error();
    const auto names = (*client)->ListSupportedMetrics();
    ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(names));
    EXPECT_FALSE(std::get<std::vector<std::string>>(names).empty());
  }
  {
    FakeServiceProcess service({"--responses", V5eFixture(), "--delay-ms", "2000"});
    ASSERT_FALSE(service.address().empty());
    auto client = LoadRuntimeMetricsClient(service.address(), quick);
    ASSERT_TRUE(client.ok()) << client.error();
    const auto results = (*client)->GetRuntimeMetrics({"hlo.queue.size.gauge"});
    ASSERT_TRUE(std::holds_alternative<RuntimeCallError>(results.at(0)));
    EXPECT_EQ(std::get<RuntimeCallError>(results[0]).code, RuntimeCallCode::kDeadlineExceeded);
  }
  {
    FakeServiceProcess service({"--responses", V5eFixture(), "--unavailable"});
    ASSERT_FALSE(service.address().empty());
    auto client = LoadRuntimeMetricsClient(service.address(), quick);
    ASSERT_TRUE(client.ok()) << client.error();
    const auto results = (*client)->GetRuntimeMetrics({"hlo.queue.size.gauge"});
    ASSERT_TRUE(std::holds_alternative<RuntimeCallError>(results.at(0)));
    EXPECT_EQ(std::get<RuntimeCallError>(results[0]).code, RuntimeCallCode::kUnavailable);
  }
  {
    FakeServiceProcess service({"--stall"});
    ASSERT_FALSE(service.address().empty());
    auto client = LoadRuntimeMetricsClient(service.address(), quick);
    ASSERT_TRUE(client.ok()) << client.error();
    EXPECT_TRUE((*client)->Listening());
    const auto results = (*client)->GetRuntimeMetrics({"hlo.queue.size.gauge"});
    ASSERT_TRUE(std::holds_alternative<RuntimeCallError>(results.at(0)));
    const RuntimeCallCode code = std::get<RuntimeCallError>(results[0]).code;
    EXPECT_TRUE(code == RuntimeCallCode::kDeadlineExceeded || code == RuntimeCallCode::kUnavailable);
  }
  FakeServiceProcess refused({"--responses", "/nonexistent/responses.json"});
  EXPECT_TRUE(refused.address().empty());
}

TEST(TpuRuntimeModule, AMissingModuleIsAnErrorNamingItsFile) {
  const auto client = LoadRuntimeMetricsClient("127.0.0.1:8431", kPatient, "/nonexistent-runmon-modules");
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.error().find("tpu-runtime-metrics"), std::string::npos) << client.error();
}

}  // namespace
}  // namespace runmon::tpu
