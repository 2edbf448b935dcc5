// Unit tests of the OpenMetrics filters (x_stats_open_metrics_filters: list and dict forms, RE2, unanchored)
// and of SeriesKeys (the openmetrics.<endpoint>.<metric>.<index> keys, type rules, index stability, cap).
#include "collectors/openmetrics/series_filter.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace runmon::openmetrics {
namespace {

SeriesFilter MustFilter(std::optional<std::string_view> json) {
  auto filter = SeriesFilter::FromSetting(json);
  EXPECT_TRUE(filter.ok()) << (filter.ok() ? "" : filter.error());
  if (!filter.ok()) return SeriesFilter();
  return std::move(filter).value();
}

MetricSample Sample(std::string name, Labels labels, MetricType type = MetricType::kGauge) {
  MetricSample s;
  s.family = name;
  s.name = std::move(name);
  s.labels = std::move(labels);
  s.type = type;
  return s;
}

TEST(SeriesFilter, NoSettingKeepsAll) {
  const SeriesFilter filter = MustFilter(std::nullopt);
  EXPECT_TRUE(filter.KeepsAll());
  EXPECT_TRUE(filter.Keep("ep.anything", {}));
}

TEST(SeriesFilter, NullEmptyListAndEmptyObjectKeepAll) {
  for (const char* json : {"null", "[]", "{}", " [ ] "}) {
    const SeriesFilter filter = MustFilter(json);
    EXPECT_TRUE(filter.KeepsAll()) << json;
    EXPECT_TRUE(filter.Keep("ep.m", {{"a", "b"}})) << json;
  }
}

TEST(SeriesFilter, ListKeepsWhenAnyRegexMatches) {
  const SeriesFilter filter = MustFilter(R"([".*DCGM_FI_DEV_GPU_UTIL", "node\\.cpu_seconds"])");
  EXPECT_FALSE(filter.KeepsAll());
  EXPECT_TRUE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {}));
  EXPECT_TRUE(filter.Keep("node.cpu_seconds_total", {}));
  EXPECT_FALSE(filter.Keep("node.memory_bytes", {}));
  EXPECT_FALSE(filter.Keep("nodeXcpu_seconds_total", {}));
}

TEST(SeriesFilter, RegexesAreUnanchored) {
  const SeriesFilter filter = MustFilter(R"(["GPU_UTIL"])");
  EXPECT_TRUE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {}));
  EXPECT_TRUE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL_X", {}));
  const SeriesFilter anchored = MustFilter(R"(["^dcgm\\.DCGM_FI_DEV_GPU_UTIL$"])");
  EXPECT_TRUE(anchored.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {}));
  EXPECT_FALSE(anchored.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL_X", {}));
  EXPECT_FALSE(anchored.Keep("xdcgm.DCGM_FI_DEV_GPU_UTIL", {}));
}

TEST(SeriesFilter, ListMatchesTheFullNameWithEndpoint) {
  const SeriesFilter filter = MustFilter(R"(["^node1\\."])");
  EXPECT_TRUE(filter.Keep("node1.up", {}));
  EXPECT_FALSE(filter.Keep("node2.up", {}));
}

TEST(SeriesFilter, DictEntryWithoutLabelFiltersKeeps) {
  for (const char* json : {R"({"GPU_UTIL": {}})", R"({"GPU_UTIL": null})"}) {
    const SeriesFilter filter = MustFilter(json);
    EXPECT_TRUE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}})) << json;
    EXPECT_FALSE(filter.Keep("dcgm.DCGM_FI_DEV_MEM_CLOCK", {{"gpu", "0"}})) << json;
  }
}

TEST(SeriesFilter, DictLabelFiltersMustAllMatch) {
  const SeriesFilter filter = MustFilter(R"({"GPU_UTIL": {"gpu": "^[01]$", "Hostname": "node"}})");
  EXPECT_TRUE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {{"Hostname", "node7"}, {"gpu", "1"}}));
  EXPECT_FALSE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {{"Hostname", "node7"}, {"gpu", "2"}}));
  EXPECT_FALSE(filter.Keep("dcgm.DCGM_FI_DEV_GPU_UTIL", {{"Hostname", "host7"}, {"gpu", "0"}}));
}

