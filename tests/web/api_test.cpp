// The JSON API on fixture logdirs: the runs list (sorting, paging, filtering, bad parameters), a run's
// overview and charts, chart data (by chart id, keys and regex; several runs; size; bad parameters), CSV, and
// the layout (validation, persistence, a damaged file, a missing logdir).
#include "web/api.hpp"

#include <fstream>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::web {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::RunLogBuilder;
constexpr double kStart = 1'780'000'000;

fs::path WriteRun(const fs::path& logdir, const std::string& stamp, const std::string& id,
                  const std::string& name, int samples, int exit_code = 0,
                  const std::string& host = "node-1") {
  const fs::path log = logdir / ("run-" + stamp + "-" + id) / ("run-" + id + ".wandb");
  RunLogBuilder builder;
  builder.Header().Run(id, name, kStart, "proj", host).Environment("python train.py");
  for (int i = 0; i < samples; ++i) {
    builder.Stats(kStart + i, {{"cpu", std::to_string(i % 100)},
                               {"gpu.0.gpu", std::to_string((i * 7) % 100)},
                               {"gpu.1.gpu", std::to_string((i * 3) % 100)},
                               {"memory_percent", "42"}});
  }
  builder.History(0, {{"loss", "2"}}).History(1, {{"loss", "1"}});
  builder.Exit(exit_code, samples);
  builder.WriteTo(log);
  return log;
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRun(dir_.path(), "20260101_000000", "aaa", "alpha", 50);
    WriteRun(dir_.path(), "20260102_000000", "bbb", "<script>alert(1)</script>", 20, 1, "gpu-box");
    WriteRun(dir_.path(), "20260103_000000", "ccc", "gamma", 100000);
    store_.Start();
  }
  void TearDown() override { store_.Stop(); }

  static json Body(const ApiResponse& response) { return json::parse(response.body); }

  test::TempDir dir_{"web-api"};
  RunStore store_{dir_.path()};
};

TEST_F(ApiTest, RunsListSortsPagesAndFilters) {
  const auto response = ListRuns(store_, {});
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = Body(response);
  EXPECT_EQ(body["total"], 3);
  ASSERT_EQ(body["runs"].size(), 3u);
  EXPECT_EQ(body["runs"][0]["id"], "ccc");                          // newest first
  EXPECT_EQ(body["runs"][1]["name"], "<script>alert(1)</script>");  // as data; the page escapes it
  EXPECT_EQ(body["runs"][1]["state"], "failed");
  EXPECT_EQ(body["runs"][2]["state"], "finished");
  EXPECT_EQ(body["runs"][2]["command"], "python train.py");
  EXPECT_EQ(body["runs"][2]["dir"], "run-20260101_000000-aaa");
  EXPECT_DOUBLE_EQ(body["runs"][2]["duration"].get<double>(), 50);

  const json by_name = Body(ListRuns(store_, {{"sort", "name"}, {"order", "asc"}}));
  EXPECT_EQ(by_name["runs"][0]["name"], "<script>alert(1)</script>");
  EXPECT_EQ(by_name["runs"][1]["name"], "alpha");
  const json paged = Body(ListRuns(store_, {{"offset", "1"}, {"limit", "1"}}));
  EXPECT_EQ(paged["total"], 3);
  ASSERT_EQ(paged["runs"].size(), 1u);
  EXPECT_EQ(paged["runs"][0]["id"], "bbb");
  const json filtered = Body(ListRuns(store_, {{"q", "GPU-BOX"}}));
  ASSERT_EQ(filtered["total"], 1);
  EXPECT_EQ(filtered["runs"][0]["id"], "bbb");
  const json past_end = Body(ListRuns(store_, {{"offset", "10"}}));
  EXPECT_TRUE(past_end["runs"].empty());
}

TEST_F(ApiTest, RunsListRejectsMalformedParameters) {
  for (const QueryParams& bad : std::vector<QueryParams>{{{"offset", "-1"}},
                                                         {{"offset", "x"}},
                                                         {{"limit", "0"}},
                                                         {{"limit", "1001"}},
                                                         {{"limit", "1e3"}},
                                                         {{"sort", "size"}},
                                                         {{"order", "up"}},
                                                         {{"q", std::string(300, 'a')}},
                                                         {{"offset", "99999999999999999999999"}}}) {
    const auto response = ListRuns(store_, bad);
    EXPECT_EQ(response.status, 400) << bad.begin()->first << "=" << bad.begin()->second;
    EXPECT_TRUE(Body(response).contains("error"));
  }
}

