// The jobs API on fixture logdirs: three node runs of one job (node 1 lagging for ten seconds, the nodes
// started a fraction of a second apart) and a run of no job; the runs list's job fields, the jobs list, a
// job's nodes and keys, its series and band at a known point, and bad input (unknown jobs, keys, hostile and
// huge parameters) answered with JSON errors. Also: ranks in numeric order, nodes sharing a rank, a job of
// more nodes than are charted.
#include "web/jobs.hpp"

#include <httplib.h>

#include <cmath>
#include <thread>

#include <fmt/format.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/wall_clock.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"
#include "web/server.hpp"

namespace runmon::web {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::RunLogBuilder;
constexpr double kStart = 1'780'000'000;
constexpr int kSamples = 60;

// A node of job `job`: started `delay` seconds after kStart, a sample a second from 0.1 s after its start.
// gpu.0.gpu is `level` but 20 while `slow` says so.
void WriteNode(const fs::path& logdir, const std::string& job, const std::string& rank,
               const std::string& host, double delay, double level, bool (*slow)(int),
               const std::string& id) {
  RunLogBuilder builder;
  builder.Header().Run(id, "train-" + id, kStart + delay, "proj", host).Job(job, rank, host);
  for (int i = 0; i < kSamples; ++i) {
    const double value = slow != nullptr && slow(i) ? 20 : level;
    builder.Stats(kStart + delay + 0.1 + i, {{"gpu.0.gpu", fmt::format("{}", value)}, {"cpu", "10"}});
  }
  builder.Exit(0, kSamples);
  builder.WriteTo(logdir / fmt::format("run-20260101_00000{}-{}", rank.size() < 2 ? rank : "9", id) /
                  ("run-" + id + ".wandb"));
}

bool SlowFrom30To40(int i) {
  return i >= 30 && i < 40;
}

class JobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteNode(dir_.path(), "4711", "0", "gpu-a", 0, 80, nullptr, "node0");
    WriteNode(dir_.path(), "4711", "1", "gpu-b", 0.2, 85, SlowFrom30To40, "node1");
    WriteNode(dir_.path(), "4711", "2", "gpu-c", 0.4, 90, nullptr, "node2");
    test::WriteTestRun(dir_.path(), "20260102_000000", "solo", true, 5);
    store_.Start();
  }
  void TearDown() override { store_.Stop(); }

  static json Body(const ApiResponse& response) { return json::parse(response.body); }
  static void ExpectError(const ApiResponse& response, int status) {
    EXPECT_EQ(response.status, status) << response.body;
    EXPECT_EQ(response.content_type, "application/json");
    const json body = json::parse(response.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << response.body;
    EXPECT_TRUE(body["error"].is_string()) << response.body;
  }

  test::TempDir dir_{"web-jobs"};
  RunStore store_{dir_.path()};
};

TEST_F(JobsTest, RunsListCarriesJobAndRank) {
  const json runs = Body(ListRuns(store_, {{"sort", "id"}, {"order", "asc"}}))["runs"];
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0]["id"], "node0");
  EXPECT_EQ(runs[0]["job_id"], "4711");
  EXPECT_EQ(runs[0]["node_rank"], "0");
  EXPECT_EQ(runs[2]["node_rank"], "2");
  EXPECT_EQ(runs[3]["id"], "solo");
  EXPECT_TRUE(runs[3]["job_id"].is_null());
  EXPECT_TRUE(runs[3]["node_rank"].is_null());
  // The filter finds a job's runs by its id.
  EXPECT_EQ(Body(ListRuns(store_, {{"q", "4711"}}))["total"], 3);
}

