// The dashboard's JSON API (docs/serve-api.md) as plain functions: query parameters and a RunStore in, a
// status and a body out. The HTTP server (server.hpp) only routes to these, so they are tested without
// sockets. Every parameter is checked: a malformed one is a 400 with a message, never a guess.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "web/run_store.hpp"

namespace runmon::web {

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

using QueryParams = std::multimap<std::string, std::string>;

ApiResponse ListRuns(const RunStore& store, const QueryParams& params);
ApiResponse DescribeRun(RunStore& store, std::string_view dir);
ApiResponse ChartJson(RunStore& store, const QueryParams& params);
ApiResponse ChartCsv(RunStore& store, const QueryParams& params);
ApiResponse GetLayout(const RunStore& store);
ApiResponse PutLayout(const RunStore& store, std::string_view body);

// The layout file beside the runs.
inline constexpr std::string_view kLayoutFileName = ".runmon-dashboard.json";
inline constexpr size_t kMaxLayoutBytes = 64 * 1024;
// Checks a layout document (docs/serve-api.md); returns it normalised, or an error message.
Result<std::string> ValidateLayout(std::string_view body);

ApiResponse ErrorResponse(int status, std::string_view message);
// JSON string literal for `text` (quotes included; invalid UTF-8 replaced).
std::string JsonString(std::string_view text);

}  // namespace runmon::web
