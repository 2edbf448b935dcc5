// A run's metadata records and wandb-metadata.json: see run_metadata.hpp.
#include "run_api/run_metadata.hpp"

#include <google/protobuf/util/time_util.h>

#include "runlog/records.hpp"
#include "runlog/run_directory.hpp"

namespace runmon {

void AddProgramFields(nlohmann::json& metadata, double start_time, const std::vector<std::string>& command,
                      const std::string& executable) {
  google::protobuf::Timestamp started;
  runlog::SetTimestamp(start_time, started);
  metadata["startedAt"] = google::protobuf::util::TimeUtil::ToString(started);
  if (!command.empty()) {
    metadata["program"] = runlog::ToValidUtf8(command.front());
    nlohmann::json args = nlohmann::json::array();
    for (size_t i = 1; i < command.size(); ++i) args.push_back(runlog::ToValidUtf8(command[i]));
    metadata["args"] = args;
    metadata["executable"] = runlog::ToValidUtf8(executable);
  }
  std::error_code cwd_error;
  if (auto cwd = std::filesystem::current_path(cwd_error); !cwd_error) {
    metadata["root"] = runlog::ToValidUtf8(cwd.string());
  }
}

RunMetadata::RunMetadata(nlohmann::json metadata, std::string writer_id, runlog::RunRecorder& recorder,
                         std::filesystem::path file, Warn warn)
    : metadata_(std::move(metadata)),
      writer_id_(std::move(writer_id)),
      recorder_(recorder),
      file_(std::move(file)),
      warn_(std::move(warn)) {}

std::shared_ptr<RunMetadata> RunMetadata::Record(nlohmann::json metadata, const std::string& writer_id,
                                                 runlog::RunRecorder& recorder, std::filesystem::path file,
                                                 Warn warn) {
  if (auto environment = runlog::MakeEnvironmentRecord(metadata, writer_id)) {
    recorder.Add(*environment);
  } else {
    warn(environment.error());
  }
  metadata["writerId"] = writer_id;
  auto recorded = std::make_shared<RunMetadata>(std::move(metadata), writer_id, recorder, std::move(file),
                                                std::move(warn));
  recorded->WriteFile();
  return recorded;
}

void RunMetadata::Connect(CollectorContext& ctx) {
  auto self = shared_from_this();
  ctx.publish_metadata = [self](const nlohmann::json& more) { self->Publish(more); };
  ctx.publish_config = [self](const std::string& key, const nlohmann::json& value) {
    self->PublishConfig(key, value);
  };
}

void RunMetadata::Close() {
  std::lock_guard lock(mutex_);
  open_ = false;
}

void RunMetadata::Publish(const nlohmann::json& more) {
  std::lock_guard lock(mutex_);
  if (!open_) return;
  if (auto environment = runlog::MakeEnvironmentRecord(more, writer_id_)) {
    recorder_.Add(*environment);
  } else {
    warn_(environment.error());
  }
  metadata_.merge_patch(more);
  WriteFile();
}

void RunMetadata::PublishConfig(const std::string& key, const nlohmann::json& value) {
  std::lock_guard lock(mutex_);
  if (!open_) return;
  auto record = runlog::MakeConfigRecord(key, value);
  recorder_.Add(record);
}

void RunMetadata::WriteFile() {
  if (auto status = runlog::WriteFileAtomically(file_, metadata_.dump(2) + "\n"); !status)
    warn_(status.error());
}

}  // namespace runmon
