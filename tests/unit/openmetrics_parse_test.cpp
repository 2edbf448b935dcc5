// Unit tests of the Prometheus text 0.0.4 / OpenMetrics 1.0 parser: every syntax element, every error path,
// the limits, cut-off bodies, and the fixtures in tests/fixtures/openmetrics/ (a node_exporter excerpt, the
// DCGM exporter text W&B tests with, and an OpenMetrics document with units, _created and exemplars).
#include "collectors/openmetrics/text_parse.hpp"
#include "core/utf8.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace runmon::openmetrics {
namespace {

// The fixtures are tests/fixtures/openmetrics (RUNMON_FIXTURES_DIR: an absolute path, unlike __FILE__,
// which a compiler cache or another build layout may make relative).
std::string ReadFixture(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(RUNMON_FIXTURES_DIR) / "openmetrics";
  std::ifstream in(dir / name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << name;
  return out.str();
}

ParseResult Parse(std::string_view text, TextFormat format = TextFormat::kAuto) {
  ParseOptions options;
  options.format = format;
  return ParseExposition(text, options);
}

// One sample line, expected to parse without errors.
MetricSample One(std::string_view text, TextFormat format = TextFormat::kAuto) {
  const ParseResult result = Parse(text, format);
  EXPECT_EQ(result.error_count, 0u) << (result.errors.empty() ? "" : result.errors[0]);
  EXPECT_EQ(result.samples.size(), 1u);
  return result.samples.empty() ? MetricSample{} : result.samples[0];
}

// The first error's text, expecting exactly one error and no samples.
std::string OnlyError(std::string_view text, TextFormat format = TextFormat::kAuto) {
  const ParseResult result = Parse(text, format);
  EXPECT_EQ(result.error_count, 1u);
  EXPECT_TRUE(result.samples.empty());
  return result.errors.empty() ? "" : result.errors[0];
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(OpenMetricsParse, EmptyBodyHasNoSamplesAndNoErrors) {
  const ParseResult result = Parse("");
  EXPECT_TRUE(result.samples.empty());
  EXPECT_EQ(result.error_count, 0u);
  EXPECT_FALSE(result.truncated);
  EXPECT_FALSE(result.openmetrics);
}

TEST(OpenMetricsParse, BareSampleIsUntyped) {
  const MetricSample s = One("up 1\n");
  EXPECT_EQ(s.name, "up");
  EXPECT_EQ(s.family, "up");
  EXPECT_EQ(s.value, 1.0);
  EXPECT_TRUE(s.labels.empty());
  EXPECT_FALSE(s.timestamp_seconds);
  EXPECT_EQ(s.type, MetricType::kUntyped);
  EXPECT_EQ(s.line, 1u);
}

TEST(OpenMetricsParse, MetricNameCharacters) {
  EXPECT_EQ(One("a:b_c:D9 2\n").name, "a:b_c:D9");
  EXPECT_EQ(One("_x 2\n").name, "_x");
  EXPECT_EQ(One(":x 2\n").name, ":x");
}

TEST(OpenMetricsParse, LabelsAreSortedByName) {
  const MetricSample s = One("m{z=\"1\",a=\"2\",m=\"3\"} 4\n");
  ASSERT_EQ(s.labels.size(), 3u);
  EXPECT_EQ(s.labels[0], (std::pair<std::string, std::string>{"a", "2"}));
  EXPECT_EQ(s.labels[1], (std::pair<std::string, std::string>{"m", "3"}));
  EXPECT_EQ(s.labels[2], (std::pair<std::string, std::string>{"z", "1"}));
}

TEST(OpenMetricsParse, LabelValueEscapes) {
  const MetricSample s = One(R"(m{a="x\\y",b="say \"hi\"",c="l1\nl2"} 1)"
                             "\n");
  ASSERT_EQ(s.labels.size(), 3u);
  EXPECT_EQ(s.labels[0].second, "x\\y");
  EXPECT_EQ(s.labels[1].second, "say \"hi\"");
  EXPECT_EQ(s.labels[2].second, "l1\nl2");
}

TEST(OpenMetricsParse, EmptyLabelSetTrailingCommaAndBlanks) {
  EXPECT_TRUE(One("m{} 1\n").labels.empty());
  EXPECT_EQ(One("m{a=\"1\",} 1\n").labels.size(), 1u);
  const MetricSample s = One("m { a = \"1\" , b=\"2\" }   7  \n");
  EXPECT_EQ(s.labels.size(), 2u);
  EXPECT_EQ(s.value, 7.0);
}

TEST(OpenMetricsParse, LabelValueMayContainUtf8AndBraces) {
  const MetricSample s = One("m{a=\"h\xC3\xA9llo } {x=\\\"\"} 1\n");
  EXPECT_EQ(s.labels[0].second, "h\xC3\xA9llo } {x=\"");
}

TEST(OpenMetricsParse, GoFloatValues) {
  EXPECT_EQ(One("m 1.5e3\n").value, 1500.0);
  EXPECT_EQ(One("m -0.25\n").value, -0.25);
  EXPECT_EQ(One("m +7\n").value, 7.0);
  EXPECT_EQ(One("m .5\n").value, 0.5);
  EXPECT_EQ(One("m 0x1p-2\n").value, 0.25);
  EXPECT_TRUE(std::isnan(One("m NaN\n").value));
  EXPECT_TRUE(std::isnan(One("m nan\n").value));
  EXPECT_EQ(One("m +Inf\n").value, INFINITY);
  EXPECT_EQ(One("m -Inf\n").value, -INFINITY);
  EXPECT_EQ(One("m Inf\n").value, INFINITY);
  EXPECT_EQ(One("m 1e-400\n").value, 0.0);
}

TEST(OpenMetricsParse, BadFloatsAreErrors) {
  for (const char* bad : {"m 1e\n", "m abc\n", "m 1_000\n", "m 0x10\n", "m --1\n", "m 1e400\n", "m +\n",
                          "m 1,5\n", "m infx\n"}) {
    EXPECT_TRUE(Contains(OnlyError(bad), "invalid value")) << bad;
  }
}

TEST(OpenMetricsParse, MissingValue) {
  EXPECT_TRUE(Contains(OnlyError("m\n"), "missing value"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"b\"}\n"), "missing value"));
}

