// Unit tests of app/output.hpp: JSON string escaping (quotes, backslashes, control characters, valid UTF-8
// kept, invalid bytes replaced), JSON sample lines checked by parsing them back with nlohmann::json
// (values round-trip exactly, non-finite values left out, the "_late" flag), and the table's units and
// titles from the metric catalog.
#include "app/output.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/catalog.hpp"

namespace runmon {
namespace {

using namespace std::string_literals;

std::string Quote(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

// Parses `literal` as a JSON string and returns its value; fails the test when it is not valid JSON.
std::string Decode(const std::string& literal) {
  const auto json = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << "not valid JSON: " << literal;
  EXPECT_TRUE(json.is_string()) << literal;
  return json.is_string() ? json.get<std::string>() : std::string();
}

Sample MakeSample(double timestamp, double runtime, std::vector<Metric> metrics, bool late = false) {
  Sample sample;
  sample.timestamp = timestamp;
  sample.runtime = runtime;
  sample.late = late;
  for (auto& m : metrics) sample.metrics.Add(std::move(m.key), m.value);
  return sample;
}

nlohmann::json ParseLine(const std::string& line) {
  EXPECT_FALSE(line.empty());
  if (!line.empty()) {
    EXPECT_EQ(line.back(), '\n');
  }
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line only";
  const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << "not valid JSON: " << line;
  EXPECT_TRUE(json.is_object()) << line;
  return json;
}

// ---------------------------------------------------------------------------------------------------------
// AppendJsonString

TEST(AppendJsonString, PlainAndEmpty) {
  EXPECT_EQ(Quote(""), "\"\"");
  EXPECT_EQ(Quote("cpu"), "\"cpu\"");
  EXPECT_EQ(Quote("disk./home/user.usageGB"), "\"disk./home/user.usageGB\"");  // '/' is not escaped
}

TEST(AppendJsonString, AppendsWithoutClearing) {
  std::string out = "{";
  AppendJsonString(out, "a");
  out += ':';
  AppendJsonString(out, "b");
  EXPECT_EQ(out, "{\"a\":\"b\"");
}

TEST(AppendJsonString, QuotesAndBackslashes) {
  EXPECT_EQ(Quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Quote("\\\\"), R"("\\\\")");
  EXPECT_EQ(Quote("\""), R"("\"")");
  EXPECT_EQ(Decode(Quote("C:\\path \"quoted\"")), "C:\\path \"quoted\"");
}

TEST(AppendJsonString, ControlCharactersAreEscaped) {
  EXPECT_EQ(Quote("\n"), R"("\u000a")");
  EXPECT_EQ(Quote("\t"), R"("\u0009")");
  EXPECT_EQ(Quote("\r"), R"("\u000d")");
  EXPECT_EQ(Quote("\x01"), R"("\u0001")");
  EXPECT_EQ(Quote("\x1f"), R"("\u001f")");
  EXPECT_EQ(Quote("a\0b"s), R"("a\u0000b")");
  EXPECT_EQ(Quote("\x7f"), "\"\x7f\"");  // DEL is legal in JSON strings
  EXPECT_EQ(Quote(" "), "\" \"");
  std::string all;
  for (int c = 0; c < 0x20; ++c) all += static_cast<char>(c);
  EXPECT_EQ(Decode(Quote(all)), all);
}

TEST(AppendJsonString, ValidUtf8IsKeptVerbatim) {
  for (std::string_view text : {"caf\xc3\xa9",       // U+00E9
                                "\xc2\x80",          // U+0080, smallest 2-byte
                                "\xdf\xbf",          // U+07FF
                                "\xe0\xa0\x80",      // U+0800, smallest 3-byte
                                "\xe2\x82\xac",      // U+20AC euro
                                "\xed\x9f\xbf",      // U+D7FF, just below the surrogates
                                "\xee\x80\x80",      // U+E000, just above them
                                "\xef\xbf\xbf",      // U+FFFF
                                "\xf0\x90\x80\x80",  // U+10000, smallest 4-byte
                                "\xf0\x9f\x98\x80",  // U+1F600 emoji
                                "\xf4\x8f\xbf\xbf",  // U+10FFFF, the largest
                                "/mnt/\xe6\x95\xb0\xe6\x8d\xae"}) {
    EXPECT_EQ(Quote(text), "\"" + std::string(text) + "\"");
    EXPECT_EQ(Decode(Quote(text)), text);
  }
}

TEST(AppendJsonString, InvalidBytesAreReplaced) {
  struct Case {
    std::string_view text;
    std::string_view quoted;
  };
  for (const Case& c : {
           Case{"\x80", R"("\ufffd")"},  // lone continuation byte
           Case{"\xff", R"("\ufffd")"},  // never valid
           Case{"\xfe", R"("\ufffd")"},
           Case{"\xc0\xaf", R"("\ufffd\ufffd")"},                      // overlong '/'
           Case{"\xc1\xbf", R"("\ufffd\ufffd")"},                      // overlong
           Case{"\xe0\x80\x80", R"("\ufffd\ufffd\ufffd")"},            // overlong 3-byte NUL
           Case{"\xe0\x9f\xbf", R"("\ufffd\ufffd\ufffd")"},            // overlong U+07FF
           Case{"\xf0\x8f\xbf\xbf", R"("\ufffd\ufffd\ufffd\ufffd")"},  // overlong U+FFFF
           Case{"\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},            // surrogate U+D800
           Case{"\xed\xbf\xbf", R"("\ufffd\ufffd\ufffd")"},            // surrogate U+DFFF
           Case{"\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // U+110000
           Case{"\xf5\x80\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // lead byte past U+10FFFF
           Case{"\xe2\x82", R"("\ufffd\ufffd")"},                      // truncated at the end
           Case{"a\xf0\x9f\x98", R"("a\ufffd\ufffd\ufffd")"},
           Case{"\xe2\x28\xa1", R"("\ufffd(\ufffd")"},  // bad continuation
           Case{"\xc3", R"("\ufffd")"},
           Case{"ok\xc3\xa9\xc3", "\"ok\xc3\xa9\\ufffd\""},
       }) {
    const std::string quoted = Quote(c.text);
    EXPECT_EQ(quoted, c.quoted) << testing::PrintToString(std::string(c.text));
    // Whatever the input, the output is valid JSON (nlohmann rejects invalid UTF-8).
    const std::string decoded = Decode(quoted);
    EXPECT_NE(decoded.find("\xef\xbf\xbd"), std::string::npos);
  }
}

TEST(AppendJsonString, EveryByteValueGivesValidJson) {
  for (int b = 0; b < 256; ++b) {
    const std::string text = "k" + std::string(1, static_cast<char>(b)) + "k";
    const std::string decoded = Decode(Quote(text));
    if (b < 0x80) {
      EXPECT_EQ(decoded, text) << b;
    } else {
      EXPECT_EQ(decoded, "k\xef\xbf\xbdk") << b;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// FormatSampleJson

TEST(FormatSampleJson, ExactTextOfASmallSample) {
  EXPECT_EQ(FormatSampleJson(MakeSample(1.5, 2, {{"cpu", 3.25}})),
            "{\"_timestamp\":1.5,\"_runtime\":2,\"cpu\":3.25}\n");
  EXPECT_EQ(FormatSampleJson(MakeSample(0, 0, {})), "{\"_timestamp\":0,\"_runtime\":0}\n");
  EXPECT_EQ(FormatSampleJson(MakeSample(1, 2, {}, /*late=*/true)),
            "{\"_timestamp\":1,\"_runtime\":2,\"_late\":true}\n");
}

TEST(FormatSampleJson, ParsesBackToTheSameKeysAndValues) {
  const std::vector<Metric> metrics = {
      {"cpu", 12.5},
      {"proc.memory.rssMB", 1234.5678},
      {"disk./home/user.usageGB", 100.25},
      {"disk./mnt/my files.usagePercent", 42.0},
      {"disk.nvme0n1.in", 0.0001220703125},
      {"network.sent", 123456789012.0},
      {"cpu.3.cpu_percent", 0.1},
      {"tiny", 5e-324},
      {"huge", std::numeric_limits<double>::max()},
      {"negative", -7.25},
      {"third", 1.0 / 3.0},
  };
  const std::string line = FormatSampleJson(MakeSample(1700000000.123456, 3601.75, metrics));
  const auto json = ParseLine(line);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json.size(), metrics.size() + 2);
  EXPECT_EQ(json.at("_timestamp").get<double>(), 1700000000.123456);
  EXPECT_EQ(json.at("_runtime").get<double>(), 3601.75);
  EXPECT_FALSE(json.contains("_late"));
  for (const auto& m : metrics) {
    ASSERT_TRUE(json.contains(m.key)) << m.key;
    // Shortest round-trip formatting: the parsed double is bit-for-bit the original.
    EXPECT_EQ(json.at(m.key).get<double>(), m.value) << m.key << " in " << line;
  }
  EXPECT_TRUE(line.starts_with("{\"_timestamp\":"));
}

TEST(FormatSampleJson, KeysKeepTheirOrder) {
  const std::string line = FormatSampleJson(MakeSample(1, 2, {{"zeta", 1}, {"alpha", 2}, {"mid", 3}}));
  const size_t zeta = line.find("\"zeta\"");
  const size_t alpha = line.find("\"alpha\"");
  const size_t mid = line.find("\"mid\"");
  ASSERT_NE(zeta, std::string::npos);
  EXPECT_LT(line.find("\"_runtime\""), zeta);
  EXPECT_LT(zeta, alpha);
  EXPECT_LT(alpha, mid);
}

TEST(FormatSampleJson, NonFiniteValuesAreLeftOut) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string line = FormatSampleJson(
      MakeSample(10, 1, {{"a", nan}, {"cpu", 50}, {"b", inf}, {"c", -inf}, {"memory_percent", 0}}));
  const auto json = ParseLine(line);
  EXPECT_FALSE(json.contains("a"));
  EXPECT_FALSE(json.contains("b"));
  EXPECT_FALSE(json.contains("c"));
  EXPECT_EQ(json.at("cpu").get<double>(), 50.0);
  EXPECT_EQ(json.at("memory_percent").get<double>(), 0.0);  // zero is a value, not a missing one
  EXPECT_EQ(json.size(), 4u);
  EXPECT_EQ(line.find("nan"), std::string::npos);
  EXPECT_EQ(line.find("inf"), std::string::npos);
}

TEST(FormatSampleJson, OnlyNonFiniteValues) {
  const std::string line =
      FormatSampleJson(MakeSample(10, 1, {{"a", std::numeric_limits<double>::quiet_NaN()}}));
  EXPECT_EQ(line, "{\"_timestamp\":10,\"_runtime\":1}\n");
}

TEST(FormatSampleJson, LateFlag) {
  const auto json = ParseLine(FormatSampleJson(MakeSample(10, 1, {{"cpu", 1}}, /*late=*/true)));
  ASSERT_TRUE(json.contains("_late"));
  EXPECT_TRUE(json.at("_late").is_boolean());
  EXPECT_TRUE(json.at("_late").get<bool>());
  EXPECT_EQ(json.at("cpu").get<double>(), 1.0);
}

TEST(FormatSampleJson, HostileKeysStayValidJson) {
  const std::vector<Metric> metrics = {
      {"disk./mnt/a\"b.usageGB", 1},      {"disk./mnt/back\\slash.usageGB", 2},
      {"disk./mnt/new\nline.usageGB", 3}, {"disk./mnt/caf\xc3\xa9.usageGB", 4},
      {"disk./mnt/bad\xff.usageGB", 5},
  };
  const auto json = ParseLine(FormatSampleJson(MakeSample(1, 1, metrics)));
  EXPECT_EQ(json.at("disk./mnt/a\"b.usageGB").get<double>(), 1.0);
  EXPECT_EQ(json.at("disk./mnt/back\\slash.usageGB").get<double>(), 2.0);
  EXPECT_EQ(json.at("disk./mnt/new\nline.usageGB").get<double>(), 3.0);
  EXPECT_EQ(json.at("disk./mnt/caf\xc3\xa9.usageGB").get<double>(), 4.0);
  EXPECT_EQ(json.at("disk./mnt/bad\xef\xbf\xbd.usageGB").get<double>(), 5.0);
}

TEST(FormatSampleJson, NegativeZeroAndIntegralValues) {
  const auto json = ParseLine(FormatSampleJson(MakeSample(1, 1, {{"z", -0.0}, {"n", 9007199254740992.0}})));
  EXPECT_EQ(json.at("z").get<double>(), 0.0);
  EXPECT_EQ(json.at("n").get<double>(), 9007199254740992.0);
}

// ---------------------------------------------------------------------------------------------------------
// FormatSampleTable

class FormatSampleTableTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    had_tz_ = tz != nullptr;
    if (had_tz_) old_tz_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      setenv("TZ", old_tz_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  bool had_tz_ = false;
  std::string old_tz_;
};

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(FormatSampleTableTest, HeaderLine) {
  const std::string table = FormatSampleTable(MakeSample(0, 12.46, {}), 7);
  EXPECT_EQ(table, "sample 7 at 1970-01-01 00:00:00 (runtime 12.5 s)\n");
  const std::string late =
      FormatSampleTable(MakeSample(1700000000.9, 0, {}, /*late=*/true), 18446744073709551615u);
  EXPECT_EQ(late, "sample 18446744073709551615 (late values) at 2023-11-14 22:13:20 (runtime 0.0 s)\n");
}

TEST_F(FormatSampleTableTest, UnitsAndTitlesComeFromTheCatalog) {
  const std::vector<Metric> metrics = {
      {"cpu", 12.5},
      {"proc.memory.rssMB", 2048},
      {"disk./home/user.usageGB", 100.25},
      {"disk.in", 3},
      {"network.recvBytesPerSec", 1e6},
      {"cgroup.cpu.limit", 4},
      {"runmon.sampleMillis", 0.75},
      {"cpu.3.cpu_percent", 99.5},
  };
  const std::string table = FormatSampleTable(MakeSample(0, 1, metrics), 1);
  const auto lines = SplitLines(table);
  ASSERT_EQ(lines.size(), metrics.size() + 1);
  size_t width = 0;
  for (const auto& m : metrics) width = std::max(width, m.key.size());
  for (size_t i = 0; i < metrics.size(); ++i) {
    const std::string& line = lines[i + 1];
    const MetricDefinition* d = FindMetricDefinition(metrics[i].key);
    ASSERT_NE(d, nullptr) << metrics[i].key;
    SCOPED_TRACE(line);
    // "  KEY<pad>  VALUE(14, right-aligned) UNIT(7, left-aligned) TITLE"
    EXPECT_EQ(line.substr(0, 2 + metrics[i].key.size()), "  " + metrics[i].key);
    const size_t unit_at = 2 + width + 2 + 14 + 1;
    ASSERT_GT(line.size(), unit_at);
    EXPECT_EQ(line.substr(unit_at, d->unit.size()), d->unit);
    EXPECT_EQ(line.substr(unit_at + 8), d->title);
    EXPECT_EQ(line[unit_at - 1], ' ');
  }
  EXPECT_NE(table.find("  cpu        "), std::string::npos);
  EXPECT_NE(table.find(" 12.5 %       Process CPU\n"), std::string::npos);
  EXPECT_NE(table.find(" 2048 MiB     Process RSS\n"), std::string::npos);
  EXPECT_NE(table.find(" 100.25 GiB     Disk used\n"), std::string::npos);
  EXPECT_NE(table.find(" 1e+06 bytes/s Network receive rate\n"), std::string::npos);
  EXPECT_NE(table.find(" 4 CPUs    cgroup CPU limit\n"), std::string::npos);
  EXPECT_NE(table.find(" 0.75 ms      runmon sample time\n"), std::string::npos);
  EXPECT_NE(table.find(" 99.5 %       Core CPU\n"), std::string::npos);
}

TEST_F(FormatSampleTableTest, UnknownKeysHaveNoUnit) {
  const std::string table = FormatSampleTable(MakeSample(0, 1, {{"mystery.metric", 1.5}}), 2);
  const auto lines = SplitLines(table);
  ASSERT_EQ(lines.size(), 2u);
  // key, two spaces, the value right-aligned in 14, a space, an empty 7-wide unit, a space, no title.
  EXPECT_EQ(lines[1], "  mystery.metric  " + std::string(11, ' ') + "1.5" + " " + std::string(7, ' ') + " ");
}

TEST_F(FormatSampleTableTest, ValuesUseSixSignificantDigits) {
  const std::string table =
      FormatSampleTable(MakeSample(0, 1, {{"cpu", 1.0 / 3.0}, {"disk.out", 123456789.0}}), 1);
  EXPECT_NE(table.find("0.333333 %"), std::string::npos) << table;
  EXPECT_NE(table.find("1.23457e+08 MiB"), std::string::npos) << table;
}

}  // namespace
}  // namespace runmon
