// Fuzzes the metrics channel's lines (user_metrics/metric_line.hpp) and the rows made of them
// (history_rows.hpp): the input is cut at newlines and each piece parsed, by the flat lines' scanner and
// the general parser, which must agree wherever the scanner takes a line. A line that parses gives valid
// UTF-8 keys within the limits and values whose JSON parses again to the same value (Python's NaN words
// included); every line, good or bad, goes through an assembler whose rows' steps never go back and whose
// summary has a key at most once.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"
#include "fuzz_check.hpp"
#include "user_metrics/history_rows.hpp"
#include "user_metrics/metric_line.hpp"

using runmon::user_metrics::HistoryAssembler;
using runmon::user_metrics::HistoryRow;
using runmon::user_metrics::MetricLineLimits;
using runmon::user_metrics::ParseMetricLine;

namespace {

// The same JSON value: the same text, or two numbers of one double (the flat scanner keeps a number as
// written, the general parser writes its double back).
bool SameValue(const std::string& a, const std::string& b) {
  if (a == b) return true;
  double x = 0;
  double y = 0;
  const auto [a_end, a_error] = std::from_chars(a.data(), a.data() + a.size(), x);
  const auto [b_end, b_error] = std::from_chars(b.data(), b.data() + b.size(), y);
  return a_error == std::errc() && b_error == std::errc() && a_end == a.data() + a.size() &&
         b_end == b.data() + b.size() && x == y;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const MetricLineLimits limits{.max_depth = 8, .max_items = 64, .max_key_bytes = 64};
  HistoryAssembler history;
  std::vector<HistoryRow> rows;
  double now = 1.0e9;
  size_t start = 0;
  while (start <= input.size()) {
    const size_t end = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    // The flat lines' scanner gives what the general parser gives, where it takes a line at all.
    if (auto flat = runmon::user_metrics::ParseFlatMetricLine(line, limits)) {
      auto general = runmon::user_metrics::ParseMetricLineInGeneral(line, limits);
      FUZZ_CHECK(general.ok());
      FUZZ_CHECK(flat->items.size() == general->items.size());
      for (size_t i = 0; i < flat->items.size(); ++i) {
        FUZZ_CHECK(flat->items[i].key == general->items[i].key);
        FUZZ_CHECK(SameValue(flat->items[i].value_json, general->items[i].value_json));
      }
      FUZZ_CHECK(flat->step == general->step);
      FUZZ_CHECK(flat->timestamp == general->timestamp);
      FUZZ_CHECK(flat->summary == general->summary);
    }
    auto parsed = ParseMetricLine(line, limits);
    if (!parsed) {
      FUZZ_CHECK(runmon::IsValidUtf8(parsed.error()));
      continue;
    }
    FUZZ_CHECK(parsed->items.size() <= limits.max_items);
    for (const auto& item : parsed->items) {
      FUZZ_CHECK(!item.key.empty() && item.key.size() <= limits.max_key_bytes);
      FUZZ_CHECK(runmon::IsValidUtf8(item.key));
      FUZZ_CHECK(!item.value_json.empty() && item.value_json != "null");
      // The value's JSON is a value again, the same one.
      auto again = ParseMetricLine("{\"k\": " + item.value_json + "}");
      if (item.value_json.find_first_of("[{") == std::string::npos) {
        FUZZ_CHECK(again.ok());
        FUZZ_CHECK(again->items.size() == 1 && again->items[0].value_json == item.value_json);
      }
    }
    now += 0.5;
    (void)history.Add(std::move(*parsed), now, rows);
    history.FlushIdle(now, 1.0, rows);
  }
  history.Finish(rows);
  for (size_t i = 1; i < rows.size(); ++i) FUZZ_CHECK(rows[i].step >= rows[i - 1].step);
  std::set<std::string> keys;
  for (const auto& item : history.Summary()) FUZZ_CHECK(keys.insert(item.key).second);
  return 0;
}
