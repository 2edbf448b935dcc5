// The dashboard's jobs (docs/serve-api.md, "Jobs"): the runs of a logdir grouped by the job id of their
// environment record (one run a node of a distributed job), a job's nodes and metric keys, and one metric
// across its nodes, as per-node lines and as the band of min / median / max with the nodes at the minimum
// (the straggler) and the maximum (runview/job_band.hpp computes it). Runs of no job are in no job.
//
// Odd cases: the id comes from the logs, so it is matched as it is (any bytes, any length) and never used
// as a path; ranks are strings, sorted as numbers where they are ones; two runs of one job with the same
// rank (a job requeued under its id) are both nodes, the later names made distinct by their run id; a job
// of more than kMaxJobNodes nodes charts its first kMaxJobNodes by rank and says so; a node whose log
// cannot be read stays listed with no data.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "web/api.hpp"
#include "web/run_store.hpp"

namespace runmon::web {

inline constexpr size_t kMaxJobNodes = 64;

struct JobNode {
  std::string dir;
  std::string run_name;
  std::string run_id;
  std::string rank;  // as the launcher gave it, maybe empty
  std::string name;  // "node 1 (gpu-b)", unique within the job
  std::string host;
  std::string state;
  std::optional<double> start;
  std::optional<double> duration;
};

struct JobSummary {
  std::string id;
  std::string name;             // the launcher's job name, when a node gave one
  std::string launcher;         // where the id came from ("slurm", ...), when a node said
  std::vector<JobNode> nodes;   // by rank, then directory
  std::optional<double> start;  // the earliest node's start
  std::optional<double> end;    // the latest node's start + duration
};

// The runs grouped into jobs, newest start first (then by id). `now_seconds` gives running runs' durations.
std::vector<JobSummary> GroupJobs(const std::vector<RunRow>& rows, double now_seconds);

ApiResponse ListJobs(const RunStore& store, const QueryParams& params);
ApiResponse DescribeJob(RunStore& store, std::string_view job_id);
ApiResponse JobSeries(RunStore& store, std::string_view job_id, const QueryParams& params);

}  // namespace runmon::web