TEST(SeriesFilter, DictMissingLabelDrops) {
  const SeriesFilter filter = MustFilter(R"({"m": {"gpu": ".*"}})");
  EXPECT_FALSE(filter.Keep("ep.m", {}));
  EXPECT_FALSE(filter.Keep("ep.m", {{"other", "0"}}));
  EXPECT_TRUE(filter.Keep("ep.m", {{"gpu", ""}}));  // exists, empty value matches .*
}

TEST(SeriesFilter, DictMultipleEntriesAnyMayKeep) {
  const SeriesFilter filter = MustFilter(R"({"util": {"gpu": "^0$"}, "UTIL": {"gpu": "^3$"}, "temp": {}})");
  EXPECT_TRUE(filter.Keep("ep.gpu_util_UTIL", {{"gpu", "0"}}));
  EXPECT_TRUE(filter.Keep("ep.gpu_util_UTIL", {{"gpu", "3"}}));
  EXPECT_FALSE(filter.Keep("ep.gpu_util_UTIL", {{"gpu", "1"}}));
  EXPECT_FALSE(filter.Keep("ep.gpu_util", {{"gpu", "3"}}));
  EXPECT_TRUE(filter.Keep("ep.temp", {{"gpu", "9"}}));
  EXPECT_FALSE(filter.Keep("ep.power", {{"gpu", "0"}}));
}

TEST(SeriesFilter, LabelValueRegexIsUnanchored) {
  const SeriesFilter filter = MustFilter(R"({".": {"model": "H1"}})");
  EXPECT_TRUE(filter.Keep("ep.m", {{"model", "NVIDIA H100 80GB"}}));
  EXPECT_FALSE(filter.Keep("ep.m", {{"model", "NVIDIA A100"}}));
}

TEST(SeriesFilter, UnsortedLabelsStillFound) {
  const SeriesFilter filter = MustFilter(R"({"m": {"a": "1", "z": "2"}})");
  EXPECT_TRUE(filter.Keep("ep.m", {{"z", "2"}, {"a", "1"}}));
}

TEST(SeriesFilter, BadJsonIsAnError) {
  auto filter = SeriesFilter::FromSetting("[\"a\"");
  ASSERT_FALSE(filter.ok());
  EXPECT_NE(filter.error().find("x_stats_open_metrics_filters"), std::string::npos);
  EXPECT_FALSE(SeriesFilter::FromSetting("").ok());
}

TEST(SeriesFilter, WrongShapesAreErrors) {
  for (const char* json :
       {"42", "\"a.*\"", "true", R"([1])", R"(["a", ["b"]])", R"({"a": "b"})", R"({"a": ["b"]})",
        R"({"a": {"l": 1}})", R"({"a": {"l": {"x": "y"}}})", R"({"a": {"l": null}})"}) {
    auto filter = SeriesFilter::FromSetting(json);
    EXPECT_FALSE(filter.ok()) << json;
  }
}

