// The /metrics server on a loopback port: --listen parsing, the loopback and token rules, the cached text
// with its content type, 404/405/413, loopback Host checks, bearer tokens, a port already in use (also by
// another runmon: no SO_REUSEPORT), a client that never finishes its request and one that drips it, the
// one-line text body of every error (those httplib produces itself too), and stopping.
#include "export/metrics_server.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "core/access.hpp"
#include "support/raw_http.hpp"

namespace runmon {
namespace {

constexpr std::string_view kToken = "0123456789abcdef-secret";

// Options named once: gcc 12 at -O3 warns (wrongly) about the string inside a temporary options object.
MetricsServerOptions Options(std::string host, int port, std::string token = {}) {
  MetricsServerOptions options;
  options.listen.host = std::move(host);
  options.listen.port = port;
  options.token = std::move(token);
  return options;
}

MetricsServerOptions LoopbackOptions() {
  return Options("127.0.0.1", 0);
}

TEST(ListenAddress, Parses) {
  struct Case {
    std::string_view text;
    std::string_view host;
    int port;
  };
  const Case good[] = {
      {"127.0.0.1:9100", "127.0.0.1", 9100}, {"0.0.0.0:0", "0.0.0.0", 0},
      {"[::1]:65535", "::1", 65535},         {"[::]:80", "::", 80},
      {"localhost:9", "127.0.0.1", 9},       {"10.1.2.3:00080", "10.1.2.3", 80},
  };
  for (const Case& c : good) {
    auto parsed = ParseListenAddress(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.error();
    EXPECT_EQ(parsed->host, c.host) << c.text;
    EXPECT_EQ(parsed->port, c.port) << c.text;
  }
  for (const std::string_view bad : {"",
                                     "9100",
                                     ":9100",
                                     "127.0.0.1",
                                     "127.0.0.1:",
                                     "127.0.0.1:65536",
                                     "127.0.0.1:-1",
                                     "127.0.0.1:+80",
                                     "127.0.0.1:80 ",
                                     " 127.0.0.1:80",
                                     "127.0.0.1:0x50",
                                     "127.0.0.1:999999",
                                     "::1:9100",
                                     "[::1]9100",
                                     "[::1:9100",
                                     "[127.0.0.1]:80",
                                     "example.com:80",
                                     "256.0.0.1:80",
                                     "127.1:80",
                                     "[::1]:"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_NE(ParseListenAddress("::1:9100").error().find("brackets"), std::string::npos);
  // A NUL would cut the address short for inet_pton: "[::\0...]" must not pass as "::" (every interface).
  using namespace std::string_literals;
  EXPECT_FALSE(ParseListenAddress("[::\0[1]:1"s).ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1\0junk:80"s).ok());
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1\0x"s));
  EXPECT_EQ(FormatListenAddress({"::1", 9100}), "[::1]:9100");
  EXPECT_EQ(FormatListenAddress({"127.0.0.1", 9100}), "127.0.0.1:9100");
}

TEST(ListenAddress, LoopbackAndTokens) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.9.8.7"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("::ffff:127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
  EXPECT_FALSE(IsLoopbackAddress("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("evil.example"));
  EXPECT_FALSE(IsLoopbackAddress(""));

  const auto check = [](std::string host, std::string token) {
    return CheckMetricsServerOptions({{std::move(host), 9100}, std::move(token)}, "--listen", "--token");
  };
  EXPECT_TRUE(check("127.0.0.1", "").ok());
  EXPECT_TRUE(check("::1", "").ok());
  EXPECT_FALSE(check("0.0.0.0", "").ok());
  EXPECT_NE(check("0.0.0.0", "").error().find("--token"), std::string::npos);
  EXPECT_FALSE(check("::", "").ok());
  EXPECT_TRUE(check("0.0.0.0", std::string(kToken)).ok());
  EXPECT_FALSE(check("0.0.0.0", "short").ok());
  EXPECT_FALSE(check("127.0.0.1", "has space in it, long").ok());
  EXPECT_FALSE(check("127.0.0.1", "0123456789abcdef\"").ok());
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abc", "abd"));
  EXPECT_FALSE(SameSecret("abc", "abcd"));
  EXPECT_FALSE(SameSecret("", "a"));
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void Start(std::string token = {}) {
    Sample sample;
    sample.timestamp = 1780000000;
    sample.metrics.Add("cpu", 50);
    cache_.Publish(sample);
    server_ = std::make_unique<MetricsServer>(cache_, Options("127.0.0.1", 0, std::move(token)));
    ASSERT_TRUE(server_->Bind().ok());
    ASSERT_GT(server_->port(), 0);
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }

  ExpositionCache cache_{{.host = "h", .run_id = {}}};
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(MetricsServerTest, ServesTheCachedText) {
  Start();
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kExpositionContentType);
  EXPECT_EQ(res->body, *cache_.Text());
  EXPECT_NE(res->body.find("runmon_process_cpu_ratio{host=\"h\"} 0.5\n"), std::string::npos);

  Sample next;
  next.timestamp = 1780000001;
  next.metrics.Add("cpu", 75);
  cache_.Publish(next);
  res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("runmon_process_cpu_ratio{host=\"h\"} 0.75\n"), std::string::npos);
  EXPECT_NE(res->body.find("runmon_exporter_samples_total{host=\"h\"} 2\n"), std::string::npos);

  res = client_->Head("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(MetricsServerTest, OtherPathsMethodsAndBodies) {
  Start();
  for (const char* path : {"/", "/metrics/", "/metricsx", "/api/runs", "/../etc/passwd"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
  auto post = client_->Post("/metrics", "x=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = client_->Delete("/metrics");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);

  // A GET with a body.
  httplib::Client body_client("127.0.0.1", server_->port());
  httplib::Request req;
  req.method = "GET";
  req.path = "/metrics";
  req.body = "unexpected";
  req.set_header("Content-Length", "10");
  auto res = body_client.send(req);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

TEST_F(MetricsServerTest, WithoutATokenOnlyLoopbackHosts) {
  Start();
  for (const char* host : {"evil.example", "evil.example:80", "192.168.1.5"}) {
    auto res = client_->Get("/metrics", {{"Host", host}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << host;
  }
  for (const char* host : {"localhost", "127.0.0.1:1234", "[::1]:9100"}) {
    auto res = client_->Get("/metrics", {{"Host", host}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << host;
  }
}

TEST_F(MetricsServerTest, WithATokenEveryRequestCarriesIt) {
  Start(std::string(kToken));
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer realm=\"runmon\"");
  EXPECT_EQ(res->body.find("runmon_"), std::string::npos);
  res = client_->Get("/metrics", {{"Authorization", "Bearer wrong-token-0123456"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client_->Get("/metrics?token=" + std::string(kToken));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client_->Get("/metrics", {{"Authorization", "Basic " + std::string(kToken)}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  // With the token any Host is fine (it may be scraped from elsewhere).
  res =
      client_->Get("/metrics", {{"Authorization", "Bearer " + std::string(kToken)}, {"Host", "node-1:9100"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("runmon_process_cpu_ratio"), std::string::npos);
}

TEST_F(MetricsServerTest, APortInUseFailsToBind) {
  Start();
  MetricsServer second(cache_, Options("127.0.0.1", server_->port()));
  const Status bound = second.Bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_NE(bound.error().find("in use"), std::string::npos);

  // A socket someone else holds.
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(sock, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length), 0);
  MetricsServer third(cache_, Options("127.0.0.1", ntohs(address.sin_port)));
  EXPECT_FALSE(third.Bind().ok());
  ::close(sock);
}

TEST_F(MetricsServerTest, AStalledRequestIsCutOff) {
  Start();
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(server_->port()));
  ASSERT_EQ(::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string partial = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  ASSERT_EQ(::write(sock, partial.data(), partial.size()), static_cast<ssize_t>(partial.size()));
  const auto start = std::chrono::steady_clock::now();
  // After its read timeout the server answers 400 (httplib) or closes the connection.
  char buffer[512];
  const ssize_t n = ::read(sock, buffer, sizeof(buffer));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string answer(buffer, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  EXPECT_TRUE(answer.empty() || answer.starts_with("HTTP/1.1 400")) << answer;
  EXPECT_EQ(answer.find("runmon_"), std::string::npos);
  EXPECT_GT(waited, 4);
  EXPECT_LT(waited, 15);
  ::close(sock);
  // Meanwhile others are served.
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// docs/cli.md: every error answer is one line of text/plain.
void ExpectTextError(const test::RawResponse& response, int status, const std::string& what) {
  EXPECT_EQ(response.status, status) << what;
  EXPECT_EQ(response.content_type, "text/plain; charset=utf-8") << what;
  EXPECT_GT(response.body.size(), 1u) << what;
  EXPECT_TRUE(response.body.ends_with("\n")) << what;
  EXPECT_EQ(response.body.find('\n'), response.body.size() - 1) << what;
}

TEST_F(MetricsServerTest, EveryErrorIsALineOfText) {
  Start();
  const int port = server_->port();
  const auto raw = [port](const std::string& request) {
    return test::ParseRawResponse(test::RawRequest(port, request));
  };
  const std::string host = "Host: 127.0.0.1\r\n";
  ExpectTextError(raw("GET /other HTTP/1.1\r\n" + host + "\r\n"), 404, "other path");
  ExpectTextError(raw("DELETE /metrics HTTP/1.1\r\n" + host + "\r\n"), 405, "DELETE");
  ExpectTextError(raw("GET /metrics HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nabc"), 413, "a body");
  ExpectTextError(
      raw("GET /metrics HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
      413, "a chunked body");
  ExpectTextError(raw("NONSENSE\r\n\r\n"), 400, "malformed request line");
  ExpectTextError(raw("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n" + host + "\r\n"), 414, "long URI");
  ExpectTextError(raw("GET /metrics HTTP/1.1\r\n" + host + "Range: bytes=x\r\n\r\n"), 416, "bad range");
  ExpectTextError(raw("GET /metrics HTTP/1.1\r\nHost: evil.example\r\n\r\n"), 403, "other host");
}

TEST_F(MetricsServerTest, ADrippingClientIsCutOff) {
  Start();
  // A byte every 0.4 s keeps every read within the read timeout: only a deadline for the whole head cuts it.
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(200, 'a');
  const auto cut =
      test::SecondsUntilCut(server_->port(), head, std::chrono::milliseconds(400), std::chrono::seconds(30));
  ASSERT_TRUE(cut.has_value()) << "still connected after 30 s of dripping";
  EXPECT_LT(cut->count(), 15);
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(MetricsServerTest, StopsAndStopsAgain) {
  Start();
  server_->Stop();
  server_->Stop();
  httplib::Client late("127.0.0.1", server_->port());
  late.set_connection_timeout(1, 0);
  EXPECT_FALSE(late.Get("/metrics"));
}

TEST(MetricsServer, StopWithoutStartAndImmediateStop) {
  ExpositionCache cache({});
  {
    MetricsServer server(cache, LoopbackOptions());
    ASSERT_TRUE(server.Bind().ok());
    server.Stop();
  }
  for (int i = 0; i < 20; ++i) {
    MetricsServer server(cache, LoopbackOptions());
    ASSERT_TRUE(server.Bind().ok());
    ASSERT_TRUE(server.Start().ok());
    server.Stop();
  }
}

TEST(MetricsServer, ServesOnIpv6Loopback) {
  ExpositionCache cache({});
  MetricsServer server(cache, Options("::1", 0));
  if (!server.Bind().ok()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client("::1", server.port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

}  // namespace
}  // namespace runmon
