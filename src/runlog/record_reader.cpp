// Decoding records read from a run log; JSON rendering for `runmon dump`.
#include "runlog/record_reader.hpp"

#include <google/protobuf/util/json_util.h>

#include <fmt/format.h>

namespace runmon::runlog {

ReadOutcome RecordReader::Next() {
  for (;;) {
    const ReadOutcome outcome = log_.Next(raw_);
    if (outcome != ReadOutcome::kRecord) return outcome;
    if (!record_.ParseFromArray(raw_.payload.data(), static_cast<int>(raw_.payload.size()))) {
      log_.ReportDamage(raw_.offset, raw_.end - raw_.offset, "a record that does not decode");
      continue;
    }
    index_ = next_index_++;
    return outcome;
  }
}

std::string_view RecordTypeName(const wandb::Record& record) {
  const auto* oneof = wandb::Record::descriptor()->FindOneofByName("record_type");
  const auto* field = wandb::Record::GetReflection()->GetOneofFieldDescriptor(record, oneof);
  if (field == nullptr) return "unknown";
  return field->name();
}

std::string RecordToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  if (auto status = google::protobuf::util::MessageToJsonString(message, &out, options); !status.ok()) {
    return fmt::format("{{\"error\":\"{}\"}}", status.ToString());
  }
  return out;
}

}  // namespace runmon::runlog
