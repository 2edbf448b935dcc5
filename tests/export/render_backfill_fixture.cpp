// Prints a backfill of EveryPatternSample() over three records 15 s apart (values changing, the run's four
// labels) for `promtool tsdb create-blocks-from openmetrics` (promtool_backfill.cmake): every catalog name,
// unit and hostile label value must be accepted by Prometheus' own OpenMetrics parser and TSDB.
#include <cstdio>
#include <string_view>

#include "export/fixture_samples.hpp"
#include "export/openmetrics_backfill.hpp"

int main() {
  constexpr int kRecords = 3;
  const runmon::Sample sample = runmon::test::EveryPatternSample();
  runmon::OpenMetricsBackfill backfill;
  for (int record = 0; record < kRecords; ++record) {
    for (const runmon::Metric& metric : sample.metrics.items()) backfill.Survey(metric.key);
  }
  const auto write = [](std::string_view text) {
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  };
  const runmon::BackfillLabels labels{
      .host = "node-1", .run_id = "abc123", .job_id = "4242", .node_rank = "0"};
  const size_t passes = backfill.Plan();
  for (size_t pass = 0; pass < passes; ++pass) {
    for (int record = 0; record < kRecords; ++record) {
      const int64_t timestamp_ms = static_cast<int64_t>(sample.timestamp * 1000) + record * 15000;
      for (const runmon::Metric& metric : sample.metrics.items()) {
        backfill.Collect(pass, timestamp_ms, metric.key, metric.value * (record + 1));
      }
    }
    if (!backfill.WritePass(pass, labels, write)) return 1;
  }
  return backfill.WriteEnd(write) && std::fflush(stdout) == 0 ? 0 : 1;
}
