// Builds run logs for tests: W&B records (header, run, environment, stats, history, exit) with chosen
// values, written through runmon's LogWriter. Deterministic, so logs built here are stable fixtures for
// golden frames. WriteTestRun lays out a whole run directory the way `runmon run` names it, for the tests
// that find and open runs in a wandb directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::test {

class RunLogBuilder {
 public:
  RunLogBuilder& Header(const std::string& producer = "runmon 0.1.0") {
    records_.push_back(runlog::MakeHeaderRecord(producer));
    return *this;
  }
  RunLogBuilder& Run(const std::string& id, const std::string& name, double start_time,
                     const std::string& project = "demo", const std::string& host = "node-1") {
    runlog::RunInfo info;
    info.run_id = id;
    info.display_name = name;
    info.project = project;
    info.host = host;
    info.start_time = start_time;
    records_.push_back(runlog::MakeRunRecord(info));
    return *this;
  }
  RunLogBuilder& Environment(const std::string& program, const std::string& os = "Linux-6.1.0-x86_64") {
    wandb::Record record;
    auto* environment = record.mutable_environment();
    environment->set_program(program);
    environment->set_os(os);
    environment->set_host("node-1");
    environment->set_cpu_count(8);
    environment->set_cpu_count_logical(16);
    environment->mutable_memory()->set_total(64ull << 30);
    records_.push_back(std::move(record));
    return *this;
  }
  // An environment record naming the job the run is a node of (runmon's field 150), as `runmon run` writes
  // it under a launcher.
  RunLogBuilder& Job(const std::string& job_id, const std::string& node_rank, const std::string& host,
                     const std::string& launcher = "slurm") {
    wandb::Record record;
    auto* environment = record.mutable_environment();
    environment->set_host(host);
    auto* job = environment->mutable_job();
    job->set_job_id(job_id);
    job->set_node_rank(node_rank);
    job->set_launcher(launcher);
    records_.push_back(std::move(record));
    return *this;
  }
  // A stats record at `time` (seconds since the epoch) with the given key -> value_json items.
  RunLogBuilder& Stats(double time, const std::vector<std::pair<std::string, std::string>>& items) {
    wandb::Record record;
    auto* stats = record.mutable_stats();
    runlog::SetTimestamp(time, *stats->mutable_timestamp());
    for (const auto& [key, value] : items) {
      auto* item = stats->add_item();
      item->set_key(key);
      item->set_value_json(value);
    }
    records_.push_back(std::move(record));
    return *this;
  }
  // Console output (an OutputRawRecord) at `time`.
  RunLogBuilder& Output(double time, bool is_stderr, const std::string& text) {
    records_.push_back(runlog::MakeOutputRawRecord(is_stderr, text, time));
    return *this;
  }
  RunLogBuilder& History(int64_t step, const std::vector<std::pair<std::string, std::string>>& items) {
    wandb::Record record;
    auto* history = record.mutable_history();
    history->mutable_step()->set_num(step);
    auto* step_item = history->add_item();
    step_item->set_key("_step");
    step_item->set_value_json(std::to_string(step));
    for (const auto& [key, value] : items) {
      auto* item = history->add_item();
      item->set_key(key);
      item->set_value_json(value);
    }
    records_.push_back(std::move(record));
    return *this;
  }
  RunLogBuilder& Exit(int code, double runtime) {
    records_.push_back(runlog::MakeExitRecord(code, runtime));
    return *this;
  }

  const std::vector<wandb::Record>& records() const { return records_; }

  // Writes the log (the file must not exist); the parent directory is created.
  void WriteTo(const std::filesystem::path& path) const {
    std::filesystem::create_directories(path.parent_path());
    auto writer = runlog::LogWriter::Create(path);
    if (!writer) throw std::runtime_error(writer.error());
    for (const auto& record : records_) {
      const auto status = writer->Append(record.SerializeAsString());
      if (!status) throw std::runtime_error(status.error());
    }
  }

 private:
  std::vector<wandb::Record> records_;
};

// The start time (seconds since the epoch) of the runs WriteTestRun writes.
inline constexpr double kTestRunStart = 1'780'000'000;

// Writes wandb_dir/run-STAMP-ID/run-ID.wandb and returns its path: run ID named "name-ID", started at
// kTestRunStart, with `samples` stats records a second apart ("cpu" = i % 100), and, if `exited`, an exit
// record (code 0, runtime `samples` seconds); without one, the run reads as crashed (or running while a
// writer holds the log).
inline std::filesystem::path WriteTestRun(const std::filesystem::path& wandb_dir, const std::string& stamp,
                                          const std::string& id, bool exited, int samples = 3) {
  const std::filesystem::path log = wandb_dir / ("run-" + stamp + "-" + id) / ("run-" + id + ".wandb");
  RunLogBuilder builder;
  builder.Header().Run(id, "name-" + id, kTestRunStart);
  for (int i = 0; i < samples; ++i) builder.Stats(kTestRunStart + i, {{"cpu", std::to_string(i % 100)}});
  if (exited) builder.Exit(0, samples);
  builder.WriteTo(log);
  return log;
}

}  // namespace runmon::test
