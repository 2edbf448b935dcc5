// HttpFetcher against a misbehaving local server: a good exposition, the headers it sends, connection reuse,
// a server slower than the timeout, slow-loris dribbling, a gigabyte announced or streamed, bytes that are
// not HTTP, retries on 500/429 (Retry-After) and none on 404/501, redirects (followed up to 3, a loop,
// another scheme), a refused connection, proxies from the environment ignored by default, and a deadline
// already past.
#include "collectors/openmetrics/http_fetch.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "test_http_server.hpp"

namespace runmon::openmetrics {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Connection;
using testing::HttpRequest;
using testing::HttpResponse;
using testing::TestHttpServer;
using Clock = std::chrono::steady_clock;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RUNMON_FIXTURES_DIR) + "/openmetrics/" + name, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void ExpectErrorContains(const Status& status, std::string_view fragment) {
  ASSERT_FALSE(status.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(status.error().find(fragment), std::string::npos) << status.error();
}

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HttpFetch, GoodExposition) {
  const std::string body = Fixture("dcgm_exporter.prom");
  TestHttpServer server([&](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, body)); });
  HttpFetcher fetcher(server.Url(), {});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(fetcher.Body(), body);
  EXPECT_EQ(fetcher.ContentType(), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
  EXPECT_EQ(fetcher.Stats().http_status, 200);
  EXPECT_EQ(fetcher.Stats().body_bytes, body.size());
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target, "/metrics");
  ASSERT_NE(requests[0].Header("Accept"), nullptr);
  EXPECT_EQ(*requests[0].Header("Accept"), kAcceptHeader);
  EXPECT_TRUE(requests[0].Header("Accept")->starts_with("text/plain;version=0.0.4"));
  ASSERT_NE(requests[0].Header("User-Agent"), nullptr);
  EXPECT_NE(requests[0].Header("User-Agent")->find("runmon"), std::string::npos);
}

TEST(HttpFetch, SendsTheConfiguredHeaders) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "up 1\n")); });
  HttpFetcher fetcher(server.Url(), {{"Authorization", "Bearer s3cret"},
                                     {"X-Scope-OrgID", "team a"},
                                     {"X-Empty", ""},
                                     {"Accept", "text/plain"}});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const HttpRequest& r = requests[0];
  ASSERT_NE(r.Header("Authorization"), nullptr);
  EXPECT_EQ(*r.Header("Authorization"), "Bearer s3cret");
  ASSERT_NE(r.Header("X-Scope-OrgID"), nullptr);
  EXPECT_EQ(*r.Header("X-Scope-OrgID"), "team a");
  ASSERT_NE(r.Header("X-Empty"), nullptr);
  EXPECT_EQ(*r.Header("X-Empty"), "");
  // The user's Accept replaces runmon's.
  ASSERT_NE(r.Header("Accept"), nullptr);
  EXPECT_EQ(*r.Header("Accept"), "text/plain");
  size_t accepts = 0;
  for (const auto& [name, value] : r.headers) accepts += name == "Accept" ? 1 : 0;
  EXPECT_EQ(accepts, 1u);
}

TEST(HttpFetch, ReusesTheConnection) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "up 1\n")); });
  HttpFetcher fetcher(server.Url(), {});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(server.Requests().size(), 3u);
  EXPECT_EQ(server.Connections(), 1u);
  EXPECT_EQ(fetcher.Stats().new_connections, 0);
}

TEST(HttpFetch, SlowServerStopsAtTheDeadline) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (c.Sleep(seconds(10))) c.Send(HttpResponse(200, "up 1\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + milliseconds(600));
  const double took = SecondsSince(start);
  ExpectErrorContains(status, "no complete response before the tick's deadline");
  EXPECT_GE(took, 0.5);
  EXPECT_LT(took, 1.5);
  EXPECT_NE(status.error().find(server.Url()), std::string::npos) << status.error();
}

TEST(HttpFetch, PerAttemptTimeoutThenRetriesWithinTheDeadline) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (c.Sleep(seconds(10))) c.Send(HttpResponse(200, "up 1\n"));
  });
  FetchOptions options;
  options.attempt_timeout_seconds = 0.3;
  HttpFetcher fetcher(server.Url(), {}, options);
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(2));
  const double took = SecondsSince(start);
  ASSERT_FALSE(status.ok());
  EXPECT_GE(fetcher.Stats().attempts, 2u);
  EXPECT_LE(fetcher.Stats().attempts, 4u);
  EXPECT_LT(took, 2.5);
}