TEST(OpenMetricsParse, PrometheusTimestampIsIntegerMilliseconds) {
  const MetricSample s = One("m 1 1712345678123\n");
  ASSERT_TRUE(s.timestamp_seconds);
  EXPECT_DOUBLE_EQ(*s.timestamp_seconds, 1712345678.123);
  EXPECT_DOUBLE_EQ(*One("m 1 -5000\n").timestamp_seconds, -5.0);
  EXPECT_TRUE(Contains(OnlyError("m 1 1.5\n"), "invalid timestamp"));
  EXPECT_TRUE(Contains(OnlyError("m 1 99999999999999999999\n"), "invalid timestamp"));
  EXPECT_TRUE(Contains(OnlyError("m 1 2 3\n"), "unexpected text after sample"));
}

TEST(OpenMetricsParse, OpenMetricsTimestampIsFloatSeconds) {
  const MetricSample s = One("m 1 1712345678.5\n# EOF\n");
  ASSERT_TRUE(s.timestamp_seconds);
  EXPECT_EQ(*s.timestamp_seconds, 1712345678.5);
  EXPECT_TRUE(Contains(OnlyError("m 1 NaN\n# EOF\n"), "invalid timestamp"));
}

TEST(OpenMetricsParse, HelpAndTypeLines) {
  const ParseResult r = Parse("# HELP m Some \\\\ help\\nmore\n# TYPE m gauge\nm 1\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(r.families[0].name, "m");
  EXPECT_EQ(r.families[0].help, "Some \\ help\nmore");
  EXPECT_EQ(r.families[0].type, MetricType::kGauge);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].type, MetricType::kGauge);
}

