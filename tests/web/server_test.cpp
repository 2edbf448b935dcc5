// The dashboard's HTTP server on a loopback port: the files, the API behind tokens and loopback Host checks,
// path traversal, size limits, a slow client that never finishes its request and one that drips it, the JSON
// body of every error (those httplib produces itself too), event streams that announce a growing run, and a
// writer appending while pages read.
#include "web/server.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/access.hpp"
#include "support/raw_http.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::web {
namespace {

namespace fs = std::filesystem;
using test::RunLogBuilder;
constexpr double kStart = 1'780'000'000;
constexpr std::string_view kToken = "0123456789abcdef-secret";

const Asset kAssets[] = {
    {"/index.html", "text/html; charset=utf-8", "<!doctype html><title>runmon</title>"},
    {"/assets/app.js", "text/javascript; charset=utf-8", "console.log('runmon')"},
};

TEST(ServeOptions, WiderHostsNeedAToken) {
  EXPECT_TRUE(CheckServeOptions({"wandb", "127.0.0.1", 8765, ""}).ok());
  EXPECT_TRUE(CheckServeOptions({"wandb", "::1", 0, ""}).ok());
  EXPECT_TRUE(CheckServeOptions({"wandb", "localhost", 1, ""}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "0.0.0.0", 8765, ""}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "192.168.1.5", 8765, ""}).ok());
  EXPECT_TRUE(CheckServeOptions({"wandb", "0.0.0.0", 8765, std::string(kToken)}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "0.0.0.0", 8765, "short"}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "0.0.0.0", 8765, "has space in it, long"}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "127.0.0.1", 70000, ""}).ok());
  EXPECT_FALSE(CheckServeOptions({"wandb", "", 1, ""}).ok());
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abc", "abd"));
  EXPECT_FALSE(SameSecret("abc", "abcd"));
  EXPECT_FALSE(SameSecret("", "a"));
}

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(std::string token = {}) {
    RunLogBuilder builder;
    builder.Header().Run("aaa", "<img src=x onerror=alert(1)>", kStart);
    for (int i = 0; i < 10; ++i) builder.Stats(kStart + i, {{"cpu", std::to_string(i)}});
    builder.Exit(0, 10);
    builder.WriteTo(dir_.path() / "run-20260101_000000-aaa" / "run-aaa.wandb");
    // A run still being written.
    const fs::path live = dir_.path() / "run-20260102_000000-live" / "run-live.wandb";
    fs::create_directories(live.parent_path());
    auto created = runlog::LogWriter::Create(live);
    ASSERT_TRUE(created.ok());
    writer_ = std::make_unique<runlog::LogWriter>(std::move(created.value()));
    RunLogBuilder start;
    start.Header().Run("live", "live", kStart).Stats(kStart, {{"cpu", "1"}});
    for (const auto& record : start.records()) ASSERT_TRUE(writer_->Append(record.SerializeAsString()).ok());

    store_.Start();
    server_ = std::make_unique<DashboardServer>(
        store_, ServeOptions{dir_.path(), "127.0.0.1", 0, std::move(token)}, kAssets);
    ASSERT_TRUE(server_->Bind().ok());
    thread_ = std::thread([this] { server_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }

  void AppendStats(double time, double cpu) {
    RunLogBuilder more;
    more.Stats(time, {{"cpu", std::to_string(cpu)}});
    ASSERT_TRUE(writer_->Append(more.records()[0].SerializeAsString()).ok());
  }

  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }

  test::TempDir dir_{"web-server"};
  RunStore store_{dir_.path()};
  std::unique_ptr<runlog::LogWriter> writer_;
  std::unique_ptr<DashboardServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServerTest, ServesTheDashboardAndTheApi) {
  StartServer();
  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->body, "<!doctype html><title>runmon</title>");
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(index->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  auto script = client_->Get("/assets/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  auto runs = client_->Get("/api/runs");
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->status, 200);
  const auto body = nlohmann::json::parse(runs->body);
  EXPECT_EQ(body["total"], 2);
  // The hostile name is JSON data; the page sets it as text.
  EXPECT_EQ(body["runs"][1]["name"], "<img src=x onerror=alert(1)>");
  auto missing = client_->Get("/api/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto bad = client_->Get("/api/runs?limit=abc");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(nlohmann::json::parse(bad->body).contains("error"));
}

TEST_F(ServerTest, APortInUseIsAnError) {
  StartServer();
  RunStore other_store(dir_.path());
  DashboardServer second(other_store, ServeOptions{dir_.path(), "127.0.0.1", server_->port(), ""}, kAssets);
  const auto bound = second.Bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_NE(bound.error().find("cannot listen"), std::string::npos);
}

TEST_F(ServerTest, NothingOutsideTheEmbeddedFilesIsServed) {
  StartServer();
  for (const char* path :
       {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/assets/../../../etc/passwd",
        "/..%2f..%2f..%2fetc%2fpasswd", "/etc/passwd", "//etc/passwd", "/index.html/../../etc/passwd",
        "/api/runs/..%2F..%2F..%2Fetc%2Fpasswd", "/api/runs/%2e%2e"}) {
    auto response = client_->Get(path);
    if (!response) continue;  // the server may refuse a malformed request outright
    EXPECT_TRUE(response->status == 404 || response->status == 400) << path << " -> " << response->status;
    EXPECT_EQ(response->body.find("root:"), std::string::npos) << path;
  }
  // The log directory itself is not browsable either.
  auto log = client_->Get("/run-20260101_000000-aaa/run-aaa.wandb");
  ASSERT_TRUE(log);
  EXPECT_EQ(log->status, 404);
}

TEST_F(ServerTest, RequestsForOtherHostNamesAreRefusedWithoutAToken) {
  StartServer();
  auto rebinding = client_->Get("/api/runs", {{"Host", "attacker.example:8765"}});
  ASSERT_TRUE(rebinding);
  EXPECT_EQ(rebinding->status, 403);
  auto localhost = client_->Get("/api/runs", {{"Host", "localhost:8765"}});
  ASSERT_TRUE(localhost);
  EXPECT_EQ(localhost->status, 200);
}

TEST_F(ServerTest, TokenFromHeaderCookieOrOnceFromTheQuery) {
  StartServer(std::string(kToken));
  auto anonymous = client_->Get("/api/runs");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 401);
  auto wrong = client_->Get("/api/runs", {{"Authorization", "Bearer 0123456789abcdef-secreT"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto bearer = client_->Get("/api/runs", {{"Authorization", "Bearer " + std::string(kToken)}});
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 200);
  auto once = client_->Get("/?token=" + std::string(kToken) + "&x=1");
  ASSERT_TRUE(once);
  EXPECT_EQ(once->status, 303);
  EXPECT_EQ(once->get_header_value("Location"), "/?x=1");
  const std::string cookie = once->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  auto with_cookie = client_->Get("/api/runs", {{"Cookie", "other=1; runmon_token=" + std::string(kToken)}});
  ASSERT_TRUE(with_cookie);
  EXPECT_EQ(with_cookie->status, 200);
  auto bad_cookie = client_->Get("/api/runs", {{"Cookie", "runmon_token=nope"}});
  ASSERT_TRUE(bad_cookie);
  EXPECT_EQ(bad_cookie->status, 401);
}

TEST_F(ServerTest, LimitsAndSlowClients) {
  StartServer();
  auto huge = client_->Put("/api/layout", std::string(200000, 'x'), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  auto layout = client_->Put("/api/layout", R"({"version":1,"panels":[{"id":"a","keys":["cpu"]}]})",
                             "application/json");
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->status, 200);
  auto reloaded = client_->Get("/api/layout");
  ASSERT_TRUE(reloaded);
  EXPECT_EQ(nlohmann::json::parse(reloaded->body)["panels"].size(), 1u);

  // A client that sends half a request and stalls: others are served meanwhile, and it is cut off.
  const int slow = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(slow, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string partial = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  ASSERT_EQ(::send(slow, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  auto meanwhile = client_->Get("/api/runs");
  ASSERT_TRUE(meanwhile);
  EXPECT_EQ(meanwhile->status, 200);
  timeval timeout{15, 0};
  ::setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char buffer[256];
  const auto start = std::chrono::steady_clock::now();
  const ssize_t n = ::recv(slow, buffer, sizeof(buffer), 0);
  EXPECT_LE(n, 0 + static_cast<ssize_t>(sizeof(buffer)));
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::seconds(12));  // closed by the read timeout
  ::close(slow);
}

// The body docs/serve-api.md documents, on every error status, the ones httplib answers itself included.
void ExpectJsonError(const test::RawResponse& response, int status, const std::string& what) {
  EXPECT_EQ(response.status, status) << what;
  EXPECT_EQ(response.content_type, "application/json") << what;
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << what << ": " << response.body;
  ASSERT_TRUE(body.contains("error")) << what << ": " << response.body;
  EXPECT_TRUE(body["error"].is_string()) << what;
  EXPECT_FALSE(body["error"].get<std::string>().empty()) << what;
}

TEST_F(ServerTest, EveryErrorHasTheJsonBody) {
  StartServer();
  const int port = server_->port();
  const auto raw = [port](const std::string& request) {
    return test::ParseRawResponse(test::RawRequest(port, request));
  };
  const std::string host = "Host: 127.0.0.1\r\n";
  ExpectJsonError(raw("GET /api/nothing HTTP/1.1\r\n" + host + "\r\n"), 404, "unknown API path");
  ExpectJsonError(raw("GET /nothing.txt HTTP/1.1\r\n" + host + "\r\n"), 404, "unknown file");
  ExpectJsonError(raw("DELETE /api/layout HTTP/1.1\r\n" + host + "\r\n"), 404, "DELETE");
  ExpectJsonError(raw("POST /api/runs HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n"), 404, "POST");
  ExpectJsonError(raw("GET /api/runs?limit=x HTTP/1.1\r\n" + host + "\r\n"), 400, "bad parameter");
  ExpectJsonError(raw("NONSENSE\r\n\r\n"), 400, "malformed request line");
  ExpectJsonError(raw("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n" + host + "\r\n"), 414, "long URI");
  ExpectJsonError(raw("GET / HTTP/1.1\r\n" + host + "Range: bytes=x\r\n\r\n"), 416, "bad range");
  ExpectJsonError(raw("GET /api/runs HTTP/1.1\r\nHost: evil.example\r\n\r\n"), 403, "other host");
  // Bodies: the layout's cap, announced or not, and a body where none is taken.
  ExpectJsonError(raw("PUT /api/layout HTTP/1.1\r\n" + host + "Content-Length: 300000000\r\n\r\n{"), 413,
                  "announced body over the cap");
  ExpectJsonError(
      raw("PUT /api/layout HTTP/1.1\r\n" + host + "Content-Length: 70000\r\n\r\n" + std::string(70000, ' ')),
      413, "body over the cap");
  ExpectJsonError(raw("PUT /api/layout HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
                      "11170\r\n" + std::string(70000, ' ') + "\r\n0\r\n\r\n"),
                  413, "chunked body over the cap");
  ExpectJsonError(raw("GET /api/runs HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello"), 413,
                  "GET with a body");
  ExpectJsonError(
      raw("GET /api/runs HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
      413, "GET with a chunked body");
  // A layout within the cap, chunked, is read whole.
  const std::string layout = R"({"version":1,"panels":[{"id":"a","keys":["cpu"]}]})";
  const auto chunked = raw("PUT /api/layout HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n" +
                           fmt::format("{:x}\r\n{}\r\n0\r\n\r\n", layout.size(), layout));
  EXPECT_EQ(chunked.status, 200) << chunked.body;
}

TEST_F(ServerTest, ADrippingClientIsCutOff) {
  StartServer();
  // A byte every 0.4 s keeps every read within httplib's read timeout: only a deadline for the whole head
  // cuts it (10 s after its first byte).
  const std::string head = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(200, 'a');
  const auto cut =
      test::SecondsUntilCut(server_->port(), head, std::chrono::milliseconds(400), std::chrono::seconds(30));
  ASSERT_TRUE(cut.has_value()) << "still connected after 30 s of dripping";
  EXPECT_LT(cut->count(), 15);
  auto after = client_->Get("/api/runs");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServerTest, EventStreamAnnouncesAGrowingRun) {
  StartServer();
  std::atomic<bool> saw_update{false};
  std::string received;
  std::thread listener([&] {
    httplib::Client events("127.0.0.1", server_->port());
    events.set_read_timeout(20, 0);
    events.Get("/api/events?runs=run-20260102_000000-live", [&](const char* data, size_t length) {
      received.append(data, length);
      if (received.find("event: run") != std::string::npos &&
          received.find("\"samples\":2") != std::string::npos) {
        saw_update = true;
        return false;
      }
      return true;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  AppendStats(kStart + 1, 5);
  for (int i = 0; i < 100 && !saw_update; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!saw_update) AppendStats(kStart + 2, 6);  // unblocks the listener's wait if the first was missed
  listener.join();
  EXPECT_TRUE(saw_update) << received;
}

TEST_F(ServerTest, AWriterAppendingWhilePagesRead) {
  StartServer();
  std::atomic<bool> done{false};
  std::thread appender([&] {
    for (int i = 1; i <= 3000 && !done; ++i) AppendStats(kStart + i, i % 100);
    done = true;
  });
  int answered = 0;
  while (!done) {
    auto chart = client_->Get("/api/chart?runs=run-20260102_000000-live&chart=cpu&width=200");
    ASSERT_TRUE(chart);
    ASSERT_EQ(chart->status, 200) << chart->body;
    const auto body = nlohmann::json::parse(chart->body);
    EXPECT_EQ(body["series"].size(), 1u);
    ++answered;
  }
  appender.join();
  EXPECT_GT(answered, 0);
  // Eventually everything written is served.
  for (int i = 0; i < 100; ++i) {
    auto run = client_->Get("/api/runs/run-20260102_000000-live");
    ASSERT_TRUE(run);
    if (nlohmann::json::parse(run->body)["samples"] == 3001) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto run = client_->Get("/api/runs/run-20260102_000000-live");
  EXPECT_EQ(nlohmann::json::parse(run->body)["samples"], 3001);
}

}  // namespace
}  // namespace runmon::web
