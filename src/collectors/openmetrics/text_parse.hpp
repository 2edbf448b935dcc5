// Parser for the Prometheus text exposition format 0.0.4 and the OpenMetrics 1.0 text format, the bodies an
// OpenMetrics endpoint (/metrics) returns. Pure: it takes the body and returns samples, so unit tests and the
// fuzzer drive it directly. A scraper must not lose a whole endpoint for one bad line, so errors are per line
// (the line is skipped and reported); only the limits (a line longer than max_line_bytes, more than
// max_samples samples) stop parsing, with truncated = true. Time is linear in the input (no backtracking).
//
// Lenient on purpose (documented choices, where the two formats or real exporters differ):
//  - The format is OpenMetrics when ParseOptions says so, or (kAuto) when the body's last line is "# EOF";
//    otherwise Prometheus 0.0.4. A truncated OpenMetrics body therefore parses as Prometheus text.
//  - Both formats accept the union of the metric types, exemplars, # UNIT, blank lines, leading/trailing
//    blanks, CRLF line ends, blanks between tokens, a trailing ',' in a label set, and UTF-8 names quoted in
//    braces ({"my.metric", "my.label"="x"}, the Prometheus 3 / OpenMetrics 2 style).
//  - Timestamps: Prometheus text has integer milliseconds, OpenMetrics float seconds; both are returned as
//    seconds.
//  - A # TYPE line after samples of its family: OpenMetrics forbids it (the TYPE line is an error and
//    ignored); Prometheus tolerates it (earlier samples keep their untyped type, later ones get the TYPE).
//    A second TYPE or HELP line for one family is an error in both.
//  - OpenMetrics: comment lines other than HELP/TYPE/UNIT/EOF are errors; text after "# EOF" is an error.
//  - A last line without its '\n' (a cut-off body) is not parsed (reported), except "# EOF".
//  - Duplicate series (same name and labels twice) are kept, in order; FindDuplicateSeries finds them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runmon::openmetrics {

enum class MetricType {
  kUnknown,
  kCounter,
  kGauge,
  kHistogram,
  kSummary,
  kUntyped,
  kGaugeHistogram,
  kStateSet,
  kInfo
};
// The # TYPE word: "counter", "gaugehistogram", ...
std::string_view MetricTypeName(MetricType type);

enum class TextFormat { kAuto, kPrometheus, kOpenMetrics };

// Sorted by name; names are unique.
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Exemplar {
  Labels labels;
  double value = 0;
  std::optional<double> timestamp_seconds;
};

struct MetricSample {
  // The family the sample belongs to: the TYPE'd name x for samples x_total, x_bucket, ... when x has a TYPE
  // that has that suffix; otherwise the sample's own name.
  std::string family;
  std::string name;  // the full sample name, e.g. "http_requests_total"
  Labels labels;
  double value = 0;
  std::optional<double> timestamp_seconds;
  // The family's TYPE; without one kUntyped (Prometheus) or kUnknown (OpenMetrics).
  MetricType type = MetricType::kUnknown;
  std::optional<Exemplar> exemplar;
  size_t line = 0;  // 1-based
};

// A family named by a # TYPE, # HELP or # UNIT line, in order of first mention.
struct MetricFamily {
  std::string name;
  MetricType type = MetricType::kUnknown;  // kUnknown until a TYPE line sets it
  bool typed = false;
  std::string help;
  std::string unit;
};

struct ParseOptions {
  TextFormat format = TextFormat::kAuto;
  size_t max_samples = 1'000'000;           // one more stops parsing (truncated)
  size_t max_line_bytes = size_t{1} << 20;  // a longer line stops parsing (truncated)
  size_t max_labels = 128;                  // per label set; more is an error for that line
  size_t max_errors = 20;                   // messages kept; error_count counts them all
};

struct ParseResult {
  std::vector<MetricSample> samples;
  std::vector<MetricFamily> families;
  std::vector<std::string> errors;  // "line N: reason", the first max_errors
  size_t error_count = 0;
  bool truncated = false;    // stopped at a limit
  bool openmetrics = false;  // parsed as OpenMetrics
  bool saw_eof = false;      // "# EOF" seen (OpenMetrics)
};

ParseResult ParseExposition(std::string_view text, const ParseOptions& options = {});

// Indices of samples whose name and labels equal those of an earlier sample, ascending.
std::vector<size_t> FindDuplicateSeries(const std::vector<MetricSample>& samples);

// One sample line (no '\n') that ParseExposition reads back as the same name, labels, value (NaN stays NaN),
// timestamp and exemplar. kOpenMetrics writes seconds timestamps, otherwise integer milliseconds.
std::string FormatSample(const MetricSample& sample, TextFormat format);

}  // namespace runmon::openmetrics