TEST(OpenMetricsParse, EveryTypeWord) {
  const std::pair<const char*, MetricType> cases[] = {{"counter", MetricType::kCounter},
                                                      {"gauge", MetricType::kGauge},
                                                      {"histogram", MetricType::kHistogram},
                                                      {"summary", MetricType::kSummary},
                                                      {"untyped", MetricType::kUntyped},
                                                      {"unknown", MetricType::kUnknown},
                                                      {"gaugehistogram", MetricType::kGaugeHistogram},
                                                      {"stateset", MetricType::kStateSet},
                                                      {"info", MetricType::kInfo}};
  for (const auto& [word, type] : cases) {
    const ParseResult r = Parse(std::string("# TYPE m ") + word + "\nm 1\n");
    EXPECT_EQ(r.error_count, 0u) << word;
    ASSERT_EQ(r.samples.size(), 1u);
    EXPECT_EQ(r.samples[0].type, type) << word;
    EXPECT_EQ(MetricTypeName(type), word);
  }
  EXPECT_TRUE(Contains(OnlyError("# TYPE m bogus\n"), "unknown metric type"));
  EXPECT_TRUE(Contains(OnlyError("# TYPE m\n"), "unknown metric type"));
}

TEST(OpenMetricsParse, SuffixedSamplesBelongToTheirFamily) {
  const ParseResult r = Parse(
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 2\nh_count 3\nh_created 4\n"
      "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 3\n"
      "# TYPE c counter\nc_total 1\nc_created 2\n"
      "# TYPE g gaugehistogram\ng_bucket{le=\"1\"} 1\ng_gsum 2\ng_gcount 3\n"
      "# TYPE i info\ni_info{v=\"1\"} 1\n"
      "# TYPE x gauge\nx_total 1\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 14u);
  for (size_t i = 0; i < 13; ++i) {
    EXPECT_EQ(r.samples[i].family, r.samples[i].name.substr(0, 1)) << r.samples[i].name;
    EXPECT_NE(r.samples[i].type, MetricType::kUntyped) << r.samples[i].name;
  }
  // A gauge has no _total sample: x_total is its own, untyped family.
  EXPECT_EQ(r.samples[13].family, "x_total");
  EXPECT_EQ(r.samples[13].type, MetricType::kUntyped);
}

TEST(OpenMetricsParse, PrometheusCounterNamedWithTotal) {
  const MetricSample s = One("# TYPE c_total counter\nc_total 5\n");
  EXPECT_EQ(s.family, "c_total");
  EXPECT_EQ(s.type, MetricType::kCounter);
}

TEST(OpenMetricsParse, OpenMetricsUntypedIsUnknown) {
  const MetricSample s = One("m 1\n# EOF\n");
  EXPECT_EQ(s.type, MetricType::kUnknown);
}

TEST(OpenMetricsParse, UnitLine) {
  const ParseResult r = Parse("# TYPE t_seconds gauge\n# UNIT t_seconds seconds\nt_seconds 1\n# EOF\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(r.families[0].unit, "seconds");
  EXPECT_TRUE(Contains(OnlyError("# UNIT t s-e\n"), "invalid unit"));
}

TEST(OpenMetricsParse, ExemplarAfterHash) {
  const MetricSample s = One("c_total 3 # {trace_id=\"abc\",span=\"1\"} 0.5 1712345678.25\n");
  ASSERT_TRUE(s.exemplar);
  ASSERT_EQ(s.exemplar->labels.size(), 2u);
  EXPECT_EQ(s.exemplar->labels[0].first, "span");
  EXPECT_EQ(s.exemplar->value, 0.5);
  EXPECT_EQ(*s.exemplar->timestamp_seconds, 1712345678.25);
  const MetricSample t = One("c_total 3 1000 # {} 1\n");
  EXPECT_EQ(*t.timestamp_seconds, 1.0);
  ASSERT_TRUE(t.exemplar);
  EXPECT_TRUE(t.exemplar->labels.empty());
}

TEST(OpenMetricsParse, BadExemplars) {
  EXPECT_TRUE(Contains(OnlyError("c 1 # trace\n"), "exemplar label set"));
  EXPECT_TRUE(Contains(OnlyError("c 1 # {a=\"b\"}\n"), "missing exemplar value"));
  EXPECT_TRUE(Contains(OnlyError("c 1 # {a=\"b\"} x\n"), "invalid exemplar value"));
  EXPECT_TRUE(Contains(OnlyError("c 1 # {a=\"b\"} 1 2 3\n"), "unexpected text"));
}

TEST(OpenMetricsParse, BlankLinesTrailingWhitespaceAndCrlf) {
  const ParseResult r = Parse("\n  \n# TYPE m gauge\r\nm{a=\"1\"} 2 \t\r\n\r\n   m{a=\"2\"} 3\r\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].value, 2.0);
  EXPECT_EQ(r.samples[1].labels[0].second, "2");
  EXPECT_EQ(r.samples[1].type, MetricType::kGauge);
  EXPECT_EQ(r.samples[1].line, 6u);
}

TEST(OpenMetricsParse, QuotedUtf8NamesInBraces) {
  const MetricSample s = One("{\"my.metric\", \"my.label\"=\"x\", b=\"y\"} 1\n");
  EXPECT_EQ(s.name, "my.metric");
  ASSERT_EQ(s.labels.size(), 2u);
  EXPECT_EQ(s.labels[0].first, "b");
  EXPECT_EQ(s.labels[1].first, "my.label");
  EXPECT_EQ(One("{\"only.name\"} 2\n").name, "only.name");
  const ParseResult r = Parse("# TYPE \"my.c\" counter\n{\"my.c_total\"} 3\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].family, "my.c");
  EXPECT_EQ(r.samples[0].type, MetricType::kCounter);
}

TEST(OpenMetricsParse, MissingMetricName) {
  EXPECT_TRUE(Contains(OnlyError("{a=\"b\"} 1\n"), "missing metric name"));
  EXPECT_TRUE(Contains(OnlyError("{\"\"} 1\n"), "empty"));
}

TEST(OpenMetricsParse, InvalidMetricNames) {
  EXPECT_TRUE(Contains(OnlyError("9m 1\n"), "invalid metric name"));
  EXPECT_TRUE(Contains(OnlyError("my.metric 1\n"), "invalid character in metric name"));
  EXPECT_TRUE(Contains(OnlyError("m-x 1\n"), "invalid character"));
  EXPECT_TRUE(Contains(OnlyError(std::string_view("m\0x 1\n", 6)), "invalid character"));
  EXPECT_TRUE(Contains(OnlyError("# TYPE 9m gauge\n"), "invalid metric name"));
}

TEST(OpenMetricsParse, UnterminatedLabelValue) {
  EXPECT_TRUE(Contains(OnlyError("m{a=\"b} 1\n"), "unterminated"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"b\\\n"), "unterminated"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"b\" 1\n"), "expected ','"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"b\",\n"), "unterminated label set"));
}

TEST(OpenMetricsParse, BadEscape) {
  EXPECT_TRUE(Contains(OnlyError("m{a=\"\\t\"} 1\n"), "invalid escape"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"\\u0041\"} 1\n"), "invalid escape"));
}

