// HttpPoster against a misbehaving local server (tests/openmetrics/test_http_server): the body and headers
// that arrive, a kept-alive connection, no "Expect: 100-continue" on a large body, an error body kept to its
// cap, Retry-After in seconds and as a date, a refused connection, a server that never answers (the deadline
// ends the post), a deadline already past, a 308 that keeps the POST, and the environment's proxy ignored.
#include "http_client/http_post.hpp"

#include <ctime>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_http_server.hpp"

namespace runmon::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Connection;
using testing::HttpRequest;
using testing::HttpResponse;
using testing::TestHttpServer;
using Clock = std::chrono::steady_clock;

PostResult PostTo(HttpPoster& poster, const std::string& body, std::vector<HttpHeader> extra = {},
                  Clock::duration budget = seconds(10)) {
  return poster.Post(body, extra, Clock::now() + budget);
}

TEST(HttpPoster, SendsTheBodyAndEveryHeaderAndKeepsTheConnection) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(204, "")); });
  HttpPoster poster(server.Url("/api/v1/write"),
                    {{"Content-Encoding", "snappy"}, {"Content-Type", "application/x-protobuf"}});
  const std::string body("\x00\x01payload\xff", 10);
  PostResult first = PostTo(poster, body, {{"Authorization", "Bearer abc"}, {"X-Empty", ""}});
  EXPECT_EQ(first.status, 204) << first.error;
  EXPECT_TRUE(first.new_connection);
  EXPECT_TRUE(first.request_sent);
  PostResult second = PostTo(poster, "second");
  EXPECT_EQ(second.status, 204) << second.error;
  EXPECT_FALSE(second.new_connection);
  EXPECT_EQ(server.Connections(), 1u);

  const std::vector<HttpRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/write");
  EXPECT_EQ(requests[0].body, body);
  ASSERT_NE(requests[0].Header("Content-Encoding"), nullptr);
  EXPECT_EQ(*requests[0].Header("Content-Encoding"), "snappy");
  ASSERT_NE(requests[0].Header("Authorization"), nullptr);
  EXPECT_EQ(*requests[0].Header("Authorization"), "Bearer abc");
  ASSERT_NE(requests[0].Header("X-Empty"), nullptr);
  EXPECT_EQ(*requests[0].Header("X-Empty"), "");
  // The per-post header went with that post only.
  EXPECT_EQ(requests[1].Header("Authorization"), nullptr);
  EXPECT_EQ(requests[1].body, "second");
}

TEST(HttpPoster, ALargeBodyGoesWithoutWaitingForContinue) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(200, "")); });
  HttpPoster poster(server.Url("/write"), {});
  const std::string body(3 << 20, 'x');
  PostResult result = PostTo(poster, body);
  EXPECT_EQ(result.status, 200) << result.error;
  const std::vector<HttpRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].Header("Expect"), nullptr);
  EXPECT_EQ(requests[0].body.size(), body.size());
}

TEST(HttpPoster, AnErrorBodyIsKeptUpToItsCap) {
  TestHttpServer server(
      [](const HttpRequest&, Connection& c) { c.Send(HttpResponse(400, std::string(1 << 20, 'e'))); });
  HttpPoster poster(server.Url("/write"), {}, PostOptions{.max_response_bytes = 1000});
  PostResult result = PostTo(poster, "x");
  EXPECT_EQ(result.status, 400) << result.error;
  EXPECT_EQ(result.body.size(), 1000u);
  EXPECT_TRUE(result.body_truncated);
  // The handle stays usable after the cut transfer.
  PostResult again = PostTo(poster, "x");
  EXPECT_EQ(again.status, 400) << again.error;
}

