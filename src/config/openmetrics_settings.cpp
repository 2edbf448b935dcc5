// Parsers of the OpenMetrics settings (see openmetrics_settings.hpp). Messages never repeat a header's value
// or a URL's password: both are often credentials, and the messages go to the terminal and to logs.
#include "config/openmetrics_settings.hpp"

#include <re2/re2.h>

#include <cctype>
#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include <fmt/format.h>

namespace runmon {
namespace {

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsControl(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

bool HasControl(std::string_view s) {
  for (char c : s) {
    if (IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

// RFC 9110 token characters: what a header name may hold.
bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// A JSON document, or why not. The caller's text is the whole setting.
Result<nlohmann::json> ParseJson(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{"not valid JSON"};
  return doc;
}

// A quoted, printable rendering of a name for messages (names may hold anything JSON allows).
std::string Quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status CheckRegex(const std::string& pattern) {
  re2::RE2::Options options;
  options.set_max_mem(kOpenMetricsMaxRegexMemory);
  options.set_log_errors(false);
  const re2::RE2 re(pattern, options);
  if (!re.ok()) return Error{fmt::format("regex {} does not compile: {}", Quoted(pattern), re.error())};
  return OkStatus();
}

}  // namespace

Status CheckOpenMetricsUrl(std::string_view url) {
  if (url.empty()) return Error{"the URL is empty"};
  if (url.size() > kMaxOpenMetricsUrlBytes) {
    return Error{fmt::format("the URL is longer than {} bytes", kMaxOpenMetricsUrlBytes)};
  }
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (IsControl(u) || c == ' ') return Error{"the URL contains a blank or a control character"};
  }
  std::string_view rest;
  if (StartsWithIgnoreCase(url, "http://")) {
    rest = url.substr(7);
  } else if (StartsWithIgnoreCase(url, "https://")) {
    rest = url.substr(8);
  } else {
    return Error{"only http:// and https:// URLs can be scraped"};
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error{"the URL's IPv6 address has no closing ']'"};
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Error{"unexpected text after the URL's IPv6 address"};
      port = after.substr(1);
      if (port.empty()) return Error{"the URL has an empty port"};
    }
    if (host.size() <= 2) return Error{"the URL has no host"};
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return Error{"the URL has an empty port"};
  }
  if (host.empty()) return Error{"the URL has no host"};
  if (!port.empty()) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return Error{"the URL's port is not a number from 1 to 65535"};
    }
  }
  return OkStatus();
}

std::string RedactUrl(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t authority_start = scheme_end + 3;
  const size_t authority_end = url.find_first_of("/?#", authority_start);
  const std::string_view authority =
      url.substr(authority_start, authority_end == std::string_view::npos ? std::string_view::npos
                                                                          : authority_end - authority_start);
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, authority_start));
  out += "***@";
  out += url.substr(authority_start + at + 1);
  return out;
}

Result<std::vector<OpenMetricsEndpoint>> ParseOpenMetricsEndpoints(std::string_view json) {
  auto doc = ParseJson(TrimSpace(json));
  if (!doc) return Error{doc.error()};
  if (!doc->is_object()) return Error{"expected a JSON object {\"name\": \"http://host:port/metrics\"}"};
  if (doc->size() > kMaxOpenMetricsEndpoints) {
    return Error{fmt::format("at most {} endpoints", kMaxOpenMetricsEndpoints)};
  }
  std::vector<OpenMetricsEndpoint> endpoints;
  for (const auto& [name, url] : doc->items()) {
    if (name.empty()) return Error{"an endpoint name is empty"};
    if (name.size() > kMaxOpenMetricsEndpointNameBytes) {
      return Error{fmt::format("endpoint name {}... is longer than {} bytes", Quoted(name.substr(0, 32)),
                               kMaxOpenMetricsEndpointNameBytes)};
    }
    if (HasControl(name)) {
      return Error{fmt::format("endpoint name {} contains a control character", Quoted(name))};
    }
    if (!url.is_string()) {
      return Error{
          fmt::format("endpoint {}: the URL must be a string, not {}", Quoted(name), url.type_name())};
    }
    const std::string& text = url.get_ref<const std::string&>();
    if (auto ok = CheckOpenMetricsUrl(text); !ok) {
      return Error{fmt::format("endpoint {} ({}): {}", Quoted(name), Quoted(RedactUrl(text)), ok.error())};
    }
    endpoints.push_back(OpenMetricsEndpoint{.name = name, .url = text});
  }
  return endpoints;
}

