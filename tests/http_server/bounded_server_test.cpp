// The shared server on a loopback port with small limits: at the connection cap the connection stalled the
// longest makes room for a new one, a new one is refused at once (503, the server's own error body) when
// every connection is busy, workers return to the floor after a burst, and error bodies come from the
// server's writer. The listener both servers set up through it: binding any free port or a given one (a port
// in use, or an address that is not this machine's, is an error naming the address) and serving until told
// to stop, also when told before serving began.
#include "http_server/bounded_server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/raw_http.hpp"
#include "support/wait_until.hpp"

namespace runmon::http_server {
namespace {

using namespace std::chrono_literals;

using runmon::testing::WaitUntil;

class BoundedServerTest : public ::testing::Test {
 protected:
  void Start(ServerLimits limits) {
    server_ = std::make_unique<BoundedServer>(
        limits, [](httplib::Response& res, int status, std::string_view message) {
          res.set_content("error " + std::to_string(status) + ": " + std::string(message), "text/x-test");
        });
    server_->Get(
        "/", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    server_->Get("/block", [this](const httplib::Request&, httplib::Response& res) {
      ++blocked_;
      while (!release_) std::this_thread::sleep_for(1ms);
      res.set_content("released", "text/plain");
    });
    const Result<int> bound = server_->Bind("127.0.0.1", 0);
    ASSERT_TRUE(bound) << bound.error();
    port_ = *bound;
    thread_ = std::thread([this] { server_->Serve(); });
    ASSERT_TRUE(WaitUntil([this] { return server_->is_running(); }, 10s));
  }

  void TearDown() override {
    release_ = true;
    for (const int sock : sockets_) ::close(sock);
    if (server_) server_->StopServing();
    if (thread_.joinable()) thread_.join();
  }

  // Connections that send half a request head and stall.
  void OpenStalled(int count) {
    for (int i = 0; i < count; ++i) {
      const int sock = test::ConnectLoopback(port_);
      ASSERT_GE(sock, 0);
      ASSERT_TRUE(test::SendAll(sock, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
      sockets_.push_back(sock);
    }
  }

  std::unique_ptr<BoundedServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::vector<int> sockets_;
  std::atomic<int> blocked_{0};
  std::atomic<bool> release_{false};
};

TEST_F(BoundedServerTest, AtTheCapTheOldestStalledConnectionMakesRoom) {
  ServerLimits limits;
  limits.max_connections = 8;
  Start(limits);
  OpenStalled(1);
  ASSERT_TRUE(WaitUntil([this] { return server_->connections() == 1; }, 10s));
  std::this_thread::sleep_for(500ms);  // the first is the oldest by far
  OpenStalled(7);
  ASSERT_TRUE(WaitUntil([this] { return server_->connections() == 8; }, 10s)) << server_->connections();
  const auto start = std::chrono::steady_clock::now();
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  // The first stalled connection was the one dropped: it ends (a 400 for its unfinished head, or nothing).
  const std::string answer = test::ReadUntilClosed(sockets_.front(), 2s);
  EXPECT_TRUE(answer.empty() || answer.starts_with("HTTP/1.1 400")) << answer;
  char byte = 0;
  EXPECT_EQ(::recv(sockets_.front(), &byte, 1, MSG_DONTWAIT), 0);
  EXPECT_LE(server_->connections(), 8u);
}

TEST_F(BoundedServerTest, WhenEveryConnectionIsBusyANewOneIsRefusedAtOnce) {
  ServerLimits limits;
  limits.max_connections = 4;
  Start(limits);
  std::vector<std::thread> busy;
  for (int i = 0; i < 4; ++i) {
    busy.emplace_back([this] {
      httplib::Client client("127.0.0.1", port_);
      client.set_read_timeout(30, 0);
      auto res = client.Get("/block");
      EXPECT_TRUE(res && res->status == 200);
    });
  }
  ASSERT_TRUE(WaitUntil([this] { return blocked_ == 4; }, 10s));
  const auto refused = test::ParseRawResponse(test::RawRequest(port_, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.content_type, "text/x-test");
  EXPECT_EQ(refused.body, "error 503: the server is busy: try again");
  release_ = true;
  for (auto& thread : busy) thread.join();
  httplib::Client client("127.0.0.1", port_);
  auto res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(BoundedServerTest, WorkersReturnToTheFloorAfterABurst) {
  ServerLimits limits;
  limits.min_workers = 2;
  limits.worker_idle_exit = 300ms;
  Start(limits);
  OpenStalled(100);
  ASSERT_TRUE(WaitUntil([this] { return server_->workers() >= 100; }, 10s)) << server_->workers();
  for (const int sock : sockets_) ::close(sock);
  sockets_.clear();
  EXPECT_TRUE(WaitUntil([this] { return server_->workers() == 2 && server_->connections() == 0; }, 10s))
      << server_->workers() << " workers, " << server_->connections() << " connections";
}

TEST_F(BoundedServerTest, ErrorsWithoutABodyGetTheWritersBody) {
  Start({});
  const auto missing =
      test::ParseRawResponse(test::RawRequest(port_, "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "text/x-test");
  EXPECT_EQ(missing.body, "error 404: not found");
  const auto malformed = test::ParseRawResponse(test::RawRequest(port_, "NONSENSE\r\n\r\n"));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.body.substr(0, 10), "error 400:");
}

TEST_F(BoundedServerTest, AHugeHeadIsCutAtItsBudget) {
  Start({});
  const int sock = test::ConnectLoopback(port_);
  ASSERT_GE(sock, 0);
  // Header lines within httplib's own line limit, but without end.
  std::string line = "X-Filler: " + std::string(4000, 'a') + "\r\n";
  test::SendAll(sock, "GET / HTTP/1.1\r\nHost: x\r\n");
  bool cut = false;
  for (int i = 0; i < 1000 && !cut; ++i) cut = !test::SendAll(sock, line);
  const std::string answer = test::ReadUntilClosed(sock, 5s);
  EXPECT_TRUE(cut || answer.starts_with("HTTP/1.1 400")) << answer.substr(0, 100);
  ::close(sock);
}

BoundedServer::ErrorBodyWriter PlainErrors() {
  return [](httplib::Response& res, int status, std::string_view) { res.status = status; };
}

TEST(BoundedServerListener, BindsAFreePortOrSaysWhyNot) {
  BoundedServer first(ServerLimits{}, PlainErrors());
  const Result<int> port = first.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port) << port.error();
  EXPECT_GT(*port, 0);

  BoundedServer second(ServerLimits{}, PlainErrors());
  const Result<int> taken = second.Bind("127.0.0.1", *port);
  ASSERT_FALSE(taken);
  EXPECT_NE(taken.error().find(fmt::format("cannot listen on 127.0.0.1:{} ", *port)), std::string::npos)
      << taken.error();
  EXPECT_NE(taken.error().find("in use"), std::string::npos) << taken.error();

  BoundedServer elsewhere(ServerLimits{}, PlainErrors());
  const Result<int> foreign = elsewhere.Bind("192.0.2.1", 9100);  // TEST-NET-1: no machine's address
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().find("cannot listen on 192.0.2.1:9100 "), std::string::npos) << foreign.error();
  BoundedServer v6(ServerLimits{}, PlainErrors());
  const Result<int> v6_foreign = v6.Bind("2001:db8::1", 9100);  // documentation prefix
  ASSERT_FALSE(v6_foreign);
  EXPECT_NE(v6_foreign.error().find("cannot listen on [2001:db8::1]:9100 "), std::string::npos)
      << v6_foreign.error();
}

TEST(BoundedServerListener, ServesUntilStoppedAndAStopBeforehandCounts) {
  BoundedServer server(ServerLimits{}, PlainErrors());
  ASSERT_TRUE(server.Bind("127.0.0.1", 0));
  std::thread serving([&] { server.Serve(); });
  ASSERT_TRUE(WaitUntil([&] { return server.is_running(); }, 10s));
  server.StopServing();
  serving.join();        // returned
  server.StopServing();  // again: nothing to do

  BoundedServer stopped_first(ServerLimits{}, PlainErrors());
  ASSERT_TRUE(stopped_first.Bind("127.0.0.1", 0));
  stopped_first.StopServing();
  stopped_first.Serve();  // returns at once
  EXPECT_FALSE(stopped_first.is_running());
}

}  // namespace
}  // namespace runmon::http_server
