// JSON lines and tables for samples. Numbers use the shortest form that reads back to the same double.
#include "app/output.hpp"

#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "core/catalog.hpp"
#include "core/utf8.hpp"

namespace runmon {

void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t length = Utf8SequenceLength(text, i)) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out += '"';
}

std::string FormatSampleJson(const Sample& sample) {
  std::string out;
  out.reserve(64 + sample.metrics.items().size() * 40);
  fmt::format_to(std::back_inserter(out), "{{\"_timestamp\":{},\"_runtime\":{}", sample.timestamp,
                 sample.runtime);
  if (sample.late) out += ",\"_late\":true";
  for (const auto& metric : sample.metrics.items()) {
    if (!std::isfinite(metric.value)) continue;
    out += ',';
    AppendJsonString(out, metric.key);
    fmt::format_to(std::back_inserter(out), ":{}", metric.value);
  }
  out += "}\n";
  return out;
}

std::string FormatSampleTable(const Sample& sample, uint64_t number) {
  const auto seconds = static_cast<time_t>(sample.timestamp);
  tm local{};
  localtime_r(&seconds, &local);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &local);
  std::string out = fmt::format("sample {}{} at {} (runtime {:.1f} s)\n", number,
                                sample.late ? " (late values)" : "", when, sample.runtime);
  size_t width = 0;
  for (const auto& metric : sample.metrics.items()) width = std::max(width, metric.key.size());
  for (const auto& metric : sample.metrics.items()) {
    const MetricDefinition* definition = FindMetricDefinition(metric.key);
    const std::string_view unit = definition ? definition->unit : "";
    const std::string_view title = definition ? definition->title : "";
    fmt::format_to(std::back_inserter(out), "  {:<{}}  {:>14.6g} {:<7} {}\n", metric.key, width, metric.value,
                   unit, title);
  }
  return out;
}

}  // namespace runmon
