// Fuzzes the dashboard's jobs API with hostile job ids and query parameters: the input's first line is a
// job id (any bytes), the rest is split at '&' and '=' into parameters, and both go to the jobs list, a
// job's description and its series, and the series of the one real job of several nodes, over a small
// logdir made once (a job of three nodes started apart, one missing samples; a job whose id holds "/"; a
// run of no job). Checks: every answer is 200, 400 or 404 with JSON (an error has a message); a series stays
// under 200 KB, its band's columns and nodes' values are as long as its times, min <= median <= max, and
// every node named exists.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "serve_fuzz_store.hpp"
#include "web/jobs.hpp"

namespace {

constexpr double kStart = 1.78e9;

void WriteNode(const std::filesystem::path& logdir, const std::string& id, const std::string& job,
               const std::string& rank, double delay, int samples, int skip_every) {
  const auto log = logdir / ("run-20260101_000000-" + id) / ("run-" + id + ".wandb");
  std::filesystem::create_directories(log.parent_path());
  auto writer = runmon::runlog::LogWriter::Create(log);
  if (!writer) return;
  runmon::runlog::RunInfo info;
  info.run_id = id;
  info.display_name = "run " + id;
  info.host = "host-" + id;
  info.start_time = kStart + delay;
  (void)writer->Append(runmon::runlog::MakeHeaderRecord("runmon 0.1.0").SerializeAsString());
  (void)writer->Append(runmon::runlog::MakeRunRecord(info).SerializeAsString());
  if (!job.empty()) {
    runmon::wandb::Record environment;
    auto* identity = environment.mutable_environment()->mutable_job();
    identity->set_job_id(job);
    identity->set_node_rank(rank);
    (void)writer->Append(environment.SerializeAsString());
  }
  for (int i = 0; i < samples; ++i) {
    if (skip_every > 0 && i % skip_every == 0) continue;
    runmon::wandb::Record record;
    auto* stats = record.mutable_stats();
    runmon::runlog::SetTimestamp(kStart + delay + i, *stats->mutable_timestamp());
    for (const char* key : {"cpu", "gpu.0.gpu"}) {
      auto* item = stats->add_item();
      item->set_key(key);
      item->set_value_json(std::to_string((i * 37 + static_cast<int>(delay * 10)) % 101));
    }
    (void)writer->Append(record.SerializeAsString());
  }
}

runmon::web::RunStore& Store() {
  return runmon::fuzz::StartedRunStore("runmon-jobs-fuzz", [](const std::filesystem::path& dir) {
    WriteNode(dir, "n0", "j", "0", 0, 3000, 0);
    WriteNode(dir, "n1", "j", "1", 0.3, 3000, 7);
    WriteNode(dir, "n2", "j", "2", 0.6, 2000, 0);
    WriteNode(dir, "s0", "x/y", "", 5, 10, 0);
    WriteNode(dir, "solo", "", "", 0, 10, 0);
  });
}

// A job's series: small, every column and every node's values as long as the times, min <= median <= max,
// and the nodes named at the minimum and maximum among the nodes listed (and counted among them).
void CheckSeries(const runmon::web::ApiResponse& response) {
  const nlohmann::json body = runmon::fuzz::CheckApiJson(response);
  if (response.status != 200) return;
  FUZZ_CHECK(response.body.size() < 200 * 1000);
  const nlohmann::json& band = body.at("band");
  const nlohmann::json& nodes = body.at("nodes");
  const size_t points = band.at("t").size();
  for (const char* column : {"min", "median", "max", "min_node", "max_node", "count"})
    FUZZ_CHECK(band.at(column).size() == points);
  for (const auto& node : nodes) FUZZ_CHECK(node.at("values").size() == points);
  for (size_t i = 0; i < points; ++i) {
    const auto& min = band["min"][i];
    const auto& median = band["median"][i];
    const auto& max = band["max"][i];
    if (min.is_number() && median.is_number() && max.is_number()) {
      FUZZ_CHECK(min.get<double>() <= median.get<double>() && median.get<double>() <= max.get<double>());
    }
    const auto count = band["count"][i].get<int64_t>();
    FUZZ_CHECK(count >= 0 && static_cast<size_t>(count) <= nodes.size());
    if (count == 0) continue;
    for (const char* named : {"min_node", "max_node"}) {
      const auto node = band[named][i].get<int64_t>();
      FUZZ_CHECK(node >= 0 && static_cast<size_t>(node) < nodes.size());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  const size_t newline = std::min(text.find('\n'), text.size());
  const std::string job(text.substr(0, newline));
  const std::string_view query = newline < text.size() ? text.substr(newline + 1) : std::string_view();
  const runmon::web::QueryParams params = runmon::fuzz::QueryFromBytes(query);
  auto& store = Store();
  runmon::fuzz::CheckApiJson(runmon::web::ListJobs(store, params));
  runmon::fuzz::CheckApiJson(runmon::web::DescribeJob(store, job));
  CheckSeries(runmon::web::JobSeries(store, job, params));
  CheckSeries(runmon::web::JobSeries(store, "j", params));
  return 0;
}
