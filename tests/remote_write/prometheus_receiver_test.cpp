// The remote writer against Debian's Prometheus (2.42, --web.enable-remote-write-receiver) on a loopback
// port of its own, through a cpp-httplib transport: the series it stores (names, labels, base units, every
// sample), a batch whose answer was lost resent and answered "out of order sample", counted as delivered,
// and a backlog older than the head answered "out of bounds", dropped as too old with the receiver's setting
// named. Registered only where prometheus is installed (scripts/install-deps.sh installs it).
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "remote_write/remote_writer.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon::remote_write {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class PrometheusReceiverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new runmon::test::TempDir("runmon-rw-prometheus");
    port_ = FreePort();
    ASSERT_NE(port_, 0);
    std::ofstream(dir_->path() / "prometheus.yml") << "global:\n  scrape_interval: 1m\n";
    const std::string config = "--config.file=" + (dir_->path() / "prometheus.yml").string();
    const std::string storage = "--storage.tsdb.path=" + (dir_->path() / "data").string();
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    const std::string log = (dir_->path() / "prometheus.log").string();
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execl(RUNMON_PROMETHEUS, RUNMON_PROMETHEUS, config.c_str(), storage.c_str(), listen.c_str(),
              "--web.enable-remote-write-receiver", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const bool ready = runmon::testing::WaitUntil(
        [] {
          httplib::Client client("127.0.0.1", port_);
          const auto response = client.Get("/-/ready");
          return response && response->status == 200;
        },
        60s);
    ASSERT_TRUE(ready) << "Prometheus did not become ready; its log is in " << log;
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    delete dir_;
  }

  // One POST through cpp-httplib, bounded by the deadline.
  static PostResult Post(const std::string& body, Clock::time_point deadline) {
    httplib::Client client("127.0.0.1", port_);
    const auto left =
        std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()), 1ms);
    client.set_connection_timeout(left);
    client.set_read_timeout(left);
    client.set_write_timeout(left);
    const httplib::Headers headers = {{"Content-Encoding", "snappy"},
                                      {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
    const auto response = client.Post("/api/v1/write", headers, body, "application/x-protobuf");
    PostResult result;
    result.request_sent = true;
    if (!response) {
      result.error = "POST: " + httplib::to_string(response.error());
      return result;
    }
    result.status = response->status;
    result.body = response->body;
    return result;
  }

  std::unique_ptr<RemoteWriter> Open(const std::string& name, ConstantLabels labels, Transport transport) {
    SenderOptions options;
    options.destination = "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/write";
    options.batch_age_seconds = 0.05;
    options.min_backoff_seconds = 0.01;
    options.max_backoff_seconds = 0.1;
    options.request_timeout_seconds = 10;
    auto log = log_;
    Result<std::unique_ptr<RemoteWriter>> writer =
        RemoteWriter::Open(dir_->path() / name, std::move(labels), {}, options, std::move(transport),
                           [log](const std::string& line) { log->push_back(line); });
    EXPECT_TRUE(writer.ok()) << (writer.ok() ? "" : writer.error());
    return writer.ok() ? std::move(*writer) : nullptr;
  }

  static nlohmann::json Query(const std::string& query) {
    httplib::Client client("127.0.0.1", port_);
    const auto response = client.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
    if (!response || response->status != 200) return nlohmann::json();
    return nlohmann::json::parse(response->body, nullptr, false);
  }

  static Sample Tick(double timestamp, double value) {
    Sample sample;
    sample.timestamp = timestamp;
    sample.metrics.Add("cpu", value);
    sample.metrics.Add("gpu.0.temp", 60);
    sample.metrics.Add("proc.memory.rssMB", 512);
    sample.metrics.Add("network.sent", value * 1000);
    return sample;
  }

  static inline runmon::test::TempDir* dir_ = nullptr;
  static inline int port_ = 0;
  static inline pid_t pid_ = -1;
  // Written by the writer's threads while it lives, read by the test after it is gone.
  std::shared_ptr<std::vector<std::string>> log_ = std::make_shared<std::vector<std::string>>();
};