TEST_F(ApiTest, DescribeRunGivesOverviewAndCharts) {
  const auto response = DescribeRun(store_, "run-20260101_000000-aaa");
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = Body(response);
  EXPECT_EQ(body["id"], "aaa");
  EXPECT_EQ(body["state"], "finished");
  EXPECT_EQ(body["samples"], 50);
  EXPECT_EQ(body["exit_code"], 0);
  bool gpu_chart = false;
  bool loss_chart = false;
  for (const auto& chart : body["charts"]) {
    if (chart["id"] == "gpu.{i}.gpu") {
      gpu_chart = true;
      EXPECT_EQ(chart["unit"], "%");
      EXPECT_EQ(chart["section"], "system");
      EXPECT_EQ(chart["series"].size(), 2u);
    }
    if (chart["id"] == "loss") {
      loss_chart = true;
      EXPECT_EQ(chart["section"], "logged");
      EXPECT_EQ(chart["x_axis"], "step");
    }
  }
  EXPECT_TRUE(gpu_chart);
  EXPECT_TRUE(loss_chart);
  EXPECT_EQ(DescribeRun(store_, "run-20991231_000000-nope").status, 404);
  EXPECT_EQ(DescribeRun(store_, "../../etc").status, 404);
  EXPECT_EQ(DescribeRun(store_, "").status, 404);
}

TEST_F(ApiTest, ChartDataByIdKeysAndRegex) {
  const auto by_id = ChartJson(store_, {{"runs", "run-20260101_000000-aaa"}, {"chart", "gpu.{i}.gpu"}});
  ASSERT_EQ(by_id.status, 200) << by_id.body;
  const json chart = Body(by_id);
  EXPECT_EQ(chart["title"], "GPU utilization");
  EXPECT_EQ(chart["unit"], "%");
  EXPECT_TRUE(chart["raw"]);
  EXPECT_EQ(chart["x"].size(), 50u);
  ASSERT_EQ(chart["series"].size(), 2u);
  EXPECT_EQ(chart["series"][0]["name"], "GPU 0");
  EXPECT_EQ(chart["series"][0]["values"][3], 21);
  EXPECT_EQ(chart["series"][1]["values"][49], (49 * 3) % 100);

  const json keys =
      Body(ChartJson(store_, {{"runs", "run-20260101_000000-aaa"}, {"keys", "cpu,memory_percent"}}));
  EXPECT_EQ(keys["series"].size(), 2u);
  const json regex =
      Body(ChartJson(store_, {{"runs", "run-20260101_000000-aaa"}, {"match", "^GPU\\.[0-9]+\\.gpu$"}}));
  EXPECT_EQ(regex["series"].size(), 2u);
  const json logged = Body(ChartJson(store_, {{"runs", "run-20260101_000000-aaa"}, {"chart", "loss"}}));
  EXPECT_EQ(logged["x_axis"], "step");

  // Two runs overlaid: series named after their run.
  const json both = Body(ChartJson(
      store_,
      {{"runs", "run-20260101_000000-aaa,run-20260102_000000-bbb"}, {"chart", "cpu"}, {"width", "100"}}));
  ASSERT_EQ(both["series"].size(), 2u);
  EXPECT_EQ(both["series"][0]["name"], "alpha");
  EXPECT_EQ(both["series"][1]["run"], "run-20260102_000000-bbb");
}

TEST_F(ApiTest, BigRunsAreDownsampledUnder200KB) {
  const auto response =
      ChartJson(store_, {{"runs", "run-20260103_000000-ccc"}, {"chart", "gpu.{i}.gpu"}, {"width", "2000"}});
  ASSERT_EQ(response.status, 200);
  EXPECT_LT(response.body.size(), 200u * 1024);
  const json chart = Body(response);
  EXPECT_FALSE(chart["raw"]);
  EXPECT_EQ(chart["width"], 2000);
  EXPECT_EQ(chart["x"].size(), 4000u);
  // A zoomed range comes at full resolution.
  const json zoomed = Body(ChartJson(store_, {{"runs", "run-20260103_000000-ccc"},
                                              {"chart", "cpu"},
                                              {"start", "1000"},
                                              {"end", "1100"},
                                              {"width", "800"}}));
  EXPECT_TRUE(zoomed["raw"]);
  EXPECT_EQ(zoomed["x"].size(), 101u);
  // Every key of the run in one panel still fits.
  const auto all =
      ChartJson(store_, {{"runs", "run-20260103_000000-ccc"}, {"match", "."}, {"width", "2000"}});
  EXPECT_LT(all.body.size(), 200u * 1024);
}

