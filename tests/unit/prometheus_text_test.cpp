// The Prometheus text primitives: the name grammar (and the reserved "__" labels), escaping and unescaping
// of quoted strings and HELP text (round trips, and hostile input: unterminated strings, stray and unknown
// escapes, a lone backslash at the end), and floats (Go's syntax read, the shortest round-trip form written,
// NaN and the infinities, overflow and underflow).
#include "prometheus_text/prometheus_text.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace runmon::prometheus_text {
namespace {

std::string Escaped(std::string_view value) {
  std::string out;
  AppendEscapedQuoted(out, value);
  return out;
}

std::string Help(std::string_view text) {
  std::string out;
  AppendEscapedHelp(out, text);
  return out;
}

std::string Float(double value) {
  std::string out;
  AppendFloat(out, value);
  return out;
}

// The quoted string at the start of `text` read back, or the reason it is not one.
struct Read {
  std::string value;
  const char* error = nullptr;
  size_t end = 0;
};
Read ReadAll(std::string_view text) {
  Read read;
  read.error = ReadQuoted(text, &read.end, &read.value);
  return read;
}

TEST(PrometheusText, MetricNameGrammar) {
  EXPECT_TRUE(IsValidMetricName("runmon_x"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_TRUE(IsValidMetricName("_x"));
  EXPECT_TRUE(IsValidMetricName(":x"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9x"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName("a.b"));
  EXPECT_FALSE(IsValidMetricName("a b"));
  EXPECT_FALSE(IsValidMetricName("é"));
  EXPECT_FALSE(IsValidMetricName(std::string_view("a\0b", 3)));
}

TEST(PrometheusText, LabelNameGrammar) {
  EXPECT_TRUE(IsValidLabelName("gpu"));
  EXPECT_TRUE(IsValidLabelName("_x9"));
  EXPECT_TRUE(IsValidLabelName("__name__"));  // valid, but reserved
  EXPECT_FALSE(IsValidLabelName(""));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("1a"));
  EXPECT_FALSE(IsValidLabelName("a.b"));
  EXPECT_TRUE(IsReservedLabelName("__name__"));
  EXPECT_TRUE(IsReservedLabelName("__"));
  EXPECT_FALSE(IsReservedLabelName("_x"));
  EXPECT_FALSE(IsReservedLabelName("gpu"));
}

TEST(PrometheusText, NameCharactersAgreeWithTheNames) {
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    EXPECT_EQ(IsValidMetricName(std::string(1, c)), IsMetricNameStart(c)) << i;
    EXPECT_EQ(IsValidMetricName(std::string("a") + c), IsMetricNameChar(c)) << i;
    EXPECT_EQ(IsValidLabelName(std::string(1, c)), IsLabelNameStart(c)) << i;
    EXPECT_EQ(IsValidLabelName(std::string("a") + c), IsLabelNameChar(c)) << i;
  }
}

TEST(PrometheusText, QuotedStringEscapes) {
  EXPECT_EQ(Escaped(R"(a\b"c)"), R"(a\\b\"c)");
  EXPECT_EQ(Escaped("line\nbreak"), "line\\nbreak");
  EXPECT_EQ(Escaped("/data/ü\t\r"), "/data/ü\t\r");  // only \ " and newline are escaped
  const Read read = ReadAll(R"("a\\b\"c\nd" rest)");
  EXPECT_EQ(read.error, nullptr);
  EXPECT_EQ(read.value, "a\\b\"c\nd");
  EXPECT_EQ(read.end, 12u);
}

TEST(PrometheusText, QuotedStringsRoundTrip) {
  std::mt19937 random(13);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::string> values = {"", "\\", "\"", "\n", "\\\\n", "\\\"", "end\\", "\"\"\"", "ü€"};
  for (int i = 0; i < 2000; ++i) {
    std::string value(static_cast<size_t>(i % 17), '\0');
    for (char& c : value) c = static_cast<char>(byte(random));
    values.push_back(value);
  }
  for (const std::string& value : values) {
    const std::string quoted = "\"" + Escaped(value) + "\"";
    EXPECT_EQ(quoted.find('\n'), std::string::npos);
    const Read read = ReadAll(quoted + ",x");
    EXPECT_EQ(read.error, nullptr) << quoted;
    EXPECT_EQ(read.value, value) << quoted;
    EXPECT_EQ(read.end, quoted.size()) << quoted;
  }
}

TEST(PrometheusText, HostileQuotedStringsAreErrors) {
  EXPECT_STREQ(ReadAll("\"").error, "unterminated quoted string");
  EXPECT_STREQ(ReadAll("\"abc").error, "unterminated quoted string");
  EXPECT_STREQ(ReadAll("\"abc\\").error, "unterminated quoted string");
  EXPECT_STREQ(ReadAll("\"abc\\\"").error, "unterminated quoted string");
  EXPECT_NE(ReadAll(R"("a\tb")").error, nullptr);
  EXPECT_NE(ReadAll(R"("a\x41")").error, nullptr);
  EXPECT_NE(ReadAll(std::string("\"a\\\0\"", 5)).error, nullptr);
  // A failed read leaves the position where it was.
  size_t pos = 0;
  std::string out;
  EXPECT_NE(ReadQuoted("\"abc", &pos, &out), nullptr);
  EXPECT_EQ(pos, 0u);
}

TEST(PrometheusText, HelpEscapesRoundTrip) {
  EXPECT_EQ(Help("a\\b\nc\"d"), "a\\\\b\\nc\"d");  // " is not escaped in HELP
  for (const std::string text : {"", "\\", "\\n", "a\nb", "\"quoted\"", "end\\", "\\\\\\", "tab\there"}) {
    EXPECT_EQ(UnescapeHelp(Help(text)), text) << text;
  }
}

TEST(PrometheusText, HelpUnescapeIsLenient) {
  EXPECT_EQ(UnescapeHelp(R"(say \"hi\")"), "say \"hi\"");
  EXPECT_EQ(UnescapeHelp(R"(C:\temp)"), "C:\\temp");  // unknown escape kept as written
  EXPECT_EQ(UnescapeHelp("trailing\\"), "trailing\\");
}

TEST(PrometheusText, FloatsAreWrittenInTheShortestForm) {
  EXPECT_EQ(Float(0), "0");
  EXPECT_EQ(Float(-0.0), "-0");
  EXPECT_EQ(Float(1), "1");
  EXPECT_EQ(Float(-2.5), "-2.5");
  EXPECT_EQ(Float(0.1), "0.1");
  EXPECT_EQ(Float(1572864), "1572864");
  EXPECT_EQ(Float(1780000000.25), "1780000000.25");
  EXPECT_EQ(Float(1e300), "1e+300");
  EXPECT_EQ(Float(5e-324), "5e-324");
  EXPECT_EQ(Float(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(Float(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(Float(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusText, FloatsRoundTripBitForBit) {
  std::mt19937_64 random(13);
  std::vector<double> values = {1.0 / 3.0,
                                2.0 / 3.0 * 1e-7,
                                123456789.123456789,
                                0.12300000000000001,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                -0.0,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 5000; ++i) {
    const uint64_t bits = random();
    double value = 0;
    std::memcpy(&value, &bits, sizeof(value));
    values.push_back(value);
  }
  for (const double value : values) {
    const std::string text = Float(value);
    const std::optional<double> back = ParseFloat(text);
    ASSERT_TRUE(back.has_value()) << text;
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(*back)) << text;
    } else {
      EXPECT_EQ(std::memcmp(&*back, &value, sizeof(value)), 0) << text;
    }
  }
}

TEST(PrometheusText, FloatsAreReadInGoSyntax) {
  EXPECT_EQ(ParseFloat("1"), 1.0);
  EXPECT_EQ(ParseFloat("+1.5"), 1.5);
  EXPECT_EQ(ParseFloat("-1.5e3"), -1500.0);
  EXPECT_EQ(ParseFloat(".5"), 0.5);
  EXPECT_EQ(ParseFloat("5."), 5.0);
  EXPECT_EQ(ParseFloat("0x1p-2"), 0.25);
  EXPECT_EQ(ParseFloat("-0X1.8P1"), -3.0);
  EXPECT_EQ(ParseFloat("+Inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseFloat("-inf"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseFloat("Infinity"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(ParseFloat("NaN").value_or(0)));
  EXPECT_TRUE(std::isnan(ParseFloat("nan").value_or(0)));
  EXPECT_EQ(ParseFloat("1e-400"), 0.0);  // underflow is zero
  EXPECT_TRUE(std::signbit(ParseFloat("-1e-400").value_or(1)));
  EXPECT_EQ(ParseFloat("0." + std::string(400, '0') + "1"), 0.0);  // underflow without an exponent
}

TEST(PrometheusText, HostileFloatsAreRefused) {
  for (const std::string_view text :
       {"",   "+",     "-",      "--1",       "+-1",     "1e",   "e5",    "0x1", "0x", "0xp1",  "1_000", " 1",
        "1 ", "1e400", "-1e400", "0x1p99999", "infinit", "nan1", "+nan1", "1,5", "١",  "0b101", "∞"}) {
    EXPECT_FALSE(ParseFloat(text).has_value()) << text;
  }
  EXPECT_FALSE(ParseFloat(std::string_view("1\0", 2)).has_value());
}

}  // namespace
}  // namespace runmon::prometheus_text