TEST(SeriesFilter, InvalidRegexIsNamed) {
  for (const char* json : {R"(["ok", "a(b"])", R"({"a(b": {}})", R"({"m": {"l": "a(b"}})"}) {
    auto filter = SeriesFilter::FromSetting(json);
    ASSERT_FALSE(filter.ok()) << json;
    EXPECT_NE(filter.error().find("\"a(b\""), std::string::npos) << filter.error();
  }
}

TEST(SeriesFilter, PerlOnlySyntaxIsRejected) {
  // Back-references and lookahead are not RE2 (nor Go) syntax.
  EXPECT_FALSE(SeriesFilter::FromSetting(R"(["(a)\\1"])").ok());
  EXPECT_FALSE(SeriesFilter::FromSetting(R"j(["a(?=b)"])j").ok());
}

TEST(SeriesFilter, HugeRegexHitsTheMemoryBound) {
  auto filter = SeriesFilter::FromSetting(R"j(["((((a{100}){100}){100}){100})"])j");
  EXPECT_FALSE(filter.ok());
}

TEST(SeriesFilter, CatastrophicBacktrackingPatternIsLinear) {
  const SeriesFilter filter = MustFilter(R"(["(a+)+$", "(x+x+)+y"])");
  const std::string name = "ep." + std::string(100'000, 'a') + "!";
  const std::string name2 = "ep." + std::string(100'000, 'x');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(filter.Keep(name, {}));
  EXPECT_FALSE(filter.Keep(name2, {}));
  EXPECT_TRUE(filter.Keep("ep.aaa", {}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(SeriesFilter, MoveKeepsTheRegexes) {
  SeriesFilter a = MustFilter(R"(["^ep\\.keep$"])");
  SeriesFilter b = std::move(a);
  EXPECT_TRUE(b.Keep("ep.keep", {}));
  EXPECT_FALSE(b.Keep("ep.drop", {}));
}

TEST(SeriesKeys, KeyFormatAndIndices) {
  SeriesKeys keys("dcgm", nullptr);
  EXPECT_EQ(keys.KeyFor(Sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}})),
            "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.0");
  EXPECT_EQ(keys.KeyFor(Sample("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "1"}})),
            "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL.1");
  EXPECT_EQ(keys.KeyFor(Sample("DCGM_FI_DEV_GPU_TEMP", {{"gpu", "1"}})),
            "openmetrics.dcgm.DCGM_FI_DEV_GPU_TEMP.0");
  EXPECT_EQ(keys.KeyFor(Sample("up", {})), "openmetrics.dcgm.up.0");
  EXPECT_EQ(keys.SeriesCount(), 4u);
  EXPECT_EQ(keys.Endpoint(), "dcgm");
}

TEST(SeriesKeys, IndicesStableAcrossScrapes) {
  SeriesKeys keys("ep", nullptr);
  const std::string body1 = "m{gpu=\"0\"} 1\nm{gpu=\"1\"} 2\n";
  const std::string body2 = "m{gpu=\"2\"} 1\nm{gpu=\"1\"} 2\nm{gpu=\"0\"} 3\n";
  for (const MetricSample& s : ParseExposition(body1).samples) ASSERT_TRUE(keys.KeyFor(s));
  std::vector<std::string> got;
  for (const MetricSample& s : ParseExposition(body2).samples) got.push_back(keys.KeyFor(s).value_or("none"));
  EXPECT_EQ(got,
            (std::vector<std::string>{"openmetrics.ep.m.2", "openmetrics.ep.m.1", "openmetrics.ep.m.0"}));
  const auto& table = keys.Table().at("m");
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0], (Labels{{"gpu", "0"}}));
  EXPECT_EQ(table[2], (Labels{{"gpu", "2"}}));
}

TEST(SeriesKeys, LabelOrderDoesNotMatter) {
  SeriesKeys keys("ep", nullptr);
  const auto a = ParseExposition("m{a=\"1\",b=\"2\"} 1\n").samples;
  const auto b = ParseExposition("m{b=\"2\",a=\"1\"} 1\n").samples;
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(keys.KeyFor(a[0]), "openmetrics.ep.m.0");
  EXPECT_EQ(keys.KeyFor(b[0]), "openmetrics.ep.m.0");
  // A caller's own unsorted labels too.
  EXPECT_EQ(keys.KeyFor(Sample("m", {{"b", "2"}, {"a", "1"}})), "openmetrics.ep.m.0");
  EXPECT_EQ(keys.SeriesCount(), 1u);
  EXPECT_EQ(keys.Table().at("m")[0], (Labels{{"a", "1"}, {"b", "2"}}));
}

TEST(SeriesKeys, TypeRules) {
  const std::string body =
      "# TYPE c counter\nc_total 1\nc_created 1.7e9\n"
      "# TYPE g gauge\ng 2\n"
      "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"
      "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\n"
      "# TYPE st stateset\nst{st=\"a\"} 1\n"
      "# TYPE i info\ni_info{v=\"1\"} 1\n"
      "# TYPE gh gaugehistogram\ngh_bucket{le=\"+Inf\"} 1\ngh_gsum 1\ngh_gcount 1\n"
      "u 3\n"
      "# EOF\n";
  const ParseResult parsed = ParseExposition(body);
  ASSERT_EQ(parsed.error_count, 0u) << (parsed.errors.empty() ? "" : parsed.errors[0]);
  SeriesKeys keys("ep", nullptr);
  std::vector<std::string> got;
  for (const MetricSample& s : parsed.samples) {
    if (auto key = keys.KeyFor(s)) got.push_back(*key);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"openmetrics.ep.c_total.0", "openmetrics.ep.g.0",
                                           "openmetrics.ep.u.0"}));
}

TEST(SeriesKeys, PrometheusTextUntypedAndCounters) {
  const ParseResult parsed =
      ParseExposition("# TYPE requests_total counter\nrequests_total{code=\"200\"} 5\nplain 1\n");
  SeriesKeys keys("ep", nullptr);
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(keys.KeyFor(parsed.samples[0]), "openmetrics.ep.requests_total.0");
  EXPECT_EQ(keys.KeyFor(parsed.samples[1]), "openmetrics.ep.plain.0");
  EXPECT_TRUE(SeriesKeys::UsesType(MetricType::kUntyped));
  EXPECT_TRUE(SeriesKeys::UsesType(MetricType::kUnknown));
  EXPECT_FALSE(SeriesKeys::UsesType(MetricType::kHistogram));
}

TEST(SeriesKeys, FilterApplies) {
  const SeriesFilter filter = MustFilter(R"({"^dcgm\\.GPU_UTIL$": {"gpu": "^[02]$"}})");
  SeriesKeys keys("dcgm", &filter);
  EXPECT_EQ(keys.KeyFor(Sample("GPU_UTIL", {{"gpu", "0"}})), "openmetrics.dcgm.GPU_UTIL.0");
  EXPECT_EQ(keys.KeyFor(Sample("GPU_UTIL", {{"gpu", "1"}})), std::nullopt);
  EXPECT_EQ(keys.KeyFor(Sample("GPU_UTIL", {{"gpu", "2"}})), "openmetrics.dcgm.GPU_UTIL.1");
  EXPECT_EQ(keys.KeyFor(Sample("GPU_TEMP", {{"gpu", "0"}})), std::nullopt);
  EXPECT_EQ(keys.SeriesCount(), 2u);
  EXPECT_EQ(keys.Table().count("GPU_TEMP"), 0u);
  EXPECT_EQ(keys.DroppedSeries(), 0u);  // filtered, not dropped by the cap
}

TEST(SeriesKeys, SeriesCap) {
  SeriesKeys keys("ep", nullptr, SeriesKeysOptions{.max_series = 3});
  EXPECT_TRUE(keys.KeyFor(Sample("a", {{"i", "0"}})));
  EXPECT_TRUE(keys.KeyFor(Sample("a", {{"i", "1"}})));
  EXPECT_TRUE(keys.KeyFor(Sample("b", {})));
  EXPECT_EQ(keys.KeyFor(Sample("a", {{"i", "2"}})), std::nullopt);
  EXPECT_EQ(keys.KeyFor(Sample("c", {})), std::nullopt);
  EXPECT_EQ(keys.DroppedSeries(), 2u);
  // Known series keep their keys after the cap is reached.
  EXPECT_EQ(keys.KeyFor(Sample("a", {{"i", "1"}})), "openmetrics.ep.a.1");
  EXPECT_EQ(keys.SeriesCount(), 3u);
  EXPECT_EQ(keys.Table().count("c"), 0u);
}

TEST(SeriesKeys, DefaultCapIsTenThousand) {
  SeriesKeys keys("ep", nullptr);
  for (int i = 0; i < 10'001; ++i) (void)keys.KeyFor(Sample("m", {{"i", std::to_string(i)}}));
  EXPECT_EQ(keys.SeriesCount(), 10'000u);
  EXPECT_EQ(keys.DroppedSeries(), 1u);
  EXPECT_EQ(keys.Table().at("m").size(), 10'000u);
}

TEST(SeriesKeys, AwkwardNamesKeptVerbatim) {
  SeriesKeys keys("my ep.v2", nullptr);
  const ParseResult parsed = ParseExposition("{\"my.metric/x\", gpu=\"0\"} 1\n");
  ASSERT_EQ(parsed.samples.size(), 1u) << (parsed.errors.empty() ? "" : parsed.errors[0]);
  EXPECT_EQ(keys.KeyFor(parsed.samples[0]), "openmetrics.my ep.v2.my.metric/x.0");
}

TEST(SeriesKeys, LabelValuesWithSeparatorsStayDistinct) {
  // W&B's "k=v;" MD5 would merge these; runmon keeps them apart.
  SeriesKeys keys("ep", nullptr);
  EXPECT_EQ(keys.KeyFor(Sample("m", {{"a", "1;b=2"}})), "openmetrics.ep.m.0");
  EXPECT_EQ(keys.KeyFor(Sample("m", {{"a", "1"}, {"b", "2"}})), "openmetrics.ep.m.1");
}

}  // namespace
}  // namespace runmon::openmetrics