TEST(HttpFetch, SlowLorisBodyIsCutByTheLowSpeedLimit) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (!c.Send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n")) return;
    while (c.Send("a") && c.Sleep(milliseconds(100))) {
    }
  });
  FetchOptions options;
  options.attempt_timeout_seconds = 10;
  options.low_speed_limit_bytes_per_second = 100;
  options.low_speed_time_seconds = 1;
  HttpFetcher fetcher(server.Url(), {}, options);
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(8));
  ExpectErrorContains(status, "transfer slower than 100 bytes/s for 1 s");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);  // a deliberately slow server is not asked again
  EXPECT_LT(SecondsSince(start), 3.5);
}

TEST(HttpFetch, SlowLorisHeadIsCutToo) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: ";
    for (char ch : head) {
      if (!c.Send(std::string(1, ch)) || !c.Sleep(milliseconds(200))) return;
    }
    while (c.Send("x") && c.Sleep(milliseconds(200))) {
    }
  });
  FetchOptions options;
  options.attempt_timeout_seconds = 10;
  options.low_speed_limit_bytes_per_second = 100;
  options.low_speed_time_seconds = 1;
  HttpFetcher fetcher(server.Url(), {}, options);
  const auto start = Clock::now();
  ASSERT_FALSE(fetcher.Fetch(start + seconds(8)).ok());
  EXPECT_LT(SecondsSince(start), 3.5);
}

TEST(HttpFetch, GigabyteAnnouncedIsRefusedBeforeTheBody) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (!c.Send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1073741824\r\n\r\n")) return;
    const std::string block(64 * 1024, 'a');
    for (int i = 0; i < 16384 && c.Send(block); ++i) {
    }
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(5));
  ExpectErrorContains(status, "response larger than 16 MiB (Content-Length: 1073741824)");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
  EXPECT_LT(SecondsSince(start), 2.0);
  EXPECT_TRUE(fetcher.Body().empty());
  server.Stop();
  EXPECT_LT(server.BytesSent(), size_t{64} << 20);
}

TEST(HttpFetch, GigabyteStreamedIsAbortedAtTheCap) {
  // No Content-Length: the body runs until the server closes, so only the write callback can stop it.
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (!c.Send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")) return;
    std::string block;
    while (block.size() < 64 * 1024) block += "node_load1 1\n";
    for (size_t sent = 0; sent < (size_t{1} << 30) && c.Send(block); sent += block.size()) {
    }
    c.Close();
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(5));
  ExpectErrorContains(status, "response larger than 16 MiB");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
  EXPECT_LT(SecondsSince(start), 4.0);
  EXPECT_TRUE(fetcher.Body().empty());
  server.Stop();
  // The client hung up near the cap: what the server got out is the cap plus socket buffers, not a gigabyte.
  EXPECT_LT(server.BytesSent(), size_t{64} << 20);
}

TEST(HttpFetch, ChunkedStreamIsAbortedAtASmallerCap) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    if (!c.Send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
    const std::string chunk = "1000\r\n" + std::string(4096, 'z') + "\r\n";
    while (c.Send(chunk)) {
    }
  });
  FetchOptions options;
  options.max_response_bytes = 100'000;
  HttpFetcher fetcher(server.Url(), {}, options);
  ExpectErrorContains(fetcher.Fetch(Clock::now() + seconds(5)), "response larger than 100000 bytes");
}

TEST(HttpFetch, BodyExactlyAtTheCapIsAccepted) {
  const std::string body(1024, '#');
  TestHttpServer server([&](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, body)); });
  FetchOptions options;
  options.max_response_bytes = 1024;
  HttpFetcher fetcher(server.Url(), {}, options);
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(fetcher.Body().size(), 1024u);
}

