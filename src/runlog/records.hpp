// Builds the records runmon writes, in the order of run-log-format.md 4.4: header, run, environment,
// stats (one per sample), exit, final. Values become W&B's value_json: the shortest JSON number that
// reads back as the same double ("12.5", "4", "1e+21"); non-finite values are left out, because plain
// JSON has no NaN or infinity.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.hpp"
#include "core/sample.hpp"
#include "runlog/stats_values.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::runlog {

struct RunInfo {
  std::string run_id;
  std::string project;
  std::string display_name;
  std::string host;
  double start_time = 0;  // seconds since the Unix epoch
  std::vector<std::string> tags;
};

// Seconds since the epoch as a protobuf Timestamp (nanoseconds rounded, 0 <= nanos < 1e9; NaN is 0 and
// anything outside years 1 to 9999 is clamped to them).
void SetTimestamp(double seconds, google::protobuf::Timestamp& timestamp);

wandb::Record MakeHeaderRecord(const std::string& producer);
wandb::Record MakeRunRecord(const RunInfo& run);
// From runmon's metadata (wandb-metadata.json's layout: `runmon info`); keys W&B does not know are left
// out of the record. Errors when the JSON does not fit the record's fields.
Result<wandb::Record> MakeEnvironmentRecord(const nlohmann::json& metadata, const std::string& writer_id);
// Fills `record` (cleared first) with the sample as a stats record; false when no value is finite. With a
// `label` (W&B's x_label), every key ends with "/l:<label>", as W&B's shared mode writes them.
bool FillStatsRecord(const Sample& sample, wandb::Record& record, std::string_view label = {});
// A config record setting one key to a JSON value (W&B's ConfigItem: key and value_json), as runmon writes
// facts learnt during the run (the OpenMetrics index -> labels table).
wandb::Record MakeConfigRecord(const std::string& key, const nlohmann::json& value);
wandb::Record MakeExitRecord(int exit_code, double runtime_seconds);
// Console output of the command (W&B's OutputRawRecord): `text` as the terminal got it (valid UTF-8,
// newlines, `\r` and escape codes included), from stderr or stdout, at `timestamp`.
wandb::Record MakeOutputRawRecord(bool is_stderr, std::string_view text, double timestamp);
wandb::Record MakeFinalRecord();
// One row of the command's own metrics (W&B's HistoryRecord): its items (key, value_json) and the three
// W&B's core adds, _step, _runtime (seconds since the run started) and _timestamp (seconds since the
// epoch), with step.num the step.
using JsonItems = std::vector<std::pair<std::string, std::string>>;
wandb::Record MakeHistoryRecord(int64_t step, double runtime_seconds, double timestamp,
                                const JsonItems& items);
// The bytes of that history record without its num and _info, written directly rather than through message
// objects (rows come by the 100,000 a second): what MakeHistoryRecord's record serialises to, less those
// two fields, which RunRecorder::AddEncodedUnlessBehind appends as it queues it (protobuf takes fields in
// any order). Keys and values must be valid UTF-8; they are not checked here.
struct JsonItemView {
  std::string_view key;
  std::string_view value_json;
};
std::string EncodeHistoryRecord(int64_t step, double runtime_seconds, double timestamp,
                                std::span<const JsonItemView> items);
// The bytes of FillStatsRecord's record for `sample` (and `label`) without num and _info, written directly
// (the recorder writes one a sample, and building the message to serialise it costs more than the bytes):
// what that record serialises to, field for field, less those two fields, which
// RunRecorder::AddEncodedStats appends. Empty when no value is finite (FillStatsRecord's false). `encoded`,
// when given, gets what the summary index takes from the record (its items are left empty for a record
// past 4 GiB, which the index then reads back).
std::string EncodeStatsRecord(const Sample& sample, std::string_view label = {},
                              EncodedStatsItems* encoded = nullptr);
// The run's summary (W&B's SummaryRecord): each key's value_json as an update.
wandb::Record MakeSummaryRecord(const JsonItems& items);

// value_json for a number; empty when it is not finite.
std::string FormatValueJson(double value);

}  // namespace runmon::runlog
