// One parsed sample written back as a line of the text format (FormatSample, text_parse.hpp), the inverse of
// the parser that its round-trip test and fuzz target hold it to. Names and label names outside the legacy
// grammar are written quoted, as OpenMetrics 1.0 allows.
#include <cmath>
#include <string>

#include "collectors/openmetrics/text_parse.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace runmon::openmetrics {
namespace {

void AppendQuoted(std::string& out, std::string_view s) {
  out += '"';
  prometheus_text::AppendEscapedQuoted(out, s);
  out += '"';
}

void AppendLabel(std::string& out, const std::pair<std::string, std::string>& label) {
  if (prometheus_text::IsValidLabelName(label.first)) {
    out += label.first;
  } else {
    AppendQuoted(out, label.first);
  }
  out += '=';
  AppendQuoted(out, label.second);
}

void AppendTimestamp(std::string& out, double seconds, bool openmetrics) {
  out += ' ';
  if (openmetrics) {
    prometheus_text::AppendFloat(out, seconds);
  } else {
    out += std::to_string(std::llround(seconds * 1000.0));
  }
}

}  // namespace

std::string FormatSample(const MetricSample& sample, TextFormat format) {
  const bool openmetrics = format == TextFormat::kOpenMetrics;
  std::string out;
  const bool legacy = prometheus_text::IsValidMetricName(sample.name);
  if (legacy) out += sample.name;
  if (!legacy || !sample.labels.empty()) {
    out += '{';
    bool first = true;
    if (!legacy) {
      AppendQuoted(out, sample.name);
      first = false;
    }
    for (const auto& label : sample.labels) {
      if (!first) out += ',';
      first = false;
      AppendLabel(out, label);
    }
    out += '}';
  }
  out += ' ';
  prometheus_text::AppendFloat(out, sample.value);
  if (sample.timestamp_seconds) AppendTimestamp(out, *sample.timestamp_seconds, openmetrics);
  if (sample.exemplar) {
    out += " # {";
    bool first = true;
    for (const auto& label : sample.exemplar->labels) {
      if (!first) out += ',';
      first = false;
      AppendLabel(out, label);
    }
    out += "} ";
    prometheus_text::AppendFloat(out, sample.exemplar->value);
    if (sample.exemplar->timestamp_seconds) AppendTimestamp(out, *sample.exemplar->timestamp_seconds, true);
  }
  return out;
}

}  // namespace runmon::openmetrics
