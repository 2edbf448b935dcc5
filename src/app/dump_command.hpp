// `runmon dump FILE|RUNDIR [--follow] [--format jsonl|csv|openmetrics]`: prints a run log's records as JSON
// lines (index, offset, end, length, record_type and the record as protobuf JSON with W&B's field names), its
// stats records as CSV, one column per key, or its values as OpenMetrics text with timestamps for
// Prometheus' backfill (export/openmetrics_backfill.hpp; not with --follow). Damage the reader skips is
// reported on stderr and makes the exit status 1; a torn tail is only noted. --follow keeps reading as the
// log grows and ends after the exit record.
#pragma once

#include <cstddef>
#include <string>

#include "export/openmetrics_backfill.hpp"

namespace runmon {

struct DumpOptions {
  std::string path;
  bool follow = false;
  std::string format = "jsonl";
  // The values openmetrics holds at once (the command line keeps the default; tests make it small).
  size_t openmetrics_points_per_pass = kDefaultBackfillPointsPerPass;
};

int RunDumpCommand(const DumpOptions& options);

}  // namespace runmon