TEST(OpenMetricsParse, BadLabelSyntax) {
  EXPECT_TRUE(Contains(OnlyError("m{a=b} 1\n"), "must be quoted"));
  EXPECT_TRUE(Contains(OnlyError("m{a \"b\"} 1\n"), "expected '='"));
  EXPECT_TRUE(Contains(OnlyError("m{9a=\"b\"} 1\n"), "invalid label name"));
  EXPECT_TRUE(Contains(OnlyError("m{a:b=\"c\"} 1\n"), "expected '='"));
  EXPECT_TRUE(Contains(OnlyError("m{\"x\"} 1\n"), "expected '='"));  // name given before the braces
}

TEST(OpenMetricsParse, DuplicateLabelName) {
  EXPECT_TRUE(Contains(OnlyError("m{a=\"1\",b=\"2\",a=\"3\"} 1\n"), "duplicate label name"));
  EXPECT_TRUE(Contains(OnlyError("m{a=\"1\",\"a\"=\"3\"} 1\n"), "duplicate label name"));
}

TEST(OpenMetricsParse, InvalidUtf8InLabelValueIsAnErrorForThatLine) {
  const ParseResult r =
      Parse("a 1\nm{a=\"\xC3\x28\"} 1\nb 2\nm{a=\"\xED\xA0\x80\"} 1\nc{a=\"\xF4\x90\x80\x80\"} 1\n");
  EXPECT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.error_count, 3u);
  EXPECT_TRUE(Contains(r.errors[0], "line 2: invalid UTF-8"));
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));
}

