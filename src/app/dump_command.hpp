// `runmon dump FILE|RUNDIR [--follow] [--format jsonl|csv]`: prints a run log's records as JSON lines
// (index, offset, end, length, record_type and the record as protobuf JSON with W&B's field names), or its
// stats records as CSV, one column per key. Damage the reader skips is reported on stderr and makes the exit
// status 1; a torn tail is only noted. --follow keeps reading as the log grows and ends after the exit
// record.
#pragma once

#include <string>

namespace runmon {

struct DumpOptions {
  std::string path;
  bool follow = false;
  std::string format = "jsonl";
};

int RunDumpCommand(const DumpOptions& options);

}  // namespace runmon
