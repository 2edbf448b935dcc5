// Fuzzes the dashboard's API with hostile query parameters: the input is split at '&' and '=' into
// parameters (any bytes, repeated names, no value) and given to the runs list, a run's description, chart
// data and CSV over a small logdir made once (two runs with system and logged metrics). Checks: every answer
// is 200, 400 or 404; JSON answers parse as JSON; a chart answer stays under 200 KB; an error has a message.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "serve_fuzz_store.hpp"
#include "web/api.hpp"

namespace {

void WriteRun(const std::filesystem::path& log, const std::string& id, int samples) {
  std::filesystem::create_directories(log.parent_path());
  auto writer = runmon::runlog::LogWriter::Create(log);
  if (!writer) return;
  runmon::runlog::RunInfo info;
  info.run_id = id;
  info.display_name = "run " + id;
  info.start_time = 1.78e9;
  (void)writer->Append(runmon::runlog::MakeHeaderRecord("runmon 0.1.0").SerializeAsString());
  (void)writer->Append(runmon::runlog::MakeRunRecord(info).SerializeAsString());
  for (int i = 0; i < samples; ++i) {
    runmon::wandb::Record record;
    auto* stats = record.mutable_stats();
    runmon::runlog::SetTimestamp(1.78e9 + i, *stats->mutable_timestamp());
    for (const char* key : {"cpu", "gpu.0.gpu", "gpu.1.gpu", "disk.sda.in", "odd.key.7"}) {
      auto* item = stats->add_item();
      item->set_key(key);
      item->set_value_json(std::to_string((i * 37) % 101));
    }
    (void)writer->Append(record.SerializeAsString());
    runmon::wandb::Record history;
    auto* step = history.mutable_history()->add_item();
    step->set_key("loss");
    step->set_value_json(std::to_string(1.0 / (i + 1)));
    (void)writer->Append(history.SerializeAsString());
  }
}

runmon::web::RunStore& Store() {
  return runmon::fuzz::StartedRunStore("runmon-serve-fuzz", [](const std::filesystem::path& dir) {
    WriteRun(dir / "run-20260101_000000-aaa" / "run-aaa.wandb", "aaa", 3000);
    WriteRun(dir / "run-20260102_000000-bbb" / "run-bbb.wandb", "bbb", 10);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  const runmon::web::QueryParams params = runmon::fuzz::QueryFromBytes(text);
  auto& store = Store();
  runmon::fuzz::CheckApiJson(runmon::web::ListRuns(store, params));
  const auto chart = runmon::web::ChartJson(store, params);
  runmon::fuzz::CheckApiJson(chart);
  FUZZ_CHECK(chart.body.size() <= 200 * 1000);
  const auto csv = runmon::web::ChartCsv(store, params);
  FUZZ_CHECK(csv.status == 200 || csv.status == 400 || csv.status == 404);
  const auto run = params.find("run");
  if (run != params.end()) runmon::fuzz::CheckApiJson(runmon::web::DescribeRun(store, run->second));
  return 0;
}