TEST(HttpFetch, GarbageInsteadOfHttpIsAnError) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    std::string garbage;
    for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 131 + 7) % 256);
    c.Send(garbage);
    c.Close();
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status first = fetcher.Fetch(start + seconds(5));
  ExpectErrorContains(first, "the reply is not HTTP");
  EXPECT_LT(SecondsSince(start), 2.0);
  const Status second = fetcher.Fetch(Clock::now() + seconds(5));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(first.error(), second.error());  // the same words every time (the sampler logs changes)
}

TEST(HttpFetch, ServerErrorIsRetried) {
  int calls = 0;
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    c.Send(++calls == 1 ? HttpResponse(500, "boom\n") : HttpResponse(200, "up 1\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(fetcher.Stats().attempts, 2u);
  EXPECT_EQ(fetcher.Body(), "up 1\n");
}

TEST(HttpFetch, PersistentServerErrorGivesUpAfterThreeRetries) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(503, "overloaded\n")); });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(5));
  ExpectErrorContains(status, "HTTP status 503: overloaded");
  EXPECT_EQ(fetcher.Stats().attempts, 4u);
  EXPECT_EQ(server.Requests().size(), 4u);
  EXPECT_LT(SecondsSince(start), 2.0);  // backoff 0.1 + 0.2 + 0.4 s at most
}

