// Fuzzes SeriesFilter and SeriesKeys: the first input line is an x_stats_open_metrics_filters setting, the
// rest a small exposition. No crash; Keep is deterministic and agrees with KeyFor; per metric the indices
// handed out are exactly 0..n-1 and match the table; a second pass gives every sample the same key; the
// series cap holds.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/openmetrics/series_filter.hpp"
#include "collectors/openmetrics/text_parse.hpp"
#include "fuzz_check.hpp"

namespace {

using runmon::openmetrics::MetricSample;
using runmon::openmetrics::SeriesFilter;
using runmon::openmetrics::SeriesKeys;

constexpr size_t kMaxSeries = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);
  const size_t newline = input.find('\n');
  const std::string_view setting = input.substr(0, newline);
  const std::string_view body =
      newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);

  auto parsed_filter = SeriesFilter::FromSetting(setting);
  SeriesFilter filter;
  if (parsed_filter.ok()) {
    filter = std::move(parsed_filter).value();
  } else {
    FUZZ_CHECK(!parsed_filter.error().empty());
  }

  runmon::openmetrics::ParseOptions options;
  options.max_samples = 512;
  options.max_line_bytes = 4096;
  const auto parsed = runmon::openmetrics::ParseExposition(body, options);

  const std::string endpoint = "ep";
  SeriesKeys keys(endpoint, &filter, runmon::openmetrics::SeriesKeysOptions{.max_series = kMaxSeries});
  std::vector<std::optional<std::string>> first;
  std::map<std::string, std::set<size_t>> seen;
  for (const MetricSample& s : parsed.samples) {
    const std::string full = endpoint + "." + s.name;
    const bool keep = filter.Keep(full, s.labels);
    FUZZ_CHECK(keep == filter.Keep(full, s.labels));
    const size_t before = keys.SeriesCount();
    std::optional<std::string> key = keys.KeyFor(s);
    if (key) {
      FUZZ_CHECK(keep);
      FUZZ_CHECK(SeriesKeys::UsesType(s.type));
      const std::string prefix = "openmetrics." + full + ".";
      FUZZ_CHECK(key->starts_with(prefix));
      const std::string digits = key->substr(prefix.size());
      FUZZ_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos);
      const size_t index = std::stoul(digits);
      const auto& table = keys.Table().at(s.name);
      FUZZ_CHECK(index < table.size());
      if (keys.SeriesCount() > before) FUZZ_CHECK(index + 1 == table.size());
      seen[s.name].insert(index);
    } else {
      FUZZ_CHECK(keys.SeriesCount() == before);
    }
    first.push_back(std::move(key));
  }

  size_t total = 0;
  for (const auto& [metric, table] : keys.Table()) {
    total += table.size();
    const std::set<size_t>& indices = seen[metric];
    FUZZ_CHECK(indices.size() == table.size());
    FUZZ_CHECK(indices.empty() || *indices.rbegin() + 1 == table.size());
    const std::set<runmon::openmetrics::Labels> distinct(table.begin(), table.end());
    FUZZ_CHECK(distinct.size() == table.size());
  }
  FUZZ_CHECK(total == keys.SeriesCount());
  FUZZ_CHECK(total <= kMaxSeries);

  // A second scrape of the same body: the same keys, no new series.
  const size_t count = keys.SeriesCount();
  for (size_t i = 0; i < parsed.samples.size(); ++i) {
    const std::optional<std::string> again = keys.KeyFor(parsed.samples[i]);
    if (first[i]) FUZZ_CHECK(again == first[i]);
  }
  FUZZ_CHECK(keys.SeriesCount() == count);
  return 0;
}
