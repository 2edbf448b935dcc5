// Unit tests of config/openmetrics_settings.hpp: the endpoints, headers and filters settings, URL checks and
// redaction, and the same checks through ApplyWandbSetting (what `runmon run/sample` exits 2 on), including
// that header values and URL passwords are never repeated in a message.
#include "config/openmetrics_settings.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "config/settings.hpp"

namespace runmon {
namespace {

template <typename T>
void ExpectErrorContains(const Result<T>& result, std::string_view fragment) {
  ASSERT_FALSE(result.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(result.error().find(fragment), std::string::npos) << result.error();
}

TEST(OpenMetricsEndpoints, ParsesNamesAndUrlsSortedByName) {
  auto endpoints = ParseOpenMetricsEndpoints(
      R"( {"node": "http://localhost:9100/metrics", "dcgm": "https://10.0.0.7:9400/metrics?x=1",
           "v6": "http://[::1]:9100/", "gpu.nodes/a b": "HTTP://Host"} )");
  ASSERT_TRUE(endpoints.ok()) << endpoints.error();
  ASSERT_EQ(endpoints->size(), 4u);
  EXPECT_EQ((*endpoints)[0].name, "dcgm");
  EXPECT_EQ((*endpoints)[0].url, "https://10.0.0.7:9400/metrics?x=1");
  EXPECT_EQ((*endpoints)[1].name, "gpu.nodes/a b");  // verbatim, as W&B puts it in the key
  EXPECT_EQ((*endpoints)[2].name, "node");
  EXPECT_EQ((*endpoints)[3].url, "http://[::1]:9100/");
  EXPECT_TRUE(ParseOpenMetricsEndpoints("{}")->empty());
}

TEST(OpenMetricsEndpoints, Errors) {
  ExpectErrorContains(ParseOpenMetricsEndpoints("{"), "not valid JSON");
  ExpectErrorContains(ParseOpenMetricsEndpoints(""), "not valid JSON");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"(["http://x"])"), "expected a JSON object");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"": "http://x/"})"), "an endpoint name is empty");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a\nb": "http://x/"})"), "control character");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": 9100})"), "must be a string");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": null})"), "must be a string");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "file:///etc/passwd"})"),
                      "only http:// and https://");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "localhost:9100"})"), "only http:// and https://");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "gopher://x/"})"), "only http:// and https://");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http:///metrics"})"), "no host");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x:0/"})"), "port");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x:65536/"})"), "port");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x:9a/"})"), "port");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x:/"})"), "empty port");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://[::1/"})"), "closing ']'");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x/a b"})"), "blank or a control");
  ExpectErrorContains(ParseOpenMetricsEndpoints(R"({"a": "http://x/\r\nHost: y"})"), "blank or a control");
  std::string many = "{";
  for (int i = 0; i <= 64; ++i)
    many += (i ? "," : "") + std::string("\"e") + std::to_string(i) + "\": \"http://x/\"";
  many += "}";
  ExpectErrorContains(ParseOpenMetricsEndpoints(many), "at most 64 endpoints");
  ExpectErrorContains(ParseOpenMetricsEndpoints("{\"" + std::string(300, 'n') + "\": \"http://x/\"}"),
                      "longer than");
}

TEST(OpenMetricsEndpoints, MessagesHidePasswords) {
  auto endpoints = ParseOpenMetricsEndpoints(R"({"a": "http://me:hunter2@x:99999/"})");
  ASSERT_FALSE(endpoints.ok());
  EXPECT_EQ(endpoints.error().find("hunter2"), std::string::npos) << endpoints.error();
  EXPECT_NE(endpoints.error().find("http://***@x:99999/"), std::string::npos) << endpoints.error();
}

TEST(OpenMetricsUrl, RedactUrl) {
  EXPECT_EQ(RedactUrl("http://u:p@host:1/path?q=@"), "http://***@host:1/path?q=@");
  EXPECT_EQ(RedactUrl("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(RedactUrl("https://token@host"), "https://***@host");
  EXPECT_EQ(RedactUrl("not a url"), "not a url");
}

TEST(OpenMetricsUrl, Accepted) {
  for (const char* url : {"http://localhost", "https://h:443/metrics", "http://u:p@h:1/x",
                          "http://[fe80::1]:9/", "HtTpS://H/", "http://h/?a=b#c"}) {
    EXPECT_TRUE(CheckOpenMetricsUrl(url).ok()) << url;
  }
}

TEST(OpenMetricsHeaders, ParsesAndChecks) {
  auto headers =
      ParseOpenMetricsHeaders(R"({"Authorization": "Bearer abc", "X-Empty": "", "X-Tab": "a\tb"})");
  ASSERT_TRUE(headers.ok()) << headers.error();
  ASSERT_EQ(headers->size(), 3u);
  EXPECT_EQ((*headers)[0].name, "Authorization");
  EXPECT_EQ((*headers)[0].value, "Bearer abc");
  EXPECT_EQ((*headers)[1].value, "");
  EXPECT_EQ((*headers)[2].value, "a\tb");
  EXPECT_TRUE(ParseOpenMetricsHeaders("{}")->empty());

  ExpectErrorContains(ParseOpenMetricsHeaders("[]"), "expected a JSON object");
  ExpectErrorContains(ParseOpenMetricsHeaders(R"({"": "v"})"), "a header name is empty");
  for (const char* bad :
       {R"({"Bad Name": "v"})", R"({"X:Y": "v"})", R"({"X\r\nY": "v"})", R"({"X(": "v"})"}) {
    ExpectErrorContains(ParseOpenMetricsHeaders(bad), "may hold only");
  }
  for (const char* bad : {R"({"X": "a\r\nInjected: yes"})", R"({"X": "a\nb"})", R"({"X": "a\rb"})",
                          R"({"X": "a\u0000b"})", R"({"X": "a\u007fb"})", R"({"X": "\u001b[31m"})"}) {
    ExpectErrorContains(ParseOpenMetricsHeaders(bad), "control character");
  }
  ExpectErrorContains(ParseOpenMetricsHeaders(R"({"X": 1})"), "must be a string");
  ExpectErrorContains(ParseOpenMetricsHeaders(R"({"X": ["a"]})"), "must be a string");
  ExpectErrorContains(ParseOpenMetricsHeaders("{\"X\": \"" + std::string(9000, 'v') + "\"}"), "longer than");
}

TEST(OpenMetricsHeaders, MessagesNeverRepeatTheValue) {
  auto headers = ParseOpenMetricsHeaders(R"({"Authorization": "Bearer s3cret\n"})");
  ASSERT_FALSE(headers.ok());
  EXPECT_EQ(headers.error().find("s3cret"), std::string::npos) << headers.error();
  Settings settings;
  const Status status = ApplyWandbSetting(settings, "x_stats_open_metrics_http_headers",
                                          R"({"Authorization": "Bearer s3cret\n"})");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().find("s3cret"), std::string::npos) << status.error();
  EXPECT_NE(status.error().find("x_stats_open_metrics_http_headers"), std::string::npos) << status.error();
}

TEST(OpenMetricsFilters, Shapes) {
  EXPECT_EQ(ParseOpenMetricsFilters(std::nullopt)->kind, OpenMetricsFilterSpec::Kind::kAll);
  EXPECT_EQ(ParseOpenMetricsFilters("null")->kind, OpenMetricsFilterSpec::Kind::kAll);
  EXPECT_EQ(ParseOpenMetricsFilters("[]")->kind, OpenMetricsFilterSpec::Kind::kAll);
  EXPECT_EQ(ParseOpenMetricsFilters("{}")->kind, OpenMetricsFilterSpec::Kind::kAll);
  auto list = ParseOpenMetricsFilters(R"(["a", "b.*"])");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->kind, OpenMetricsFilterSpec::Kind::kList);
  EXPECT_EQ(list->list, (std::vector<std::string>{"a", "b.*"}));
  auto dict = ParseOpenMetricsFilters(R"({"DCGM_FI_DEV_GPU_UTIL": {"gpu": "^[0-7]$"}, "up": null, "x": {}})");
  ASSERT_TRUE(dict.ok()) << dict.error();
  EXPECT_EQ(dict->kind, OpenMetricsFilterSpec::Kind::kDict);
  ASSERT_EQ(dict->dict.size(), 3u);
  EXPECT_EQ(dict->dict[0].metric_pattern, "DCGM_FI_DEV_GPU_UTIL");
  ASSERT_EQ(dict->dict[0].labels.size(), 1u);
  EXPECT_EQ(dict->dict[0].labels[0].label, "gpu");
  EXPECT_EQ(dict->dict[0].labels[0].value_pattern, "^[0-7]$");
  EXPECT_TRUE(dict->dict[1].labels.empty());
}

TEST(OpenMetricsFilters, Errors) {
  ExpectErrorContains(ParseOpenMetricsFilters("5"), "must be a list of regexes or an object");
  ExpectErrorContains(ParseOpenMetricsFilters("[1]"), "only regex strings");
  ExpectErrorContains(ParseOpenMetricsFilters(R"({"a": "b"})"), "must be an object");
  ExpectErrorContains(ParseOpenMetricsFilters(R"({"a": {"l": 1}})"), "must be a regex string");
  ExpectErrorContains(ParseOpenMetricsFilters(R"(["a(b"])"), "\"a(b\" does not compile");
  ExpectErrorContains(ParseOpenMetricsFilters(R"j({"m": {"l": "(?=x)"}})j"), "does not compile");
  ExpectErrorContains(ParseOpenMetricsFilters(R"j(["((((a{100}){100}){100}){100})"])j"), "does not compile");
}

// What runmon run/sample see (exit status 2 on an error).
TEST(OpenMetricsSettings, ThroughApplyWandbSetting) {
  Settings s;
  ASSERT_TRUE(
      ApplyWandbSetting(s, "x_stats_open_metrics_endpoints", R"( {"node": "http://127.0.0.1:9100/metrics"} )")
          .ok());
  EXPECT_EQ(s.other.at("x_stats_open_metrics_endpoints"), R"({"node": "http://127.0.0.1:9100/metrics"})");
  ASSERT_TRUE(ApplySetAssignment(s, R"(x_stats_open_metrics_filters={"node_cpu": {"cpu": "0"}})").ok());
  ASSERT_TRUE(ApplyWandbSetting(s, "open_metrics_http_headers", R"({"X-A": "b"})").ok());

  Settings t;
  ExpectErrorContains(ApplyWandbSetting(t, "x_stats_open_metrics_endpoints", R"({"a": "ftp://x/"})"),
                      "setting x_stats_open_metrics_endpoints: endpoint \"a\"");
  ExpectErrorContains(ApplyWandbSetting(t, "x_stats_open_metrics_filters", R"(["("])"),
                      "setting x_stats_open_metrics_filters=[\"(\"]: regex");
  ExpectErrorContains(ApplyEnvironment(t, {R"(WANDB_X_STATS_OPEN_METRICS_HTTP_HEADERS={"A B": "c"})"}),
                      "WANDB_X_STATS_OPEN_METRICS_HTTP_HEADERS");
  EXPECT_TRUE(t.other.empty());
  // The password in a rejected endpoint is not echoed either.
  const Status status =
      ApplyWandbSetting(t, "x_stats_open_metrics_endpoints", R"({"a": "gopher://u:pw1234@x/"})");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().find("pw1234"), std::string::npos) << status.error();
}

}  // namespace
}  // namespace runmon