TEST(OpenMetricsParse, TooManyLabelsIsAnErrorNotATruncation) {
  std::string line = "m{";
  for (int i = 0; i < 200; ++i) line += "l" + std::to_string(i) + "=\"v\",";
  line += "} 1\nok 1\n";
  ParseOptions options;
  options.max_labels = 128;
  const ParseResult r = ParseExposition(line, options);
  EXPECT_EQ(r.error_count, 1u);
  EXPECT_TRUE(Contains(r.errors[0], "max_labels"));
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_FALSE(r.truncated);
}

TEST(OpenMetricsParse, MalformedLineIsSkippedRestIsParsed) {
  const ParseResult r = Parse("a 1\nb{ 2\nc 3\n");
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[1].name, "c");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_TRUE(Contains(r.errors[0], "line 2:"));
}

TEST(OpenMetricsParse, ErrorListIsCappedButCounted) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "bad{\n";
  text += "good 1\n";
  const ParseResult r = Parse(text);
  EXPECT_EQ(r.errors.size(), 20u);
  EXPECT_EQ(r.error_count, 100u);
  EXPECT_EQ(r.samples.size(), 1u);
}

TEST(OpenMetricsParse, TypeAfterSamplesPrometheusAppliesToLaterSamplesOnly) {
  const ParseResult r = Parse("m 1\n# TYPE m gauge\nm 2\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].type, MetricType::kUntyped);
  EXPECT_EQ(r.samples[1].type, MetricType::kGauge);
}

TEST(OpenMetricsParse, TypeAfterSamplesOpenMetricsIsAnError) {
  const ParseResult r = Parse("c_total 1\n# TYPE c counter\nc_total 2\n# EOF\n");
  ASSERT_EQ(r.error_count, 1u);
  EXPECT_TRUE(Contains(r.errors[0], "line 2: TYPE after samples"));
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[1].type, MetricType::kUnknown);
}

TEST(OpenMetricsParse, SecondTypeOrHelpIsAnError) {
  const ParseResult r = Parse("# TYPE m gauge\n# TYPE m counter\n# HELP m a\n# HELP m b\nm 1\n");
  EXPECT_EQ(r.error_count, 2u);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].type, MetricType::kGauge);
  EXPECT_EQ(r.families[0].help, "a");
}

TEST(OpenMetricsParse, CommentLines) {
  EXPECT_EQ(Parse("# just a comment\n#HELP x\n#\nm 1\n").error_count, 0u);
  const ParseResult r = Parse("# just a comment\nm 1\n# EOF\n");
  EXPECT_TRUE(r.openmetrics);
  EXPECT_EQ(r.error_count, 1u);
  EXPECT_TRUE(Contains(r.errors[0], "invalid comment line"));
}

