// The three OpenMetrics settings (spec/metrics.md B §9), parsed into plain values: which endpoints to scrape
// (x_stats_open_metrics_endpoints, {name: URL}), which HTTP headers to send them
// (x_stats_open_metrics_http_headers, {header: value}) and which series to keep
// (x_stats_open_metrics_filters, a list of regexes or {metricRegex: {labelName: valueRegex}}). Pure, so the
// settings parser can reject a bad value when runmon starts (exit status 2) and the fuzzer can drive them.
//
// What is rejected, and why: a URL that is not http(s) with a host (libcurl would happily read file:// or
// talk to other protocols), an empty endpoint name or one with control characters (it becomes part of
// every key and of a lane's name), a header name that is not an RFC 9110 token and a value with CR, LF or
// other control characters (header injection: each header is one line of the request), non-string header
// values (W&B's setting is dict[str, str]) and regexes RE2 cannot compile within its memory bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon {

inline constexpr size_t kMaxOpenMetricsEndpoints = 64;  // each one is a thread
inline constexpr size_t kMaxOpenMetricsEndpointNameBytes = 256;
inline constexpr size_t kMaxOpenMetricsUrlBytes = 8192;
inline constexpr size_t kMaxOpenMetricsHeaders = 64;
inline constexpr size_t kMaxOpenMetricsHeaderBytes = 8192;               // name + value of one header
inline constexpr int64_t kOpenMetricsMaxRegexMemory = int64_t{1} << 20;  // RE2 max_mem per filter regex

struct OpenMetricsEndpoint {
  std::string name;
  std::string url;
};

struct OpenMetricsHeader {
  std::string name;
  std::string value;
};

struct OpenMetricsLabelRule {
  std::string label;
  std::string value_pattern;
};

struct OpenMetricsFilterRule {
  std::string metric_pattern;
  std::vector<OpenMetricsLabelRule> labels;  // empty: every series of a matching metric
};

struct OpenMetricsFilterSpec {
  enum class Kind { kAll, kList, kDict };
  Kind kind = Kind::kAll;
  std::vector<std::string> list;            // kList: keep when any matches "<endpoint>.<metric>"
  std::vector<OpenMetricsFilterRule> dict;  // kDict
};

// {"name": "http://host:port/path", ...}, sorted by name. {} is no endpoints.
Result<std::vector<OpenMetricsEndpoint>> ParseOpenMetricsEndpoints(std::string_view json);

// {"Header-Name": "value", ...}, sorted by name (JSON objects have no duplicate names; the last one wins).
Result<std::vector<OpenMetricsHeader>> ParseOpenMetricsHeaders(std::string_view json);

// nullopt, "null", "[]" and "{}" keep everything. Every regex is compiled once (RE2,
// kOpenMetricsMaxRegexMemory) to check it, so a spec returned here compiles.
Result<OpenMetricsFilterSpec> ParseOpenMetricsFilters(std::optional<std::string_view> json);

// Whether `url` is http:// or https:// (any case) with a non-empty host, an optional port 1-65535, and no
// blanks or control characters. The reason when not.
Status CheckOpenMetricsUrl(std::string_view url);

// `url` with any user:password@ replaced by "***@", for messages and metadata.
std::string RedactUrl(std::string_view url);

}  // namespace runmon
