// Decoding records read from a run log; JSON rendering for `runmon dump`.
#include "runlog/record_reader.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/wire_format_lite.h>

#include <nlohmann/json.hpp>

namespace runmon::runlog {
namespace {

using google::protobuf::internal::WireFormatLite;

// Whether a serialized Record has a stats field (number 7) at its top level; skips the other fields.
bool HasStatsField(std::string_view payload) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                                            static_cast<int>(payload.size()));
  while (const uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == wandb::Record::kStatsFieldNumber) return true;
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return false;
}

}  // namespace

bool RecordReader::Decode(std::string_view payload) {
  if (record_.has_stats()) spare_stats_.reset(record_.release_stats());
  if (!spare_stats_ || !HasStatsField(payload)) {
    return record_.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
  }
  record_.Clear();
  spare_stats_->Clear();  // keeps the items and their strings for reuse
  record_.set_allocated_stats(spare_stats_.release());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(payload.data()),
                                            static_cast<int>(payload.size()));
  return record_.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

ReadOutcome RecordReader::Next() {
  for (;;) {
    const ReadOutcome outcome = log_.Next(raw_);
    if (outcome != ReadOutcome::kRecord) return outcome;
    if (!Decode(raw_.payload)) {
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
    return nlohmann::json{{"error", status.ToString()}}.dump();
  }
  return out;
}

}  // namespace runmon::runlog