TEST(OpenMetricsParse, EofDetectionAndTextAfterEof) {
  const ParseResult r = Parse("m 1\n# EOF\n");
  EXPECT_TRUE(r.openmetrics);
  EXPECT_TRUE(r.saw_eof);
  EXPECT_EQ(r.error_count, 0u);
  EXPECT_TRUE(Parse("m 1\n# EOF").saw_eof);  // no final '\n'
  const ParseResult after = Parse("m 1\n# EOF\nn 2\n", TextFormat::kOpenMetrics);
  EXPECT_EQ(after.samples.size(), 1u);
  EXPECT_EQ(after.error_count, 1u);
  EXPECT_TRUE(Contains(after.errors[0], "after # EOF"));
  const ParseResult missing = Parse("m 1\n", TextFormat::kOpenMetrics);
  EXPECT_EQ(missing.samples.size(), 1u);
  EXPECT_TRUE(Contains(missing.errors[0], "missing # EOF"));
  // Prometheus text: "# EOF" is a comment.
  EXPECT_EQ(Parse("# EOF\nm 1\n", TextFormat::kPrometheus).samples.size(), 1u);
}

TEST(OpenMetricsParse, CutOffLastLineIsNotParsed) {
  const ParseResult r = Parse("a 1\nb 12");
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.error_count, 1u);
  EXPECT_TRUE(Contains(r.errors[0], "line 2: last line has no"));
}

TEST(OpenMetricsParse, LongLineStopsWithTruncated) {
  ParseOptions options;
  options.max_line_bytes = 16;
  const ParseResult ok = ParseExposition("m{a=\"0123456\"} 1\n", options);  // exactly 16 bytes
  EXPECT_EQ(ok.samples.size(), 1u);
  EXPECT_FALSE(ok.truncated);
  const ParseResult r = ParseExposition("a 1\nm{a=\"01234567\"} 1\nb 2\n", options);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.samples.size(), 1u);
  EXPECT_TRUE(Contains(r.errors[0], "line 2: line longer"));
  const std::string huge(size_t{2} << 20, 'x');
  const ParseResult big = ParseExposition("a 1\n" + huge);
  EXPECT_TRUE(big.truncated);
  EXPECT_EQ(big.samples.size(), 1u);
}

TEST(OpenMetricsParse, MaxSamplesStopsWithTruncated) {
  ParseOptions options;
  options.max_samples = 3;
  const ParseResult exact = ParseExposition("a 1\nb 2\nc 3\n", options);
  EXPECT_FALSE(exact.truncated);
  EXPECT_EQ(exact.samples.size(), 3u);
  const ParseResult r = ParseExposition("a 1\nb 2\nc 3\nd 4\ne 5\n", options);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.samples.size(), 3u);
  EXPECT_TRUE(Contains(r.errors.back(), "line 4: more than max_samples"));
}

TEST(OpenMetricsParse, HostileInputIsBounded) {
  // Deep escapes, NUL bytes and a huge label set on one line: errors, no crash.
  std::string escapes = "m{a=\"";
  for (int i = 0; i < 100000; ++i) escapes += "\\\\";
  escapes += "\"} 1\n";
  const MetricSample s = One(escapes);
  EXPECT_EQ(s.labels[0].second.size(), 100000u);
  const ParseResult nul = Parse(std::string(1000, '\0') + "\nm 1\n");
  EXPECT_EQ(nul.samples.size(), 1u);
  EXPECT_EQ(nul.error_count, 1u);
  std::string many = "m{";
  for (int i = 0; i < 300000; ++i) many += "a=\"\",";
  many += "} 1\n";
  const ParseResult labels = Parse(many);
  EXPECT_EQ(labels.error_count, 1u);
}

TEST(OpenMetricsParse, DuplicateSeriesAreKeptAndDetectable) {
  const ParseResult r = Parse("m{a=\"1\"} 1\nm{a=\"2\"} 2\nm{a=\"1\"} 3\nn 4\nn 5\n");
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 5u);
  EXPECT_EQ(FindDuplicateSeries(r.samples), (std::vector<size_t>{2, 4}));
}

