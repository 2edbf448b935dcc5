// A run's metadata as W&B records it, shared by `runmon run` and the in-process API (run.hpp): the host's
// probe plus the program's fields (startedAt, program, args, executable, root) go into the run log as an
// environment record and into files/wandb-metadata.json. Facts a collector learns once it runs (GPU names
// and UUIDs, from its own lane) come later as a second environment record, which W&B's readers merge with
// the first, and a rewritten wandb-metadata.json; tables a collector keeps growing (the OpenMetrics index ->
// labels table) become config records, of which W&B's readers keep the last. Once closed, what collectors
// publish is dropped: a lane stuck in a driver call may outlive the sampler, and must then find nothing to
// write to.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/collector_context.hpp"
#include "runlog/run_recorder.hpp"

namespace runmon {

// W&B's fields of the program a run records: `command` is the program and its arguments (empty: none),
// `executable` the file it runs. Not valid UTF-8 is replaced.
void AddProgramFields(nlohmann::json& metadata, double start_time, const std::vector<std::string>& command,
                      const std::string& executable);

class RunMetadata : public std::enable_shared_from_this<RunMetadata> {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Records `metadata` (as the writer `writer_id`) and writes `file`; problems are warned about, never fatal.
  static std::shared_ptr<RunMetadata> Record(nlohmann::json metadata, const std::string& writer_id,
                                             runlog::RunRecorder& recorder, std::filesystem::path file,
                                             Warn warn);
  // Points ctx.publish_metadata and ctx.publish_config here (they hold this object).
  void Connect(CollectorContext& ctx);
  void Close();

  RunMetadata(nlohmann::json metadata, std::string writer_id, runlog::RunRecorder& recorder,
              std::filesystem::path file, Warn warn);

 private:
  void Publish(const nlohmann::json& more);
  void PublishConfig(const std::string& key, const nlohmann::json& value);
  void WriteFile();

  std::mutex mutex_;
  bool open_ = true;
  nlohmann::json metadata_;
  const std::string writer_id_;
  runlog::RunRecorder& recorder_;
  const std::filesystem::path file_;
  const Warn warn_;
};

}  // namespace runmon