TEST_F(ApiTest, ChartRejectsMalformedParameters) {
  const std::string run = "run-20260101_000000-aaa";
  const std::vector<std::pair<QueryParams, int>> cases = {
      {{{"chart", "cpu"}}, 400},
      {{{"runs", ""}, {"chart", "cpu"}}, 400},
      {{{"runs", run}}, 400},
      {{{"runs", run}, {"chart", "cpu"}, {"keys", "cpu"}}, 400},
      {{{"runs", run}, {"chart", "cpu"}, {"width", "0"}}, 400},
      {{{"runs", run}, {"chart", "cpu"}, {"width", "2001"}}, 400},
      {{{"runs", run}, {"chart", "cpu"}, {"start", "nan"}}, 400},
      {{{"runs", run}, {"chart", "cpu"}, {"start", "5"}, {"end", "5"}}, 400},
      {{{"runs", run}, {"match", "("}}, 400},
      {{{"runs", run}, {"match", std::string(2000, 'a')}}, 400},
      {{{"runs", run}, {"chart", "no.such.chart"}}, 404},
      {{{"runs", "run-x"}, {"chart", "cpu"}}, 404},
      {{{"runs", "../../etc/passwd"}, {"chart", "cpu"}}, 404},
  };
  for (const auto& [params, status] : cases) {
    const auto response = ChartJson(store_, params);
    EXPECT_EQ(response.status, status) << response.body;
    EXPECT_TRUE(Body(response).contains("error"));
  }
  std::string many;
  for (int i = 0; i < 17; ++i) many += run + ",";
  EXPECT_EQ(ChartJson(store_, {{"runs", many}, {"chart", "cpu"}}).status, 400);
  // A catastrophic pattern is linear in RE2.
  EXPECT_EQ(ChartJson(store_, {{"runs", run}, {"match", "(a+)+$"}}).status, 200);
}

TEST_F(ApiTest, CsvHasEveryPoint) {
  const auto response = ChartCsv(store_, {{"runs", "run-20260103_000000-ccc"}, {"chart", "cpu"}});
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/csv; charset=utf-8");
  EXPECT_EQ(std::count(response.body.begin(), response.body.end(), '\n'), 100001);
  EXPECT_TRUE(response.body.starts_with("run,key,x,value\nrun-20260103_000000-ccc,cpu,0,0\n"));
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_NE(response.headers[0].second.find("attachment"), std::string::npos);
}

// The same logdir with every run loaded through its summary index (built on first load).
class IndexedApiTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    indexed_.Start();
  }
  void TearDown() override {
    indexed_.Stop();
    ApiTest::TearDown();
  }
  static runview::IndexedLoadOptions Options() {
    runview::IndexedLoadOptions options;
    options.min_log_bytes = 0;
    return options;
  }
  RunStore indexed_{dir_.path(), Options()};
};

