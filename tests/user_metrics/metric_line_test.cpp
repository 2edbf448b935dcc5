// A metrics channel line parsed into history items (metric_line.hpp): values of every JSON kind, nested
// keys flattened, Python's NaN and Infinity, runmon's own `_` keys, summary lines, and the hostile and
// malformed ones each refused with its reason.
#include "user_metrics/metric_line.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace runmon::user_metrics {
namespace {

MetricLine Ok(std::string_view line) {
  auto parsed = ParseMetricLine(line);
  EXPECT_TRUE(parsed.ok()) << line << ": " << (parsed.ok() ? "" : parsed.error());
  return parsed.ok() ? *parsed : MetricLine{};
}

std::string Refused(std::string_view line, const MetricLineLimits& limits = {}) {
  auto parsed = ParseMetricLine(line, limits);
  EXPECT_FALSE(parsed.ok()) << line;
  return parsed.ok() ? "" : parsed.error();
}

TEST(MetricLine, ValuesKeepTheirJsonAndOrder) {
  const MetricLine line = Ok(R"({"loss": 0.31, "lr": 3e-4, "ok": true, "name": "run \"a\"", "hist": [1, 2.5],
                                "skip": null, "_step": 12, "_timestamp": 1780000000.25})");
  const std::vector<MetricItem> expected = {
      {"loss", "0.31"}, {"lr", "0.0003"}, {"ok", "true"}, {"name", R"("run \"a\"")"}, {"hist", "[1,2.5]"}};
  EXPECT_EQ(line.items, expected);
  EXPECT_EQ(line.step, 12);
  EXPECT_EQ(line.timestamp, 1780000000.25);
  EXPECT_FALSE(line.summary);
  const MetricLine bare = Ok(R"({"x":1})");
  EXPECT_FALSE(bare.step.has_value());
  EXPECT_FALSE(bare.timestamp.has_value());
  EXPECT_TRUE(Ok("{}").items.empty());
  EXPECT_TRUE(Ok("  {\"_runtime\": 3, \"_other\": 1}  ").items.empty());  // runmon's keys are its own
}

TEST(MetricLine, NestedObjectsAreFlattenedWithDots) {
  const MetricLine line =
      Ok(R"({"train": {"loss": 1, "acc": {"top1": 0.5, "top5": 0.9}}, "empty": {}, "b": 2})");
  const std::vector<MetricItem> expected = {
      {"train.loss", "1"}, {"train.acc.top1", "0.5"}, {"train.acc.top5", "0.9"}, {"b", "2"}};
  EXPECT_EQ(line.items, expected);
}

TEST(MetricLine, PythonsNanAndInfinityAreValuesAsWandbKeepsThem) {
  const MetricLine line = Ok(R"({"a": NaN, "b": Infinity, "c": -Infinity, "d": [NaN, 1], "e": "NaN"})");
  const std::vector<MetricItem> expected = {
      {"a", "NaN"}, {"b", "Infinity"}, {"c", "-Infinity"}, {"d", "[NaN,1]"}, {"e", "\"NaN\""}};
  EXPECT_EQ(line.items, expected);
  EXPECT_EQ(Refused(R"({"a": Nope})"), "not JSON (at byte 7)");
  EXPECT_EQ(Refused(R"({NaN: 1})"), "a key holds a NUL");
  EXPECT_EQ(Refused(R"({"a": NaN,})"), "not JSON");
  EXPECT_EQ(Refused(R"({"_step": NaN})"), "_step is not a whole number from 0 to 2^53");
}

TEST(MetricLine, SummaryLinesComeAlone) {
  const MetricLine line = Ok(R"({"_summary": {"best": {"loss": 0.1}, "epochs": 3}})");
  EXPECT_TRUE(line.summary);
  const std::vector<MetricItem> expected = {{"best.loss", "0.1"}, {"epochs", "3"}};
  EXPECT_EQ(line.items, expected);
  EXPECT_EQ(Refused(R"({"_summary": {"a": 1}, "b": 2})"), "_summary comes alone");
  EXPECT_EQ(Refused(R"({"_summary": 5})"), "_summary is not an object");
}

TEST(MetricLine, StepsAndTimesMustBeWhatTheySay) {
  EXPECT_EQ(Ok(R"({"_step": 0})").step, 0);
  EXPECT_EQ(Ok(R"({"_step": 9007199254740992})").step, kMaxStep);
  for (const char* bad : {R"({"_step": -1})", R"({"_step": 1.5})", R"({"_step": "3"})", R"({"_step": true})",
                          R"({"_step": 9007199254740993})", R"({"_step": 18446744073709551615})"}) {
    EXPECT_EQ(Refused(bad), "_step is not a whole number from 0 to 2^53") << bad;
  }
  for (const char* bad :
       {R"({"_timestamp": -5})", R"({"_timestamp": "now"})", R"({"_timestamp": Infinity})"}) {
    EXPECT_EQ(Refused(bad), "_timestamp is not a time (seconds since 1970)") << bad;
  }
}

TEST(MetricLine, MalformedAndHostileLinesAreRefusedWithTheirReason) {
  EXPECT_EQ(Refused(""), "not JSON (at byte 0)");
  EXPECT_EQ(Refused(R"({"loss": 0.3)"), "not JSON (at byte 12)");
  EXPECT_EQ(Refused("[1, 2]"), "not a JSON object");
  EXPECT_EQ(Refused("42"), "not a JSON object");
  EXPECT_EQ(Refused(R"({"": 1})"), "an empty key");
  EXPECT_EQ(Refused(R"({"a": {"": 1}})"), "\"a\" holds an empty key");
  EXPECT_EQ(Refused(R"({"a\u0000b": 1})"), "a key holds a NUL");
  EXPECT_EQ(Refused("{\"bad\xff\": 1}").substr(0, 8), "not JSON");  // not UTF-8
  EXPECT_EQ(Refused(R"({"x": 1e999})"), "not JSON (a number too large for a double)");
  EXPECT_EQ(Refused(std::string(100000, '[')), "nested deeper than 16 levels");
  EXPECT_EQ(Refused(R"({"a": {"b": {"c": 1}}})", {.max_depth = 2}), "nested deeper than 2 levels");
  EXPECT_EQ(Refused(R"({"a": 1, "b": 2, "c": 3})", {.max_items = 2}), "more than 2 values");
  EXPECT_EQ(Refused(R"({"abcdef": 1})", {.max_key_bytes = 5}), "a key is longer than 5 bytes");
  EXPECT_EQ(Refused(R"({"a": {"bcd": 1}})", {.max_key_bytes = 4}), "a key is longer than 4 bytes");
  // Braces inside strings are not nesting; an escaped quote does not end a string.
  EXPECT_EQ(Ok(R"({"k": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\" {{{{{{{{{{{{{{{{{{{"})").items.size(), 1u);
}

TEST(MetricLine, TheFlatLinesScannerGivesWhatTheGeneralParserGives) {
  for (const char* line :
       {R"({"loss":0.31,"lr":3e-4,"_step":12,"_timestamp":1780000000.25})",
        R"( { "a" : NaN , "b":-Infinity,"c":true,"d":null,"e":-0,"f":18446744073709551615 } )",
        R"({"big": 12345678901234567890, "tiny": 1e-200, "int": -9223372036854775808})",
        R"({"_step": 9007199254740992, "_other": 1, "_runtime": NaN})", "{}", "{\"a\":1}\r"}) {
    const auto flat = ParseFlatMetricLine(line);
    ASSERT_TRUE(flat.has_value()) << line;
    const auto general = ParseMetricLineInGeneral(line);
    ASSERT_TRUE(general.ok()) << line;
    ASSERT_EQ(flat->items.size(), general->items.size()) << line;
    for (size_t i = 0; i < flat->items.size(); ++i) {
      EXPECT_EQ(flat->items[i].key, general->items[i].key) << line;
      // Numbers as written here, written back from the double there: the same value. Words: the same text.
      const std::string& mine = flat->items[i].value_json;
      const std::string& theirs = general->items[i].value_json;
      if (mine.front() == '-' ? mine.size() > 1 && mine[1] <= '9' : mine.front() <= '9') {
        EXPECT_EQ(std::strtod(mine.c_str(), nullptr), std::strtod(theirs.c_str(), nullptr))
            << line << " " << mine;
      } else {
        EXPECT_EQ(mine, theirs) << line;
      }
    }
    EXPECT_EQ(flat->step, general->step) << line;
    EXPECT_EQ(flat->timestamp, general->timestamp) << line;
  }
  // What it leaves to the general path: nesting, strings, arrays, escapes, other bytes, a key twice,
  // summaries, anything wrong.
  for (const char* line : {R"({"a": {"b": 1}})", R"({"a": "text"})", R"({"a": [1]})", R"({"a\u00e9": 1})",
                           "{\"\xc3\xa9\": 1}", R"({"x": 1, "x": 2})", R"({"x": null, "x": 2})",
                           R"({"_summary": 1})", R"({"_step": 1.5})", R"({"_timestamp": -1})", R"({"a": 01})",
                           R"({"a": 1e999})", R"({"a": nan})", R"({"a": 1,})", R"({"a": 1} x)", "[1]", ""}) {
    EXPECT_FALSE(ParseFlatMetricLine(line).has_value()) << line;
  }
  EXPECT_EQ(ParseFlatMetricLine(R"({"lr": 3e-4, "n": -0, "x": 1.50})")->items,
            (std::vector<MetricItem>{{"lr", "3e-4"}, {"n", "-0"}, {"x", "1.50"}}));  // as written
  EXPECT_FALSE(ParseFlatMetricLine(R"({"a": 1e251})").has_value());  // left to the general path
  EXPECT_FALSE(ParseFlatMetricLine(R"({"a": 123456789012345678901})").has_value());
  EXPECT_FALSE(ParseFlatMetricLine(R"({"a": 1, "b": 2})", {.max_items = 1}).has_value());
  EXPECT_FALSE(ParseFlatMetricLine(R"({"abcdef": 1})", {.max_key_bytes = 5}).has_value());
}

}  // namespace
}  // namespace runmon::user_metrics
