// Reads decoded W&B records from a run log: LogReader's framing plus protobuf decoding into one reused
// Record. Stats records (nearly all of a run) are decoded into a kept StatsRecord whose items and strings
// are reused, because Record::Clear() would free the oneof's message and every record would allocate its
// hundred items again (that doubles the decoding time). A payload that does not decode as a Record (which
// W&B's tools stop at) is reported as damage and skipped, like damaged framing.
#pragma once

#include <memory>
#include <string>

#include "runlog/log_reader.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::runlog {

class RecordReader {
 public:
  explicit RecordReader(std::unique_ptr<LogSource> source) : log_(std::move(source)) {}

  // kRecord: record() and the position fields describe the next record.
  ReadOutcome Next();
  // The file header only (LogReader::ReadHeader).
  ReadOutcome ReadHeader() { return log_.ReadHeader(); }
  // Continues at a block (LogReader::SeekToBlock).
  void SeekToBlock(uint64_t block_offset) { log_.SeekToBlock(block_offset); }
  const wandb::Record& record() const { return record_; }
  uint64_t index() const { return index_; }  // 0-based count of records read before this one
  uint64_t offset() const { return raw_.offset; }
  uint64_t end() const { return raw_.end; }
  uint64_t length() const { return raw_.payload.size(); }
  std::string_view payload() const { return raw_.payload; }

  const LogReader& log() const { return log_; }
  const std::string& error() const { return log_.error(); }
  const std::vector<LogDamage>& damage() const { return log_.damage(); }

 private:
  bool Decode(std::string_view payload);

  LogReader log_;
  RawRecord raw_;
  wandb::Record record_;
  std::unique_ptr<wandb::StatsRecord> spare_stats_;
  uint64_t index_ = 0;
  uint64_t next_index_ = 0;
};

// The name of the record's type, as W&B's oneof names it ("stats", "run", ...); "unknown" when no type
// this build knows is set (a newer W&B's record).
std::string_view RecordTypeName(const wandb::Record& record);

// Protobuf JSON with the proto field names (int64 as strings, timestamps in RFC 3339), one line.
std::string RecordToJson(const google::protobuf::Message& message);

}  // namespace runmon::runlog
