// The chart grouping of every catalog pattern, against tests/fixtures/golden/chart-grouping.txt: the key's
// chart id, title, unit, series name and order (runview::IdentifySystemKey), then every chart in the
// system sidebar's order (SortForSidebar). The grouping is derived from the metric tables; this holds it
// steady while they change shape. RUNMON_UPDATE_GOLDEN=1 rewrites the file (then review the diff).
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/catalog.hpp"
#include "export/fixture_samples.hpp"
#include "runview/metric_groups.hpp"
#include "support/golden.hpp"

namespace runmon::runview {
namespace {

TEST(ChartGroupingGolden, EveryCatalogPattern) {
  std::string text;
  std::map<std::string, ChartGroup> charts;
  for (const MetricDefinition& definition : MetricCatalog()) {
    for (const std::string& key :
         {test::ExampleKey(definition.pattern), test::ExampleKey(definition.pattern) + "/l:node-2"}) {
      const KeyIdentity identity = IdentifySystemKey(key);
      text += fmt::format("{} -> chart {} | title {} | unit {} | series {} | order {}\n", key,
                          identity.chart_id, identity.title, identity.unit, identity.series, identity.order);
      ChartGroup& chart = charts[identity.chart_id];
      chart.id = identity.chart_id;
      chart.order = identity.order;
    }
  }
  std::vector<ChartGroup> sidebar;
  for (auto& [id, chart] : charts) sidebar.push_back(chart);
  std::stable_sort(sidebar.begin(), sidebar.end(),
                   [](const ChartGroup& a, const ChartGroup& b) { return a.order < b.order; });
  SortForSidebar(sidebar);
  text += "sidebar:";
  for (const ChartGroup& chart : sidebar) text += " " + chart.id;
  test::ExpectGolden(std::filesystem::path(RUNMON_FIXTURES_DIR) / "golden" / "chart-grouping.txt", text);
}

}  // namespace
}  // namespace runmon::runview
