// The API's shared helpers: query parameters, numbers, names, error statuses. See api_common.hpp.
#include "web/api_common.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace runmon::web {

std::optional<std::string> Param(const QueryParams& params, const std::string& name) {
  const auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

Result<long long> IntParam(const QueryParams& params, const std::string& name, long long fallback,
                           long long min, long long max) {
  const auto text = Param(params, name);
  if (!text) return fallback;
  long long value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    return Error{fmt::format("{}: '{}' is not an integer from {} to {}", name, ToValidUtf8(*text), min, max)};
  }
  return value;
}

Result<std::optional<double>> NumberParam(const QueryParams& params, const std::string& name) {
  const auto text = Param(params, name);
  if (!text) return std::optional<double>();
  double value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || !std::isfinite(value)) {
    return Error{fmt::format("{}: '{}' is not a finite number", name, ToValidUtf8(*text))};
  }
  return std::optional<double>(value);
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) parts.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

void AppendValues(std::string& out, const std::vector<std::optional<double>>& values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    if (values[i]) {
      AppendNumber(out, static_cast<float>(*values[i]));
    } else {
      out += "null";
    }
  }
  out += ']';
}

void AppendNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}
void AppendNumber(std::string& out, float value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", value);
}

std::string DisplayName(const runview::RunOverview& overview, std::string_view dir) {
  if (!overview.name.empty()) return runview::ShortName(overview.name);
  if (!overview.id.empty()) return overview.id;
  return std::string(dir);
}

ApiResponse FromError(const std::string& message) {
  if (message.starts_with("404:")) return ErrorResponse(404, message.substr(4));
  if (message.starts_with("503:")) return ErrorResponse(503, message.substr(4));
  return ErrorResponse(400, message);
}

}  // namespace runmon::web