TEST(OpenMetricsParse, FormatSampleRoundTrips) {
  const ParseResult r = Parse(
      "m{b=\"q\\\"\\\\\\n\",a=\"\"} -1.5e-7 1712345678123\n{\"x.y\",\"l.m\"=\"v\"} NaN\nc_total +Inf # "
      "{t=\"1\"} 2 3.5\n");
  ASSERT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 3u);
  for (TextFormat format : {TextFormat::kPrometheus, TextFormat::kOpenMetrics}) {
    for (const MetricSample& s : r.samples) {
      const std::string line = FormatSample(s, format) + "\n";
      const MetricSample back = One(format == TextFormat::kOpenMetrics ? line + "# EOF\n" : line);
      EXPECT_EQ(back.name, s.name) << line;
      EXPECT_EQ(back.labels, s.labels) << line;
      EXPECT_TRUE(back.value == s.value || (std::isnan(back.value) && std::isnan(s.value))) << line;
      EXPECT_EQ(back.timestamp_seconds, s.timestamp_seconds) << line;
      EXPECT_EQ(back.exemplar.has_value(), s.exemplar.has_value()) << line;
    }
  }
}

TEST(OpenMetricsParse, NodeExporterFixture) {
  const ParseResult r = Parse(ReadFixture("node_exporter.prom"));
  EXPECT_EQ(r.error_count, 0u) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_FALSE(r.openmetrics);
  ASSERT_EQ(r.samples.size(), 34u);
  EXPECT_EQ(r.samples[0].name, "go_gc_duration_seconds");
  EXPECT_EQ(r.samples[0].type, MetricType::kSummary);
  EXPECT_EQ(r.samples[6].name, "go_gc_duration_seconds_count");
  EXPECT_EQ(r.samples[6].family, "go_gc_duration_seconds");
  EXPECT_EQ(r.samples[6].value, 7815.0);
  EXPECT_EQ(r.samples[7].value, 1.71234567e+09);
  EXPECT_EQ(r.samples[8].type, MetricType::kCounter);
  EXPECT_EQ(r.samples[8].labels[0], (std::pair<std::string, std::string>{"cpu", "0"}));
  EXPECT_EQ(r.samples[8].labels[1], (std::pair<std::string, std::string>{"mode", "idle"}));
  int histogram = 0;
  for (const MetricSample& s : r.samples) {
    if (s.family == "prometheus_http_request_duration_seconds") {
      EXPECT_EQ(s.type, MetricType::kHistogram);
      ++histogram;
    }
    if (s.name == "node_scrape_collector_success") {
      EXPECT_EQ(s.type, MetricType::kUntyped);
    }
    if (s.name == "process_start_time_seconds") {
      EXPECT_DOUBLE_EQ(*s.timestamp_seconds, 1712345680.123);
    }
    if (s.name == "rpc_errors") {
      EXPECT_TRUE(std::isnan(s.value));
      EXPECT_EQ(s.labels[0].second, "say \"hi\"\nbye");
      EXPECT_EQ(s.labels[1].second, "C:\\temp\\x");
    }
  }
  EXPECT_EQ(histogram, 5);
  EXPECT_EQ(r.samples.back().name, "promhttp_metric_handler_requests_total");
  EXPECT_EQ(r.samples.back().value, 0.0);
  EXPECT_TRUE(FindDuplicateSeries(r.samples).empty());
}

TEST(OpenMetricsParse, DcgmExporterFixture) {
  const ParseResult r = Parse(ReadFixture("dcgm_exporter.prom"));
  EXPECT_EQ(r.error_count, 0u);
  ASSERT_EQ(r.samples.size(), 6u);
  const double values[] = {37.5, 81.25, 41.0, 63.0, 70.123, 212.5};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.samples[i].value, values[i]);
    EXPECT_EQ(r.samples[i].type, MetricType::kGauge);
    ASSERT_EQ(r.samples[i].labels.size(), 8u);
    EXPECT_EQ(r.samples[i].labels[0].first, "Hostname");  // sorted: uppercase first
  }
  EXPECT_EQ(r.samples[2].name, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(r.samples[1].labels[5].first, "modelName");
  EXPECT_EQ(r.samples[1].labels[5].second, "Tesla T4");
  EXPECT_EQ(r.families.size(), 3u);
  EXPECT_EQ(r.families[2].help, "Power draw (in W).");
}

