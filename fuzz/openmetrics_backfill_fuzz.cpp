// Fuzzes the OpenMetrics backfill with the keys, times and values a hostile run log can hold (a key of any
// bytes, any 64-bit time, any double): the text is valid UTF-8, every line is a TYPE, UNIT or HELP line or
// a sample of a family whose TYPE came first, no family is written twice, `# EOF` comes once and last,
// every value is written, replaced at its millisecond or counted without a name, and a budget of a few
// points gives the same text as the default one.
// Input: the first byte picks the small budget; then entries of a key length byte, the key, an 8-byte time
// in milliseconds and an 8-byte double.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"
#include "export/openmetrics_backfill.hpp"
#include "fuzz_check.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace {

struct Entry {
  std::string key;
  int64_t timestamp_ms;
  double value;
};

struct Result {
  std::string text;
  runmon::BackfillCounts counts;
};

Result Backfill(const std::vector<Entry>& entries, size_t points_per_pass) {
  runmon::OpenMetricsBackfill backfill(points_per_pass);
  for (const Entry& entry : entries) backfill.Survey(entry.key);
  Result result;
  const auto write = [&result](std::string_view piece) {
    result.text += piece;
    return true;
  };
  const size_t passes = backfill.Plan();
  for (size_t pass = 0; pass < passes; ++pass) {
    for (const Entry& entry : entries) backfill.Collect(pass, entry.timestamp_ms, entry.key, entry.value);
    FUZZ_CHECK(
        backfill.WritePass(pass, {.host = "h\xff\"", .run_id = "r", .job_id = "", .node_rank = "0"}, write));
  }
  FUZZ_CHECK(backfill.WriteEnd(write));
  result.counts = backfill.counts();
  return result;
}

void CheckText(const std::string& text) {
  FUZZ_CHECK(runmon::IsValidUtf8(text));
  FUZZ_CHECK(text.ends_with("# EOF\n"));
  std::set<std::string> families;
  std::string family;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    FUZZ_CHECK(end != std::string::npos);
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line == "# EOF") {
      FUZZ_CHECK(start == text.size());
      break;
    }
    if (line.starts_with("# TYPE ")) {
      family = std::string(line.substr(7, line.find(' ', 7) - 7));
      FUZZ_CHECK(runmon::prometheus_text::IsValidMetricName(family));
      FUZZ_CHECK(families.insert(family).second);
      continue;
    }
    if (line.starts_with("# UNIT ") || line.starts_with("# HELP ")) {
      FUZZ_CHECK(line.substr(7).starts_with(family + " "));
      continue;
    }
    const std::string_view name = line.substr(0, line.find_first_of("{ "));
    FUZZ_CHECK(!family.empty() && (name == family || name == family + "_total"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t small_budget = 1 + data[0] % 32;
  std::vector<Entry> entries;
  size_t pos = 1;
  while (pos < size) {
    const size_t key_length = data[pos++];
    if (size - pos < key_length + 16) break;
    Entry entry;
    entry.key.assign(reinterpret_cast<const char*>(data + pos), key_length);
    pos += key_length;
    std::memcpy(&entry.timestamp_ms, data + pos, 8);
    std::memcpy(&entry.value, data + pos + 8, 8);
    pos += 16;
    entries.push_back(std::move(entry));
  }
  const Result whole = Backfill(entries, runmon::kDefaultBackfillPointsPerPass);
  CheckText(whole.text);
  FUZZ_CHECK(whole.counts.values_written + whole.counts.duplicates + whole.counts.unexported_values ==
             entries.size());
  const Result small = Backfill(entries, small_budget);
  FUZZ_CHECK(small.text == whole.text);
  return 0;
}