TEST_F(IndexedApiTest, ZoomsReadFullResolutionAndCsvHasEveryPoint) {
  const std::string run = "run-20260103_000000-ccc";
  ASSERT_TRUE(store_.WaitUntilLoaded(*store_.Acquire(run), std::chrono::seconds(60)));
  ASSERT_TRUE(indexed_.WaitUntilLoaded(*indexed_.Acquire(run), std::chrono::seconds(60)));
  // The whole run: bucketed from the summaries, within the size limit, its extremes intact.
  const auto whole = ChartJson(indexed_, {{"runs", run}, {"chart", "gpu.{i}.gpu"}, {"width", "2000"}});
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_LE(whole.body.size(), 200u * 1024);
  const json whole_body = Body(whole);
  EXPECT_FALSE(whole_body["raw"]);
  double top = 0;
  for (const auto& value : whole_body["series"][0]["values"]) {
    if (value.is_number()) top = std::max(top, value.get<double>());
  }
  EXPECT_EQ(top, 99);
  // A one-minute window anywhere: every sample, as a full read gives it.
  for (const std::string start : {"10", "33333", "50000.5", "99900"}) {
    const QueryParams zoom{
        {"runs", run}, {"chart", "cpu"}, {"start", start}, {"end", fmt::format("{}", std::stod(start) + 60)}};
    const json full = Body(ChartJson(store_, zoom));
    const json indexed = Body(ChartJson(indexed_, zoom));
    EXPECT_TRUE(indexed["raw"]) << start;
    EXPECT_GE(indexed["x"].size(), 60u) << start;
    EXPECT_EQ(indexed["x"], full["x"]) << start;
    EXPECT_EQ(indexed["series"], full["series"]) << start;
  }
  const auto full_csv = ChartCsv(store_, {{"runs", run}, {"chart", "cpu"}});
  const auto indexed_csv = ChartCsv(indexed_, {{"runs", run}, {"chart", "cpu"}});
  ASSERT_EQ(indexed_csv.status, 200);
  EXPECT_EQ(std::count(indexed_csv.body.begin(), indexed_csv.body.end(), '\n'), 100001);
  EXPECT_EQ(indexed_csv.body, full_csv.body);
}

TEST_F(ApiTest, LayoutIsValidatedAndPersisted) {
  EXPECT_EQ(Body(GetLayout(store_))["panels"].size(), 0u);
  const std::string layout =
      R"({"version":1,"panels":[{"id":"p1","title":"GPU","keys":["gpu.0.gpu"]},{"id":"p2","match":"temp"}]})";
  const auto put = PutLayout(store_, layout);
  ASSERT_EQ(put.status, 200) << put.body;
  const json stored = Body(GetLayout(store_));
  ASSERT_EQ(stored["panels"].size(), 2u);
  EXPECT_EQ(stored["panels"][1]["match"], "temp");
  EXPECT_TRUE(fs::exists(dir_.path() / ".runmon-dashboard.json"));

  for (const std::string& bad :
       {std::string("not json"), std::string("[]"), std::string(R"({"version":2,"panels":[]})"),
        std::string(R"({"version":1,"panels":[{"id":"../x","keys":["a"]}]})"),
        std::string(R"({"version":1,"panels":[{"id":"a","keys":[]}]})"),
        std::string(R"({"version":1,"panels":[{"id":"a","match":"("}]})"),
        std::string(R"({"version":1,"panels":[{"id":"a","keys":["x"]},{"id":"a","keys":["y"]}]})"),
        std::string(R"({"version":1,"panels":[{"id":"a","keys":[1]}]})")}) {
    EXPECT_EQ(PutLayout(store_, bad).status, 400) << bad;
  }
  EXPECT_EQ(PutLayout(store_, std::string(70000, ' ')).status, 413);
  EXPECT_EQ(Body(GetLayout(store_))["panels"].size(), 2u);  // unchanged by the rejected ones

  // A damaged file is ignored with a warning, not served.
  std::ofstream(dir_.path() / ".runmon-dashboard.json") << "{\"version\":1,\"panels\":[{\"id\":";
  const json damaged = Body(GetLayout(store_));
  EXPECT_TRUE(damaged["panels"].empty());
  EXPECT_TRUE(damaged.contains("warning"));
}

TEST(ApiDamagedRuns, AreListedWithAWarningAndShowTheirReadablePart) {
  test::TempDir dir("web-api");
  const auto log = WriteRun(dir.path(), "20260101_000000", "dmg", "damaged", 20000);
  {
    std::fstream file(log, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(log) - 30000));
    file.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  }
  RunStore store(dir.path());
  store.Start();
  const json list = json::parse(ListRuns(store, {}).body);
  ASSERT_EQ(list["runs"].size(), 1u);
  EXPECT_NE(list["runs"][0]["warning"].get<std::string>().find("damaged log"), std::string::npos);
  const json run = json::parse(DescribeRun(store, "run-20260101_000000-dmg").body);
  EXPECT_GT(run["samples"].get<int>(), 19000);
  ASSERT_FALSE(run["warnings"].empty());
  EXPECT_NE(run["warnings"][0].get<std::string>().find("damaged log"), std::string::npos);
  store.Stop();
}

