// Fuzzes the OpenMetrics settings parsers (config/openmetrics_settings.hpp) with the whole input as each of
// the three settings, and checks what they accept: endpoint names non-empty without control characters, URLs
// http(s) with a host that RedactUrl strips of any password, header names RFC 9110 tokens and values without
// CR/LF/NUL, filters that SeriesFilter compiles (the settings check and the collector agree), and
// ApplyWandbSetting accepting exactly what the parsers accept.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/openmetrics/series_filter.hpp"
#include "config/openmetrics_settings.hpp"
#include "config/settings.hpp"
#include "fuzz_check.hpp"

namespace {

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

void CheckRedacted(std::string_view url) {
  const std::string redacted = runmon::RedactUrl(url);
  FUZZ_CHECK(redacted.size() <= url.size() + 4);
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    FUZZ_CHECK(redacted == url);
    return;
  }
  const size_t start = scheme + 3;
  const std::string_view authority = url.substr(start, url.find_first_of("/?#", start) - start);
  if (authority.find('@') == std::string_view::npos) {
    FUZZ_CHECK(redacted == url);
  } else {
    FUZZ_CHECK(redacted.compare(start, 4, "***@") == 0);
    // Nothing of the user information survives.
    FUZZ_CHECK(redacted.size() - (start + 4) == url.size() - (start + authority.rfind('@') + 1));
  }
}

// ApplyWandbSetting trims what std::isspace calls blank (JSON itself allows fewer blanks).
std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);

  (void)runmon::CheckOpenMetricsUrl(text);
  CheckRedacted(text);

  const auto endpoints = runmon::ParseOpenMetricsEndpoints(text);
  if (endpoints) {
    FUZZ_CHECK(endpoints->size() <= runmon::kMaxOpenMetricsEndpoints);
    for (const auto& endpoint : *endpoints) {
      FUZZ_CHECK(!endpoint.name.empty() && endpoint.name.size() <= runmon::kMaxOpenMetricsEndpointNameBytes);
      for (char c : endpoint.name) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
      FUZZ_CHECK(runmon::CheckOpenMetricsUrl(endpoint.url).ok());
      FUZZ_CHECK(StartsWithIgnoreCase(endpoint.url, "http://") ||
                 StartsWithIgnoreCase(endpoint.url, "https://"));
      for (char c : endpoint.url) FUZZ_CHECK(static_cast<unsigned char>(c) > 0x20 && c != 0x7f);
      CheckRedacted(endpoint.url);
    }
  } else {
    FUZZ_CHECK(!endpoints.error().empty());
  }

  const auto headers = runmon::ParseOpenMetricsHeaders(text);
  if (headers) {
    FUZZ_CHECK(headers->size() <= runmon::kMaxOpenMetricsHeaders);
    for (const auto& header : *headers) {
      FUZZ_CHECK(!header.name.empty());
      for (char c : header.name) {
        FUZZ_CHECK(std::isalnum(static_cast<unsigned char>(c)) ||
                   std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos);
      }
      for (char c : header.value)
        FUZZ_CHECK(c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
      FUZZ_CHECK(header.name.size() + header.value.size() <= runmon::kMaxOpenMetricsHeaderBytes);
    }
  } else {
    FUZZ_CHECK(!headers.error().empty());
  }

  const auto filters = runmon::ParseOpenMetricsFilters(text);
  const auto compiled = runmon::openmetrics::SeriesFilter::FromSetting(text);
  FUZZ_CHECK(filters.ok() == compiled.ok());
  if (filters) {
    using Kind = runmon::OpenMetricsFilterSpec::Kind;
    FUZZ_CHECK((filters->kind == Kind::kList) == !filters->list.empty());
    FUZZ_CHECK((filters->kind == Kind::kDict) == !filters->dict.empty());
    const auto from_spec = runmon::openmetrics::SeriesFilter::FromSpec(*filters);
    FUZZ_CHECK(from_spec.ok());
    FUZZ_CHECK(from_spec->KeepsAll() == (filters->kind == Kind::kAll));
    // Deterministic, and the same as what FromSetting built.
    const runmon::openmetrics::Labels labels = {{"gpu", "0"}};
    FUZZ_CHECK(from_spec->Keep("ep.m", labels) == compiled->Keep("ep.m", labels));
  }

  // Through the settings parser: accepted only when the parser accepts the (trimmed) value.
  const std::string_view trimmed = Trim(text);
  for (const auto& [name, accepted] :
       {std::pair{"x_stats_open_metrics_endpoints", runmon::ParseOpenMetricsEndpoints(trimmed).ok()},
        std::pair{"x_stats_open_metrics_http_headers", runmon::ParseOpenMetricsHeaders(trimmed).ok()},
        std::pair{"x_stats_open_metrics_filters", runmon::ParseOpenMetricsFilters(trimmed).ok()}}) {
    runmon::Settings settings;
    const auto status = runmon::ApplyWandbSetting(settings, name, text);
    if (status) {
      FUZZ_CHECK(accepted);
      FUZZ_CHECK(settings.other.count(name) == 1);
    } else {
      FUZZ_CHECK(!status.error().empty());
      FUZZ_CHECK(settings.other.empty());
    }
  }
  return 0;
}
