// Fuzzes the dashboard's API with hostile query parameters: the input is split at '&' and '=' into
// parameters (any bytes, repeated names, no value) and given to the runs list, a run's description, chart
// data and CSV, and a run's console lines (the run named by `run`, else the first) over a small logdir made
// once (two runs with system and logged metrics, console output on both streams, colours, a long line).
// Checks: every answer is 200, 400 or 404; JSON answers parse as JSON; a chart or console answer stays under
// 200 KB; an error has a message; console lines come in order, within the [prev, next) they claim.

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
#include "web/console_api.hpp"

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
    const std::string line = i % 500 == 250 ? std::string(70000, 'x') + "\n"
                             : i % 7 == 0   ? "\x1b[31merror\x1b[0m at step " + std::to_string(i) + "\n"
                                            : "step " + std::to_string(i) + "\r\x1b[2K";
    (void)writer->Append(
        runmon::runlog::MakeOutputRawRecord(i % 3 == 0, line, 1.78e9 + i).SerializeAsString());
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
  const auto console =
      runmon::web::ConsoleLines(store, run != params.end() ? run->second : "run-20260101_000000-aaa", params);
  const auto lines = runmon::fuzz::CheckApiJson(console);
  FUZZ_CHECK(console.body.size() <= runmon::web::kMaxConsoleBytes);
  if (console.status == 200) {
    const uint64_t prev = lines["prev"];
    const uint64_t next = lines["next"];
    FUZZ_CHECK(prev <= next);
    uint64_t last = prev;
    for (const auto& line : lines["lines"]) {
      const uint64_t number = line["n"];
      FUZZ_CHECK(number >= last && number < next);
      last = number + 1;
    }
  }
  return 0;
}
