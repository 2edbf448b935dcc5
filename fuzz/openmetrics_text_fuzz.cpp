// Fuzzes ParseExposition (Prometheus text 0.0.4 / OpenMetrics 1.0): no crash; the limits hold; every
// sample's labels are sorted and unique, its names valid; and FormatSample of each sample parses back to the
// same sample. The first input byte picks the format and small limits, so the limit paths are reached too.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "collectors/openmetrics/text_parse.hpp"
#include "core/utf8.hpp"
#include "fuzz_check.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace {

using runmon::openmetrics::MetricSample;
using runmon::openmetrics::ParseExposition;
using runmon::openmetrics::ParseOptions;
using runmon::openmetrics::TextFormat;

bool SameDouble(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(a)) == 0 || a == b;
}

bool ValidName(std::string_view name, bool metric) {
  if (metric ? runmon::prometheus_text::IsValidMetricName(name)
             : runmon::prometheus_text::IsValidLabelName(name)) {
    return true;
  }
  return !name.empty() && runmon::IsValidUtf8(name);
}

void CheckLabels(const runmon::openmetrics::Labels& labels, size_t max_labels) {
  FUZZ_CHECK(labels.size() <= max_labels);
  for (size_t i = 0; i < labels.size(); ++i) {
    FUZZ_CHECK(ValidName(labels[i].first, false));
    FUZZ_CHECK(runmon::IsValidUtf8(labels[i].second));
    if (i > 0) FUZZ_CHECK(labels[i - 1].first < labels[i].first);
  }
}

void CheckRoundTrip(const MetricSample& s) {
  const std::string text = runmon::openmetrics::FormatSample(s, TextFormat::kOpenMetrics) + "\n# EOF\n";
  ParseOptions options;
  options.format = TextFormat::kOpenMetrics;
  const auto back = ParseExposition(text, options);
  FUZZ_CHECK(back.error_count == 0);
  FUZZ_CHECK(back.samples.size() == 1);
  const MetricSample& b = back.samples[0];
  FUZZ_CHECK(b.name == s.name);
  FUZZ_CHECK(b.labels == s.labels);
  FUZZ_CHECK(SameDouble(b.value, s.value));
  FUZZ_CHECK(b.timestamp_seconds.has_value() == s.timestamp_seconds.has_value());
  if (s.timestamp_seconds) FUZZ_CHECK(*b.timestamp_seconds == *s.timestamp_seconds);
  FUZZ_CHECK(b.exemplar.has_value() == s.exemplar.has_value());
  if (s.exemplar) {
    FUZZ_CHECK(b.exemplar->labels == s.exemplar->labels);
    FUZZ_CHECK(SameDouble(b.exemplar->value, s.exemplar->value));
    FUZZ_CHECK(b.exemplar->timestamp_seconds == s.exemplar->timestamp_seconds);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view text = runmon::fuzz::AsText(data + 1, size - 1);
  ParseOptions options;
  options.format = static_cast<TextFormat>(control % 3);
  if (control & 0x04) {
    options.max_samples = 5;
    options.max_line_bytes = 64;
    options.max_labels = 3;
    options.max_errors = 2;
  }
  const auto result = ParseExposition(text, options);
  FUZZ_CHECK(result.samples.size() <= options.max_samples);
  FUZZ_CHECK(result.errors.size() <= options.max_errors);
  FUZZ_CHECK(result.errors.size() <= result.error_count);
  FUZZ_CHECK(result.error_count <= text.size() + 2);  // at most one per line, plus EOF/limit ones
  size_t last_line = 0;
  for (const MetricSample& s : result.samples) {
    FUZZ_CHECK(ValidName(s.name, true));
    FUZZ_CHECK(!s.family.empty() && s.name.compare(0, s.family.size(), s.family) == 0);
    FUZZ_CHECK(s.line > last_line);
    last_line = s.line;
    CheckLabels(s.labels, options.max_labels);
    if (s.exemplar) CheckLabels(s.exemplar->labels, options.max_labels);
    if (s.timestamp_seconds) FUZZ_CHECK(std::isfinite(*s.timestamp_seconds));
    CheckRoundTrip(s);
  }
  (void)runmon::openmetrics::FindDuplicateSeries(result.samples);
  return 0;
}