TEST_F(JobsTest, JobsListGroupsTheNodesByRank) {
  const auto response = ListJobs(store_, {});
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = Body(response);
  EXPECT_EQ(body["total"], 1);  // the run of no job is in no job
  ASSERT_EQ(body["jobs"].size(), 1u);
  const json& job = body["jobs"][0];
  EXPECT_EQ(job["job_id"], "4711");
  EXPECT_EQ(job["launcher"], "slurm");
  EXPECT_EQ(job["node_count"], 3);
  EXPECT_EQ(job["states"]["finished"], 3);
  EXPECT_DOUBLE_EQ(job["start"].get<double>(), kStart);
  EXPECT_NEAR(job["duration"].get<double>(), kSamples + 0.4, 1e-3);
  ASSERT_EQ(job["nodes"].size(), 3u);
  EXPECT_EQ(job["nodes"][0]["node"], "node 0 (gpu-a)");
  EXPECT_EQ(job["nodes"][1]["node"], "node 1 (gpu-b)");
  EXPECT_EQ(job["nodes"][1]["dir"], "run-20260101_000001-node1");
  EXPECT_EQ(job["nodes"][2]["host"], "gpu-c");
  EXPECT_EQ(job["nodes"][2]["run_name"], "train-node2");

  EXPECT_EQ(Body(ListJobs(store_, {{"offset", "1"}}))["jobs"].size(), 0u);
  ExpectError(ListJobs(store_, {{"limit", "0"}}), 400);
  ExpectError(ListJobs(store_, {{"offset", "-1"}}), 400);
  ExpectError(ListJobs(store_, {{"limit", "99999999999999999999999"}}), 400);
}

TEST_F(JobsTest, DescribeJobGivesNodesAndKeys) {
  const auto response = DescribeJob(store_, "4711");
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = Body(response);
  EXPECT_EQ(body["node_count"], 3);
  EXPECT_EQ(body["charted_nodes"], 3);
  EXPECT_TRUE(body["warning"].is_null());
  ASSERT_EQ(body["keys"].size(), 2u);
  std::map<std::string, json> keys;
  for (const auto& key : body["keys"]) keys[key["key"]] = key;
  ASSERT_TRUE(keys.count("gpu.0.gpu"));
  EXPECT_EQ(keys["gpu.0.gpu"]["unit"], "%");
  EXPECT_NE(keys["gpu.0.gpu"]["title"].get<std::string>().find("GPU 0"), std::string::npos);
  EXPECT_TRUE(keys.count("cpu"));

  ExpectError(DescribeJob(store_, "4712"), 404);
  ExpectError(DescribeJob(store_, ""), 404);
  ExpectError(DescribeJob(store_, "../../etc/passwd"), 404);
  ExpectError(DescribeJob(store_, std::string("47\0"
                                              "11",
                                              5)),
              404);
  ExpectError(DescribeJob(store_, "\xff\xfe<script>"), 404);
}

TEST_F(JobsTest, SeriesBandNamesTheSlowestNode) {
  const auto response = JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.body.find("nan"), std::string::npos);
  EXPECT_EQ(response.body.find("inf"), std::string::npos);
  const json body = Body(response);
  EXPECT_EQ(body["unit"], "%");
  EXPECT_FALSE(body["loading"].get<bool>());
  EXPECT_DOUBLE_EQ(body["start_time"].get<double>(), kStart);
  EXPECT_DOUBLE_EQ(body["bucket"].get<double>(), 1);  // the nodes' interval
  ASSERT_EQ(body["nodes"].size(), 3u);
  EXPECT_EQ(body["nodes"][1]["node"], "node 1 (gpu-b)");
  const json& band = body["band"];
  const size_t points = band["t"].size();
  EXPECT_EQ(points, static_cast<size_t>(kSamples));  // every bucket holds one sample of each node
  for (const char* column : {"min", "median", "max", "min_node", "max_node", "count"}) {
    EXPECT_EQ(band[column].size(), points) << column;
  }
  for (const auto& node : body["nodes"]) EXPECT_EQ(node["values"].size(), points);
  // The nodes tick at 0.1, 0.3 and 0.5 s past each second of the job: the buckets run from 0.8 s past one
  // second to 0.8 s past the next. The one centred at 35.3 s holds each node's 36th sample.
  size_t at = points;
  for (size_t i = 0; i < points; ++i) {
    if (std::abs(band["t"][i].get<double>() - 35.3) < 1e-6) at = i;
  }
  ASSERT_LT(at, points) << band["t"].dump();
  EXPECT_EQ(band["min"][at], 20);
  EXPECT_EQ(band["min_node"][at], 1);
  EXPECT_EQ(band["median"][at], 80);
  EXPECT_EQ(band["max"][at], 90);
  EXPECT_EQ(band["max_node"][at], 2);
  EXPECT_EQ(band["count"][at], 3);
  EXPECT_EQ(body["nodes"][1]["values"][at], 20);
  // Before: node 0 is the lowest.
  EXPECT_EQ(band["min_node"][5], 0);
  EXPECT_EQ(band["median"][5], 85);

  // A range and a width.
  const json zoomed = Body(JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}, {"start", "30"}, {"end", "40"}}));
  EXPECT_DOUBLE_EQ(zoomed["start"].get<double>(), 30);
  EXPECT_GE(zoomed["band"]["t"].size(), 10u);
  const json narrow = Body(JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}, {"width", "6"}}));
  EXPECT_EQ(narrow["width"], 6);
  EXPECT_LE(narrow["band"]["t"].size(), 6u);
  EXPECT_GT(narrow["bucket"].get<double>(), 9);
}