TEST(HttpFetch, TooManyRequestsHonoursRetryAfterWhenItFits) {
  int calls = 0;
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    c.Send(++calls == 1 ? HttpResponse(429, "slow down\n", "text/plain", "Retry-After: 1\r\n")
                        : HttpResponse(200, "up 1\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  ASSERT_TRUE(fetcher.Fetch(start + seconds(4)).ok());
  EXPECT_GE(SecondsSince(start), 0.95);
  EXPECT_EQ(fetcher.Stats().attempts, 2u);
}

TEST(HttpFetch, RetryAfterPastTheDeadlineGivesUpAtOnce) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    c.Send(HttpResponse(429, "slow down\n", "text/plain", "Retry-After: 30\r\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(2));
  ExpectErrorContains(status, "HTTP status 429");
  ExpectErrorContains(status, "Retry-After 30 s");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(HttpFetch, ClientErrorsAndNotImplementedAreNotRetried) {
  for (int code : {404, 501, 401}) {
    TestHttpServer server(
        [code](const HttpRequest&, Connection& c) { c.Send(HttpResponse(code, "nope\nsecond line\n")); });
    HttpFetcher fetcher(server.Url(), {});
    const Status status = fetcher.Fetch(Clock::now() + seconds(5));
    ExpectErrorContains(status, "HTTP status " + std::to_string(code) + ": nope");
    EXPECT_EQ(status.error().find("second line"), std::string::npos) << status.error();
    EXPECT_EQ(fetcher.Stats().attempts, 1u) << code;
  }
}

// /r/N redirects to /r/N-1, /r/0 serves the exposition; /loop redirects to itself; /file and /ftp leave http.
void Redirector(const HttpRequest& r, Connection& c) {
  auto redirect = [&](const std::string& location) {
    c.Send(HttpResponse(302, "", "text/plain", "Location: " + location + "\r\n"));
  };
  if (r.target.starts_with("/r/")) {
    const int n = std::stoi(r.target.substr(3));
    if (n == 0) {
      c.Send(HttpResponse(200, "up 1\n"));
    } else {
      redirect("/r/" + std::to_string(n - 1));
    }
  } else if (r.target == "/loop") {
    redirect("/loop");
  } else if (r.target == "/file") {
    redirect("file:///etc/passwd");
  } else if (r.target == "/ftp") {
    redirect("ftp://127.0.0.1/metrics");
  } else if (r.target == "/nolocation") {
    c.Send(HttpResponse(302, "moved\n"));
  } else {
    c.Send(HttpResponse(404, "not found\n"));
  }
}

TEST(HttpFetch, FollowsUpToThreeRedirects) {
  TestHttpServer server(Redirector);
  HttpFetcher fetcher(server.Url("/r/3"), {});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(fetcher.Body(), "up 1\n");
  EXPECT_EQ(fetcher.Stats().redirects, 3);

  HttpFetcher four(server.Url("/r/4"), {});
  ExpectErrorContains(four.Fetch(Clock::now() + seconds(5)), "more than 3 redirects");
  EXPECT_EQ(four.Stats().attempts, 1u);
}

TEST(HttpFetch, RedirectLoopIsStopped) {
  TestHttpServer server(Redirector);
  HttpFetcher fetcher(server.Url("/loop"), {});
  const auto start = Clock::now();
  ExpectErrorContains(fetcher.Fetch(start + seconds(5)), "more than 3 redirects");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
  EXPECT_LE(server.Requests().size(), 4u);
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(HttpFetch, RedirectToAnotherSchemeIsRefused) {
  TestHttpServer server(Redirector);
  for (const char* path : {"/file", "/ftp"}) {
    HttpFetcher fetcher(server.Url(path), {});
    const Status status = fetcher.Fetch(Clock::now() + seconds(5));
    ExpectErrorContains(status, "redirected to another scheme");
    EXPECT_TRUE(fetcher.Body().empty()) << path;
    EXPECT_EQ(fetcher.Stats().attempts, 1u) << path;
  }
}

TEST(HttpFetch, RedirectWithoutLocationIsAnError) {
  TestHttpServer server(Redirector);
  HttpFetcher fetcher(server.Url("/nolocation"), {});
  ExpectErrorContains(fetcher.Fetch(Clock::now() + seconds(5)), "HTTP status 302");
}

TEST(HttpFetch, OtherSchemesAreRefusedOutright) {
  for (const char* url : {"file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x"}) {
    HttpFetcher fetcher(url, {});
    const Status status = fetcher.Fetch(Clock::now() + seconds(5));
    ExpectErrorContains(status, "only http and https are allowed");
    EXPECT_EQ(fetcher.Stats().attempts, 1u) << url;
  }
}

TEST(HttpFetch, ConnectionRefusedIsQuickAndClear) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/metrics";
  HttpFetcher fetcher(url, {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(5));
  ExpectErrorContains(status, "cannot connect: Connection refused");
  ExpectErrorContains(status, url);
  EXPECT_EQ(fetcher.Stats().attempts, 4u);  // 3 retries, as W&B
  EXPECT_LT(SecondsSince(start), 1.5);
  const Status again = fetcher.Fetch(Clock::now() + seconds(5));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(status.error(), again.error());
}

TEST(HttpFetch, UnreachableHostStopsAtTheDeadline) {
  // TEST-NET-1 (RFC 5737): no route, or packets into the void; either way an error by the deadline.
  HttpFetcher fetcher("http://192.0.2.1:9100/metrics", {});
  const auto start = Clock::now();
  EXPECT_FALSE(fetcher.Fetch(start + milliseconds(700)).ok());
  EXPECT_LT(SecondsSince(start), 1.5);
}

TEST(HttpFetch, UnresolvableHostIsAnError) {
  HttpFetcher fetcher("http://no-such-host.invalid:9100/metrics", {});
  const auto start = Clock::now();
  const Status status = fetcher.Fetch(start + seconds(2));
  ASSERT_FALSE(status.ok());
  EXPECT_LT(SecondsSince(start), 3.0);
}

TEST(HttpFetch, DeadlineAlreadyPassed) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "up 1\n")); });
  HttpFetcher fetcher(server.Url(), {});
  ExpectErrorContains(fetcher.Fetch(Clock::now() - seconds(1)), "deadline passed");
  EXPECT_EQ(fetcher.Stats().attempts, 0u);
  EXPECT_TRUE(server.Requests().empty());
}

TEST(HttpFetch, PasswordsInTheUrlAreNotRepeated) {
  const std::string url =
      "http://user:hunter2@127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/metrics";
  HttpFetcher fetcher(url, {});
  const Status status = fetcher.Fetch(Clock::now() + milliseconds(300));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().find("hunter2"), std::string::npos) << status.error();
  EXPECT_NE(status.error().find("***@127.0.0.1"), std::string::npos) << status.error();
}