TEST(ApiManyRuns, TenThousandRunsArePaged) {
  test::TempDir dir("web-api");
  // Tiny logs (header and run record): what matters is the number of run directories.
  for (int i = 0; i < 10000; ++i) {
    const std::string id = fmt::format("r{:05d}", i);
    const fs::path log =
        dir.path() /
        fmt::format("run-2026{:02d}{:02d}_{:02d}0000-{}", 1 + i / 2800, 1 + (i / 100) % 28, i % 24, id) /
        ("run-" + id + ".wandb");
    RunLogBuilder builder;
    builder.Header().Run(id, "run " + id, kStart + i);
    builder.WriteTo(log);
  }
  RunStore store(dir.path());
  store.Start();
  const json first = json::parse(ListRuns(store, {{"limit", "100"}}).body);
  EXPECT_EQ(first["total"], 10000);
  EXPECT_EQ(first["runs"].size(), 100u);
  const json last = json::parse(ListRuns(store, {{"offset", "9900"}, {"limit", "100"}}).body);
  EXPECT_EQ(last["runs"].size(), 100u);
  const json one = json::parse(ListRuns(store, {{"q", "r04242"}}).body);
  ASSERT_EQ(one["total"], 1);
  EXPECT_EQ(one["runs"][0]["id"], "r04242");
  // Every run is summarised in the background within a few seconds.
  for (int i = 0; i < 300; ++i) {
    const json unknown =
        json::parse(ListRuns(store, {{"sort", "state"}, {"order", "desc"}, {"limit", "1"}}).body);
    if (unknown["runs"][0]["state"] != "unknown") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const json sorted =
      json::parse(ListRuns(store, {{"sort", "state"}, {"order", "desc"}, {"limit", "1"}}).body);
  EXPECT_NE(sorted["runs"][0]["state"], "unknown");
  store.Stop();
}

TEST(ApiMissingLogdir, ListsNothingWithAWarningAndRefusesLayouts) {
  test::TempDir dir("web-api");
  RunStore store(dir.path() / "not-yet");
  store.Start();
  const json body = json::parse(ListRuns(store, {}).body);
  EXPECT_EQ(body["total"], 0);
  EXPECT_FALSE(body["warning"].is_null());
  EXPECT_EQ(PutLayout(store, R"({"version":1,"panels":[]})").status, 409);
  // The directory appears and fills: the next scan sees it.
  fs::create_directories(dir.path() / "not-yet");
  WriteRun(dir.path() / "not-yet", "20260101_000000", "late", "late", 3);
  for (int i = 0; i < 100 && json::parse(ListRuns(store, {}).body)["total"] != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(json::parse(ListRuns(store, {}).body)["total"], 1);
  store.Stop();
}

}  // namespace
}  // namespace runmon::web

namespace runmon::web {
namespace {

// A run record longer than a block (names of 200 KiB and 2 MiB) still names its run in the runs table (not
// its id), shortened for the list; so does its page.
TEST(ApiLongNames, RunsTableShowsNamesLongerThanABlock) {
  test::TempDir dir("web-api");
  for (const size_t bytes : {size_t{200} << 10, size_t{2} << 20}) {
    const std::string id = "long" + std::to_string(bytes);
    RunLogBuilder builder;
    builder.Header().Run(id, "long-" + std::string(bytes, 'n'), kStart);
    for (int i = 0; i < 20000; ++i) builder.Stats(kStart + i, {{"cpu", "1"}});
    builder.Exit(0, 20000).WriteTo(dir.path() / ("run-20260101_000000-" + id) / ("run-" + id + ".wandb"));
  }
  RunStore store(dir.path());
  store.Start();
  const json body = json::parse(ListRuns(store, {}).body);
  ASSERT_EQ(body["runs"].size(), 2u);
  const std::string shown = "long-" + std::string(runview::kMaxShownNameBytes - 5, 'n') + "…";
  for (const auto& row : body["runs"]) {
    EXPECT_EQ(row["name"], shown) << row["id"];
    EXPECT_EQ(row["state"], "finished");
    EXPECT_EQ(json::parse(DescribeRun(store, row["dir"].get<std::string>()).body)["name"], shown);
  }
  EXPECT_EQ(json::parse(ListRuns(store, {{"q", "long-nnn"}}).body)["total"], 2);  // found by its name
  store.Stop();
}

}  // namespace
}  // namespace runmon::web