TEST_F(JobsTest, SeriesRejectsBadInput) {
  ExpectError(JobSeries(store_, "4711", {}), 400);
  ExpectError(JobSeries(store_, "4711", {{"key", ""}}), 400);
  ExpectError(JobSeries(store_, "4711", {{"key", std::string(513, 'k')}}), 400);
  ExpectError(JobSeries(store_, "4711", {{"key", "no.such.key"}}), 404);
  ExpectError(JobSeries(store_, "4711", {{"key", "loss"}}), 404);
  ExpectError(JobSeries(store_, "nope", {{"key", "gpu.0.gpu"}}), 404);
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"width", "0"},
           {"width", "2001"},
           {"width", "1e3"},
           {"width", "800; DROP"},
           {"start", "nan"},
           {"start", "inf"},
           {"start", "1e300"},
           {"end", "-1e13"},
           {"start", "0x10"},
           {"end", ""},
           {"start", "%00"},
       }) {
    ExpectError(JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}, {name, value}}), 400);
  }
  ExpectError(JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}, {"start", "10"}, {"end", "10"}}), 400);
  // A range with no data in it is an empty band, not an error.
  const json empty =
      Body(JobSeries(store_, "4711", {{"key", "gpu.0.gpu"}, {"start", "1e6"}, {"end", "2e6"}}));
  EXPECT_TRUE(empty["band"]["t"].empty());
  EXPECT_TRUE(empty["nodes"][0]["values"].empty());
}

TEST(JobsGrouping, RanksInNumericOrderAndSharedRanksNamedApart) {
  test::TempDir dir("web-jobs-ranks");
  for (const auto& [rank, id] : std::vector<std::pair<std::string, std::string>>{
           {"10", "r10"}, {"2", "r2"}, {"0", "r0"}, {"2", "r2again"}, {"", "norank"}, {"x", "rx"}}) {
    RunLogBuilder builder;
    builder.Header().Run(id, id, kStart, "p", "h").Job("j", rank, "h");
    builder.Stats(kStart + 1, {{"cpu", "1"}}).Exit(0, 1);
    builder.WriteTo(dir.path() / ("run-20260101_000000-" + id) / ("run-" + id + ".wandb"));
  }
  RunStore store(dir.path());
  store.Start();
  const auto jobs = GroupJobs(store.Runs(), WallSeconds());
  store.Stop();
  ASSERT_EQ(jobs.size(), 1u);
  std::vector<std::string> names;
  for (const auto& node : jobs[0].nodes) names.push_back(node.name);
  EXPECT_EQ(names, (std::vector<std::string>{"node 0 (h)", "node 2 (h)", "node 2 (h) · r2again",
                                             "node 10 (h)", "node ? (h)", "node x (h)"}));
}