Result<std::vector<OpenMetricsHeader>> ParseOpenMetricsHeaders(std::string_view json) {
  auto doc = ParseJson(TrimSpace(json));
  if (!doc) return Error{doc.error()};
  if (!doc->is_object()) return Error{"expected a JSON object {\"Header-Name\": \"value\"}"};
  if (doc->size() > kMaxOpenMetricsHeaders) {
    return Error{fmt::format("at most {} headers", kMaxOpenMetricsHeaders)};
  }
  std::vector<OpenMetricsHeader> headers;
  for (const auto& [name, value] : doc->items()) {
    if (name.empty()) return Error{"a header name is empty"};
    for (char c : name) {
      if (!IsTokenChar(c)) {
        return Error{
            fmt::format("header name {} may hold only letters, digits and !#$%&'*+-.^_`|~ "
                        "(no blanks, ':' or control characters)",
                        Quoted(name))};
      }
    }
    if (!value.is_string()) {
      return Error{
          fmt::format("header {}: the value must be a string, not {}", Quoted(name), value.type_name())};
    }
    const std::string& text = value.get_ref<const std::string&>();
    for (char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (IsControl(u) && c != '\t') {
        return Error{fmt::format("header {}: the value contains a control character (CR, LF, NUL, ...)",
                                 Quoted(name))};
      }
    }
    if (name.size() + text.size() > kMaxOpenMetricsHeaderBytes) {
      return Error{
          fmt::format("header {} is longer than {} bytes", Quoted(name), kMaxOpenMetricsHeaderBytes)};
    }
    headers.push_back(OpenMetricsHeader{.name = name, .value = text});
  }
  return headers;
}

Result<OpenMetricsFilterSpec> ParseOpenMetricsFilters(std::optional<std::string_view> json) {
  OpenMetricsFilterSpec spec;
  if (!json) return spec;
  auto doc = ParseJson(*json);
  if (!doc) return Error{doc.error()};
  if (doc->is_null()) return spec;
  if (doc->is_array()) {
    for (const auto& item : *doc) {
      if (!item.is_string()) {
        return Error{fmt::format("a list of filters must hold only regex strings, not {}",
                                 item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
      }
      std::string pattern = item.get<std::string>();
      if (auto ok = CheckRegex(pattern); !ok) return Error{ok.error()};
      spec.list.push_back(std::move(pattern));
    }
    spec.kind = spec.list.empty() ? OpenMetricsFilterSpec::Kind::kAll : OpenMetricsFilterSpec::Kind::kList;
    return spec;
  }
  if (doc->is_object()) {
    for (const auto& [metric_pattern, label_rules] : doc->items()) {
      OpenMetricsFilterRule rule{.metric_pattern = metric_pattern, .labels = {}};
      if (auto ok = CheckRegex(metric_pattern); !ok) return Error{ok.error()};
      if (!label_rules.is_null() && !label_rules.is_object()) {
        return Error{
            fmt::format("the label filters of {} must be an object {{labelName: valueRegex}}, not {}",
                        Quoted(metric_pattern),
                        label_rules.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
      }
      if (label_rules.is_object()) {
        for (const auto& [label, value_pattern] : label_rules.items()) {
          if (!value_pattern.is_string()) {
            return Error{
                fmt::format("the filter of label {} under {} must be a regex string, not {}", Quoted(label),
                            Quoted(metric_pattern),
                            value_pattern.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
          }
          std::string pattern = value_pattern.get<std::string>();
          if (auto ok = CheckRegex(pattern); !ok) return Error{ok.error()};
          rule.labels.push_back(OpenMetricsLabelRule{.label = label, .value_pattern = std::move(pattern)});
        }
      }
      spec.dict.push_back(std::move(rule));
    }
    spec.kind = spec.dict.empty() ? OpenMetricsFilterSpec::Kind::kAll : OpenMetricsFilterSpec::Kind::kDict;
    return spec;
  }
  return Error{
      fmt::format("must be a list of regexes or an object {{metricRegex: {{labelName: valueRegex}}}}, "
                  "not {}",
                  doc->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
}

}  // namespace runmon