TEST(OpenMetricsParse, OpenMetricsFixture) {
  const ParseResult r = Parse(ReadFixture("openmetrics_1_0.om"));
  EXPECT_EQ(r.error_count, 0u) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_TRUE(r.openmetrics);
  EXPECT_TRUE(r.saw_eof);
  ASSERT_EQ(r.samples.size(), 19u);
  const MetricSample& first = r.samples[0];
  EXPECT_EQ(first.family, "acme_http_requests");
  EXPECT_EQ(first.type, MetricType::kCounter);
  EXPECT_EQ(*first.timestamp_seconds, 1712345678.125);
  ASSERT_TRUE(first.exemplar);
  EXPECT_EQ(first.exemplar->labels[0].second, "KOO5S4vxi0o");
  EXPECT_EQ(r.samples[1].name, "acme_http_requests_created");
  EXPECT_EQ(r.samples[1].family, "acme_http_requests");
  EXPECT_EQ(r.families[0].unit, "requests");
  EXPECT_EQ(r.families[0].help, "Requests served, by \"code\".\nSecond line.");
  EXPECT_EQ(r.samples[9].family, "acme_request_latency_seconds");
  EXPECT_EQ(r.samples[9].name, "acme_request_latency_seconds_created");
  EXPECT_EQ(r.samples[12].type, MetricType::kGaugeHistogram);
  EXPECT_EQ(r.samples[13].family, "acme_queue_depth");
  EXPECT_EQ(r.samples[14].type, MetricType::kInfo);
  EXPECT_EQ(r.samples[14].family, "acme_build");
  EXPECT_EQ(r.samples[15].type, MetricType::kStateSet);
  EXPECT_EQ(r.samples[17].labels[0].first, "sensor.name");
  EXPECT_EQ(r.samples[17].value, -35.0);
  EXPECT_EQ(r.samples[18].type, MetricType::kUnknown);
  EXPECT_EQ(r.samples[18].value, -INFINITY);
}

// Cutting a fixture at every byte offset: no crash, and only complete lines are parsed, so every sample
// equals the one at the same position of the whole parse.
TEST(OpenMetricsParse, TruncationAtEveryByteOffset) {
  for (const char* name : {"node_exporter.prom", "openmetrics_1_0.om", "dcgm_exporter.prom"}) {
    const std::string text = ReadFixture(name);
    ParseOptions options;
    options.format = TextFormat::kPrometheus;
    const ParseResult whole = ParseExposition(text, options);
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      const ParseResult part = ParseExposition(std::string_view(text).substr(0, cut), options);
      ASSERT_LE(part.samples.size(), whole.samples.size()) << name << " " << cut;
      for (size_t i = 0; i < part.samples.size(); ++i) {
        const MetricSample& a = part.samples[i];
        const MetricSample& b = whole.samples[i];
        ASSERT_EQ(a.name, b.name) << name << " " << cut;
        ASSERT_EQ(a.labels, b.labels) << name << " " << cut;
        ASSERT_TRUE(a.value == b.value || (std::isnan(a.value) && std::isnan(b.value))) << name << " " << cut;
        ASSERT_EQ(a.timestamp_seconds, b.timestamp_seconds) << name << " " << cut;
      }
      const size_t complete_lines = std::count(text.begin(), text.begin() + static_cast<long>(cut), '\n');
      for (const MetricSample& s : part.samples) ASSERT_LE(s.line, complete_lines);
    }
  }
}

}  // namespace
}  // namespace runmon::openmetrics