TEST(JobsMany, AJobOfMoreNodesThanChartedSaysSo) {
  test::TempDir dir("web-jobs-many");
  const size_t nodes = kMaxJobNodes + 2;
  for (size_t rank = 0; rank < nodes; ++rank) {
    const std::string id = fmt::format("n{}", rank);
    RunLogBuilder builder;
    builder.Header()
        .Run(id, id, kStart, "p", fmt::format("host{}", rank))
        .Job("big", std::to_string(rank), "h");
    for (int i = 0; i < 3; ++i) builder.Stats(kStart + i, {{"cpu", std::to_string(rank)}});
    builder.Exit(0, 3);
    builder.WriteTo(dir.path() / ("run-20260101_000000-" + id) / ("run-" + id + ".wandb"));
  }
  RunStore store(dir.path());
  store.Start();
  const json described = json::parse(DescribeJob(store, "big").body);
  EXPECT_EQ(described["node_count"], nodes);
  EXPECT_EQ(described["charted_nodes"], kMaxJobNodes);
  EXPECT_NE(described["warning"].get<std::string>().find("first 64"), std::string::npos);
  const auto response = JobSeries(store, "big", {{"key", "cpu"}});
  store.Stop();
  ASSERT_EQ(response.status, 200) << response.body;
  const json body = json::parse(response.body);
  ASSERT_EQ(body["nodes"].size(), kMaxJobNodes);
  EXPECT_FALSE(body["warning"].is_null());
  EXPECT_EQ(body["band"]["min_node"][0], 0);
  EXPECT_EQ(body["band"]["max_node"][0], kMaxJobNodes - 1);
  EXPECT_EQ(body["band"]["count"][0], kMaxJobNodes);
  EXPECT_LT(response.body.size(), 200'000u);
}

TEST(JobsHttp, RoutesEncodedIdsAndHostileQueries) {
  test::TempDir dir("web-jobs-http");
  for (const auto& [job, id] : std::vector<std::pair<std::string, std::string>>{
           {"a/b c%", "slash0"}, {"a/b c%", "slash1"}, {"4711", "plain"}}) {
    RunLogBuilder builder;
    builder.Header().Run(id, id, kStart, "p", "h").Job(job, id.substr(id.size() - 1), "h");
    for (int i = 0; i < 5; ++i) builder.Stats(kStart + i, {{"cpu", "5"}});
    builder.Exit(0, 5);
    builder.WriteTo(dir.path() / ("run-20260101_000000-" + id) / ("run-" + id + ".wandb"));
  }
  RunStore store(dir.path());
  store.Start();
  const Asset assets[] = {{"/index.html", "text/html; charset=utf-8", "<!doctype html>"}};
  DashboardServer server(store, ServeOptions{dir.path(), "127.0.0.1", 0, ""}, assets);
  ASSERT_TRUE(server.Bind().ok());
  std::thread serving([&] { server.Serve(); });
  httplib::Client client("127.0.0.1", server.port());
  client.set_url_encode(false);  // the paths below are sent as written
  client.set_read_timeout(10, 0);
  const auto get = [&](const std::string& path) -> std::pair<int, json> {
    auto response = client.Get(path.c_str());
    if (!response) return {0, nullptr};
    EXPECT_EQ(response->get_header_value("Content-Type"), "application/json") << path;
    return {response->status, json::parse(response->body, nullptr, false)};
  };

  const auto [list_status, list] = get("/api/jobs");
  EXPECT_EQ(list_status, 200);
  EXPECT_EQ(list["total"], 2);
  const auto [job_status, job] = get("/api/jobs/a%2Fb%20c%25");
  EXPECT_EQ(job_status, 200);
  EXPECT_EQ(job["job_id"], "a/b c%");
  EXPECT_EQ(job["node_count"], 2);
  const auto [series_status, series] = get("/api/jobs/a%2Fb%20c%25/series?key=cpu&width=50");
  EXPECT_EQ(series_status, 200);
  EXPECT_EQ(series["nodes"].size(), 2u);
  EXPECT_EQ(series["band"]["median"][0], 5);
  EXPECT_EQ(get("/api/jobs/4711/series?key=cpu").first, 200);

  const std::string huge(4000, '9');
  for (const std::string& bad : std::vector<std::string>{
           "/api/jobs/4711/series", "/api/jobs/4711/series?key=", "/api/jobs/4711/series?key=cpu&width=%00",
           "/api/jobs/4711/series?key=cpu&start=1e999", "/api/jobs/4711/series?key=cpu&end=" + huge,
           "/api/jobs/4711/series?key=" + huge, "/api/jobs/4711/series?key=cpu&width=-1",
           "/api/jobs?limit=x"}) {
    const auto [status, body] = get(bad);
    EXPECT_EQ(status, 400) << bad;
    EXPECT_TRUE(body.is_object() && body["error"].is_string()) << bad;
  }
  for (const std::string& missing : std::vector<std::string>{
           "/api/jobs/nope", "/api/jobs/nope/series?key=cpu", "/api/jobs/%2e%2e%2f%2e%2e/series?key=cpu",
           "/api/jobs/4711/series?key=gpu.0.gpu", "/api/jobs/%3Cscript%3E"}) {
    const auto [status, body] = get(missing);
    EXPECT_EQ(status, 404) << missing;
    EXPECT_TRUE(body.is_object() && body["error"].is_string()) << missing;
  }
  server.Stop();
  serving.join();
}

}  // namespace
}  // namespace runmon::web