TEST(HttpPoster, ReportsRetryAfterInSecondsAndAsADate) {
  TestHttpServer seconds_server([](const HttpRequest&, Connection& c) {
    c.Send(HttpResponse(429, "slow down", "text/plain", "Retry-After: 7\r\n"));
  });
  HttpPoster by_seconds(seconds_server.Url("/write"), {});
  PostResult throttled = PostTo(by_seconds, "x");
  EXPECT_EQ(throttled.status, 429);
  EXPECT_EQ(throttled.body, "slow down");
  ASSERT_TRUE(throttled.retry_after_seconds.has_value());
  EXPECT_DOUBLE_EQ(*throttled.retry_after_seconds, 7.0);

  TestHttpServer date_server([](const HttpRequest&, Connection& c) {
    const std::time_t later = std::time(nullptr) + 120;
    std::tm parts{};
    gmtime_r(&later, &parts);
    char date[64];
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &parts);
    c.Send(HttpResponse(503, "", "text/plain", std::string("Retry-After: ") + date + "\r\n"));
  });
  HttpPoster by_date(date_server.Url("/write"), {});
  PostResult unavailable = PostTo(by_date, "x");
  EXPECT_EQ(unavailable.status, 503);
  ASSERT_TRUE(unavailable.retry_after_seconds.has_value());
  EXPECT_GT(*unavailable.retry_after_seconds, 100.0);
  EXPECT_LE(*unavailable.retry_after_seconds, 121.0);
}

TEST(HttpPoster, RetryAfterOnARefusalIsNotReported) {
  TestHttpServer server([](const HttpRequest&, Connection& c) {
    c.Send(HttpResponse(400, "bad", "text/plain", "Retry-After: 5\r\n"));
  });
  HttpPoster poster(server.Url("/write"), {});
  PostResult result = PostTo(poster, "x");
  EXPECT_EQ(result.status, 400);
  EXPECT_FALSE(result.retry_after_seconds.has_value());
}

TEST(HttpPoster, ARefusedConnectionSendsNothing) {
  HttpPoster poster("http://127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/write", {});
  PostResult result = PostTo(poster, "x");
  EXPECT_EQ(result.status, 0);
  EXPECT_FALSE(result.request_sent);
  EXPECT_FALSE(result.error.empty());
}

TEST(HttpPoster, AServerThatNeverAnswersCostsTheDeadline) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Sleep(seconds(30)); });
  HttpPoster poster(server.Url("/write"), {});
  const auto started = Clock::now();
  PostResult result = PostTo(poster, "x", {}, milliseconds(300));
  const double took = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_EQ(result.status, 0);
  EXPECT_TRUE(result.request_sent);  // it may have been acted on: the caller must not assume otherwise
  EXPECT_NE(result.error.find("timed out"), std::string::npos) << result.error;
  EXPECT_LT(took, 10.0);  // the server would have held it 30 s
  server.Stop();
}

TEST(HttpPoster, ADeadlineAlreadyPastSendsNothing) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(204, "")); });
  HttpPoster poster(server.Url("/write"), {});
  PostResult result = poster.Post("x", {}, Clock::now() - seconds(1));
  EXPECT_EQ(result.status, 0);
  EXPECT_FALSE(result.error.empty());
  EXPECT_TRUE(server.Requests().empty());
}

TEST(HttpPoster, APermanentRedirectKeepsThePostAndItsBody) {
  TestHttpServer server([](const HttpRequest& request, Connection& c) {
    if (request.target == "/old") {
      c.Send(HttpResponse(308, "", "text/plain", "Location: /new\r\n"));
    } else {
      c.Send(HttpResponse(204, ""));
    }
  });
  HttpPoster poster(server.Url("/old"), {});
  PostResult result = PostTo(poster, "samples");
  EXPECT_EQ(result.status, 204) << result.error;
  const std::vector<HttpRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].method, "POST");
  EXPECT_EQ(requests[1].target, "/new");
  EXPECT_EQ(requests[1].body, "samples");
}

TEST(HttpPoster, TheEnvironmentsProxyIsNotUsed) {
  TestHttpServer server([](const HttpRequest&, Connection& c) { c.Send(HttpResponse(204, "")); });
  const std::string proxy = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  setenv("http_proxy", proxy.c_str(), 1);
  setenv("HTTP_PROXY", proxy.c_str(), 1);
  HttpPoster poster(server.Url("/write"), {});
  PostResult result = PostTo(poster, "x");
  unsetenv("http_proxy");
  unsetenv("HTTP_PROXY");
  EXPECT_EQ(result.status, 204) << result.error;
  ASSERT_EQ(server.Requests().size(), 1u);
  EXPECT_EQ(server.Requests()[0].target, "/write");
}

}  // namespace
}  // namespace runmon::http