TEST_F(PrometheusReceiverTest, PrometheusStoresEverySeriesAndSample) {
  auto writer = Open("stores", {"node-1", "stores", "job-9", "3"}, Post);
  const double start = Now() - 10;
  for (int i = 0; i < 30; ++i) writer->Enqueue(Tick(start + i * 0.1, i));
  const Status drained = writer->Drain(Clock::now() + 30s);
  ASSERT_TRUE(drained.ok()) << drained.error();
  EXPECT_EQ(writer->Stats().sent_samples, 120u);

  const nlohmann::json cpu = Query("runmon_process_cpu_ratio{run_id=\"stores\"}[1m]");
  ASSERT_EQ(cpu.value("status", ""), "success") << cpu.dump();
  ASSERT_EQ(cpu["data"]["result"].size(), 1u) << cpu.dump();
  const nlohmann::json& series = cpu["data"]["result"][0];
  EXPECT_EQ(series["metric"], (nlohmann::json{{"__name__", "runmon_process_cpu_ratio"},
                                              {"host", "node-1"},
                                              {"job_id", "job-9"},
                                              {"node_rank", "3"},
                                              {"run_id", "stores"}}));
  ASSERT_EQ(series["values"].size(), 30u);
  EXPECT_EQ(series["values"][5][1], "0.05");
  const nlohmann::json memory = Query("runmon_process_resident_memory_bytes{run_id=\"stores\"}");
  ASSERT_EQ(memory["data"]["result"].size(), 1u) << memory.dump();
  EXPECT_EQ(memory["data"]["result"][0]["value"][1], "536870912");
  const nlohmann::json counter =
      Query("count_over_time(runmon_network_sent_bytes_total{run_id=\"stores\"}[1m])");
  ASSERT_EQ(counter["data"]["result"].size(), 1u) << counter.dump();
  EXPECT_EQ(counter["data"]["result"][0]["value"][1], "30");
}

TEST_F(PrometheusReceiverTest, ABatchWhoseAnswerWasLostIsResentAndCountsAsDelivered) {
  // The first POST reaches Prometheus, which stores it, but its answer is lost: the resend is answered
  // "out of order sample" (the batch's samples are at or before what Prometheus has).
  auto posts = std::make_shared<std::atomic<int>>(0);
  auto writer = Open("lost-answer", {"node-1", "lost-answer", "", ""},
                     [posts](const std::string& body, Clock::time_point deadline) {
                       PostResult result = Post(body, deadline);
                       if (posts->fetch_add(1) > 0) return result;
                       EXPECT_EQ(result.status, 204) << result.body;
                       PostResult lost;
                       lost.request_sent = true;
                       lost.error = "POST: the answer was lost";
                       return lost;
                     });
  const double start = Now() - 5;
  for (int i = 0; i < 20; ++i) writer->Enqueue(Tick(start + i * 0.1, i));
  const Status drained = writer->Drain(Clock::now() + 30s);
  ASSERT_TRUE(drained.ok()) << drained.error();
  const RemoteWriteStats stats = writer->Stats();
  writer.reset();
  EXPECT_GE(posts->load(), 2);
  EXPECT_EQ(stats.sent_samples, 80u);
  EXPECT_EQ(stats.dropped_samples, 0u);
  const nlohmann::json stored =
      Query("count_over_time(runmon_gpu_temperature_celsius{run_id=\"lost-answer\"}[1m])");
  ASSERT_EQ(stored["data"]["result"].size(), 1u) << stored.dump();
  EXPECT_EQ(stored["data"]["result"][0]["value"][1], "20");
}

TEST_F(PrometheusReceiverTest, ABacklogOlderThanTheHeadIsOutOfBoundsAndDroppedAsTooOld) {
  auto recent = Open("recent", {"node-1", "recent", "", ""}, Post);
  recent->Enqueue(Tick(Now(), 1));
  ASSERT_TRUE(recent->Drain(Clock::now() + 30s).ok());
  EXPECT_EQ(recent->Stats().sent_samples, 4u);
  recent.reset();

  auto old = Open("old", {"node-1", "old", "", ""}, Post);
  const double three_hours_ago = Now() - 3 * 3600;
  for (int i = 0; i < 10; ++i) old->Enqueue(Tick(three_hours_ago + i, i));
  ASSERT_TRUE(old->Drain(Clock::now() + 30s).ok());
  const RemoteWriteStats stats = old->Stats();
  old.reset();
  EXPECT_EQ(stats.dropped_too_old, 40u);
  EXPECT_EQ(stats.sent_samples, 0u);
  size_t named = 0;
  for (const std::string& line : *log_) {
    named += line.find("out of bounds") != std::string::npos &&
             line.find("storage.tsdb.out_of_order_time_window") != std::string::npos;
  }
  EXPECT_EQ(named, 1u) << ::testing::PrintToString(*log_);
}

}  // namespace
}  // namespace runmon::remote_write
