// What every collector family is started with: where the host's trees are (HostPaths), the settings, the
// facts detected once at start-up, the clocks, the monitored process, the environment (injected: no
// collector reads it itself) and where a collector hands over what it learns (metadata, config items,
// warnings). Nothing here is Linux's own: a family on another platform reads the fields it needs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collectors/collector.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "collectors/linux/cgroup_limits.hpp"
#include "host/streaming_tool.hpp"
#include "host/tool_runner.hpp"

namespace runmon {

struct HostFacts {
  unsigned logical_cpus = 0;  // online (else present) logical CPUs (0 when unknown)
  uint64_t memory_total_bytes = 0;
  CgroupLimits cgroup;  // empty with x_stats_no_cgroup
  long clock_ticks_per_second = 100;
  long page_size_bytes = 4096;
  gpu::HostGpus gpus;  // each vendor's GPUs, for the GPU index rule (gpu/gpu_index.hpp)
};

// statvfs of one path, in bytes.
struct FilesystemUsage {
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t available_bytes = 0;  // to unprivileged users (f_bavail)
};
using FilesystemStatFunction = std::function<Result<FilesystemUsage>(const std::string& path)>;
Result<FilesystemUsage> StatFilesystem(const std::string& path);

// How one remote-write destination keeps up, as the app's remote writer reports it (runmon.remoteWrite.*).
struct RemoteWriteCounts {
  uint64_t pending_samples = 0;
  double oldest_pending_age_seconds = 0;  // 0 when nothing is pending
  uint64_t sent_samples = 0;              // since runmon started
  uint64_t dropped_samples = 0;           // likewise
};

struct CollectorContext {
  HostPaths paths;
  Settings settings;
  HostFacts facts;
  Clocks clocks;
  std::optional<long> pid;  // the monitored process, when process metrics are on
  // runmon samples from inside the process it monitors (the in-process API, <runmon/run.hpp>): its own cost
  // cannot be told apart from the program's, so the self family reports none (a figure that would be the
  // whole program's must not be published as runmon's).
  bool shares_monitored_process = false;
  FilesystemStatFunction stat_filesystem = StatFilesystem;
  // runmon's own environment, read once by the app: a collector never calls getenv (tests inject it).
  std::map<std::string, std::string> environment;
  // Accelerators: the run's CUDA_VISIBLE_DEVICES (for CUDA ordinals), where a collector that learns facts
  // only once it runs (GPU names, UUIDs) hands them over, and where a collector that was asked for
  // explicitly but cannot start says why.
  std::optional<std::string> cuda_visible_devices;
  std::function<void(const nlohmann::json&)> publish_metadata;
  std::function<void(const std::string&)> warn;
  // Where a collector hands over a run config item (a W&B config record): the OpenMetrics collectors' index
  // -> labels tables under "_runmon.openmetrics" (spec/metrics.md A.2.7). May be null (runmon sample); called
  // from the collectors' lanes, one call at a time.
  std::function<void(const std::string& key, const nlohmann::json& value)> publish_config;
  // The host's tool runner, through which a family runs a vendor tool (rocm-smi once per tick,
  // neuron-monitor streaming): never a fork or a shell of its own, so that tests hand it fake tools. The
  // tool's search path is ToolSearchPath(ctx), the injected environment's PATH.
  std::function<Result<ToolOutput>(const ToolCommand&, const ToolLimits&)> run_tool = RunTool;
  std::function<std::unique_ptr<StreamingTool>(ToolCommand, StreamingToolOptions, StreamingTool::LineHandler,
                                               StreamingTool::WarningHandler)>
      start_streaming_tool = StartStreamingTool;
  // With --remote-write: each destination's counts, in the order of the flags (cheap, thread-safe). Null
  // otherwise, and the remote-write status collector is not started.
  std::function<std::vector<RemoteWriteCounts>()> remote_write_counts;
};

// The PATH of ctx.environment, or the system's default search path when it has none.
std::string ToolSearchPath(const CollectorContext& ctx);

// A variable of ctx.environment with a non-empty value, or nullopt.
std::optional<std::string> EnvironmentValue(const CollectorContext& ctx, const std::string& name);

// "NAME=VALUE" strings (environ's form) as a map; an entry without '=' is left out.
std::map<std::string, std::string> EnvironmentMap(const std::vector<std::string>& entries);

}  // namespace runmon