TEST(HttpFetch, EnvironmentProxiesAreIgnoredByDefault) {
  // A proxy that does not exist: used, every request would fail.
  const ScopedEnv http_proxy("http_proxy", "http://127.0.0.1:1");
  const ScopedEnv all_proxy("ALL_PROXY", "http://127.0.0.1:1");
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "up 1\n")); });
  HttpFetcher fetcher(server.Url(), {});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
}

TEST(HttpFetch, EnvironmentProxiesWhenAskedButNeverForLoopback) {
  // The test server is the proxy: a request for a far host reaches it in absolute form.
  TestHttpServer proxy([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "proxied 1\n")); });
  const ScopedEnv http_proxy("http_proxy", proxy.Url("").c_str());
  const ScopedEnv no_proxy("no_proxy", "");
  FetchOptions options;
  ApplyProxySetting("environment", options);
  ASSERT_EQ(options.proxy, ProxyMode::kEnvironment);
  HttpFetcher far("http://metrics.example.invalid:9100/metrics", {}, options);
  ASSERT_TRUE(far.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(far.Body(), "proxied 1\n");
  ASSERT_EQ(proxy.Requests().size(), 1u);
  EXPECT_EQ(proxy.Requests()[0].target, "http://metrics.example.invalid:9100/metrics");

  TestHttpServer local([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "direct 1\n")); });
  HttpFetcher near(local.Url(), {}, options);
  ASSERT_TRUE(near.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(near.Body(), "direct 1\n");
  EXPECT_EQ(proxy.Requests().size(), 1u);
}

TEST(HttpFetch, ProxySettingValues) {
  FetchOptions options;
  ApplyProxySetting(nullptr, options);
  EXPECT_EQ(options.proxy, ProxyMode::kNone);
  ApplyProxySetting("", options);
  EXPECT_EQ(options.proxy, ProxyMode::kNone);
  ApplyProxySetting("http://proxy:3128", options);
  EXPECT_EQ(options.proxy, ProxyMode::kUrl);
  EXPECT_EQ(options.proxy_url, "http://proxy:3128");
}

TEST(HttpFetch, FormatByteSize) {
  EXPECT_EQ(FormatByteSize(size_t{16} << 20), "16 MiB");
  EXPECT_EQ(FormatByteSize(size_t{1} << 30), "1 GiB");
  EXPECT_EQ(FormatByteSize(4096), "4 KiB");
  EXPECT_EQ(FormatByteSize(100'000), "100000 bytes");
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(HttpFetch, GzipIsDecoded) {
  const std::string body = Fixture("node_exporter.prom");
  const std::string packed = Gzip(body);
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    c.Send(HttpResponse(200, packed, "text/plain; version=0.0.4", "Content-Encoding: gzip\r\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  ASSERT_TRUE(fetcher.Fetch(Clock::now() + seconds(5)).ok());
  EXPECT_EQ(fetcher.Body(), body);
  const auto requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  ASSERT_NE(requests[0].Header("Accept-Encoding"), nullptr);
  EXPECT_NE(requests[0].Header("Accept-Encoding")->find("gzip"), std::string::npos);
}

TEST(HttpFetch, GzipBombIsCappedAfterDecoding) {
  // 64 MiB of newlines packs into about 64 KiB: under the cap on the wire, far over it decoded.
  const std::string packed = Gzip(std::string(size_t{64} << 20, '\n'));
  ASSERT_LT(packed.size(), size_t{1} << 20);
  TestHttpServer server([&](const HttpRequest&, Connection& c) {
    c.Send(HttpResponse(200, packed, "text/plain; version=0.0.4", "Content-Encoding: gzip\r\n"));
  });
  HttpFetcher fetcher(server.Url(), {});
  ExpectErrorContains(fetcher.Fetch(Clock::now() + seconds(5)), "response larger than 16 MiB");
  EXPECT_EQ(fetcher.Stats().attempts, 1u);
}

}  // namespace
}  // namespace runmon::openmetrics
