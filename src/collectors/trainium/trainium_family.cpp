// The trainium family's factory: one collector, in a lane of its own, around one neuron-monitor started at
// the start of the run. neuron-monitor is RUNMON_NEURON_MONITOR when that names it, else found on the
// environment's PATH, else at /opt/aws/neuron/bin/neuron-monitor where the Neuron tools install it; with a
// --root other than the host's, only RUNMON_NEURON_MONITOR is used (neuron-monitor reads the real host,
// not the tree runmon is pointed at). No neuron-monitor: the family is absent, and says so. The config is
// the one x_stats_neuron_monitor_config_path names (as W&B takes it: the user's file, used as it is), else
// runmon's private file (neuron_monitor_config.hpp) in TMPDIR, or in /tmp when TMPDIR is unset or unusable
// (as Python's tempfile, W&B's, falls back). The probe gives `runmon info`
// the metadata of the first document of a neuron-monitor started for it (waiting up to 5 s, as W&B does).
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "collectors/builtin.hpp"
#include "collectors/trainium/neuron_document_reader.hpp"
#include "collectors/trainium/neuron_monitor_config.hpp"
#include "collectors/trainium/trainium_collector.hpp"
#include "collectors/trainium/trainium_metadata.hpp"
#include "host/child_process.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_neuron_monitor_config_path", "x_stats_track_process_tree",
                                          "RUNMON_NEURON_MONITOR", "PATH", "TMPDIR"};
constexpr const char* kNeuronToolsDirectory = "/opt/aws/neuron/bin";
constexpr double kProbeWaitSeconds = 5;

// neuron-monitor's path, or why there is none.
Result<std::string> FindNeuronMonitor(const CollectorContext& ctx) {
  if (auto explicit_path = EnvironmentValue(ctx, "RUNMON_NEURON_MONITOR")) {
    auto found = FindExecutable(*explicit_path, ToolSearchPath(ctx));
    if (auto* error = std::get_if<CommandLookupError>(&found)) {
      return Error{"RUNMON_NEURON_MONITOR: " + error->message};
    }
    return std::get<std::string>(found);
  }
  if (ctx.paths.sys != HostPaths::System().sys) {
    return Error{"neuron-monitor is only looked for on the host's own root (or set RUNMON_NEURON_MONITOR)"};
  }
  auto found = FindExecutable("neuron-monitor", ToolSearchPath(ctx) + ":" + kNeuronToolsDirectory);
  if (std::holds_alternative<CommandLookupError>(found)) {
    return Error{fmt::format("neuron-monitor not found on PATH or in {}", kNeuronToolsDirectory)};
  }
  return std::get<std::string>(found);
}

// The private config in the first of TMPDIR and /tmp where it can be made; the reasons of each when neither.
Result<trainium::PrivateConfigFile> CreatePrivateConfig(const CollectorContext& ctx,
                                                        double interval_seconds) {
  std::vector<std::filesystem::path> temp_dirs;
  if (auto tmpdir = EnvironmentValue(ctx, "TMPDIR"); tmpdir && !tmpdir->empty())
    temp_dirs.emplace_back(*tmpdir);
  if (temp_dirs.empty() || temp_dirs.front() != "/tmp") temp_dirs.emplace_back("/tmp");
  std::string reasons;
  for (const std::filesystem::path& temp_dir : temp_dirs) {
    auto file =
        trainium::PrivateConfigFile::Create(temp_dir, trainium::NeuronMonitorConfigText(interval_seconds));
    if (file) return file;
    reasons += (reasons.empty() ? "" : "; ") + file.error();
  }
  return Error{reasons};
}

struct ToolSetup {
  ToolCommand command;
  std::shared_ptr<void> config_file;  // the private file, when runmon wrote one
};

// neuron-monitor's command, for documents every `interval_seconds`.
Result<ToolSetup> PrepareTool(const CollectorContext& ctx, double interval_seconds) {
  auto executable = FindNeuronMonitor(ctx);
  if (!executable) return Error{executable.error()};
  ToolSetup setup;
  setup.command.executable = *executable;
  setup.command.environment = ToolEnvironment(ctx.environment);
  std::string config_path;
  if (auto it = ctx.settings.other.find("x_stats_neuron_monitor_config_path");
      it != ctx.settings.other.end() && !it->second.empty()) {
    config_path = it->second;
  } else {
    auto file = CreatePrivateConfig(ctx, interval_seconds);
    if (!file) return Error{"neuron-monitor config: " + file.error()};
    config_path = file->path().string();
    setup.config_file = std::make_shared<trainium::PrivateConfigFile>(std::move(*file));
  }
  setup.command.arguments = {"-c", config_path};
  return setup;
}

FamilyStart Start(const CollectorContext& ctx) {
  auto setup = PrepareTool(ctx, ctx.settings.interval_seconds);
  if (!setup) return FamilyStart{.absent_reason = setup.error()};
  auto reader = trainium::LoadDocumentReader();
  if (!reader) return FamilyStart{.absent_reason = reader.error()};
  TrainiumOptions options;
  options.command = std::move(setup->command);
  options.reader = std::move(*reader);
  options.keep_alive = std::move(setup->config_file);
  options.start_tool = ctx.start_streaming_tool;
  const TrainiumThresholds thresholds =
      ThresholdsForPeriod(trainium::NeuronMonitorPeriodSeconds(ctx.settings.interval_seconds));
  options.stale_after_seconds = thresholds.stale_after_seconds;
  options.hung_after_seconds = thresholds.hung_after_seconds;
  options.paths = ctx.paths;
  options.pid = ctx.pid;
  options.whole_tree = ctx.settings.track_process_tree;
  if (ctx.facts.memory_total_bytes > 0) {
    options.limits.host_memory_bytes = static_cast<double>(ctx.facts.memory_total_bytes);
  }
  options.monotonic_seconds =
      ctx.clocks.monotonic_seconds ? ctx.clocks.monotonic_seconds : Clocks::System().monotonic_seconds;
  options.publish_metadata = ctx.publish_metadata;
  options.warn = ctx.warn;
  return FamilyStart::Of(MakeTrainiumCollector(std::move(options)));
}

// One neuron-monitor, writing a document a second, until its first document that has the hardware section
// (or the wait is over).
Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  auto setup = PrepareTool(ctx, 1.0);
  if (!setup) return Error{setup.error()};
  auto loaded = trainium::LoadDocumentReader();
  if (!loaded) return Error{loaded.error()};
  std::shared_ptr<trainium::NeuronDocumentReader> reader = std::move(*loaded);
  std::mutex mutex;
  std::condition_variable arrived;
  std::optional<nlohmann::json> metadata;
  std::string last_warning;
  bool tool_ended = false;  // it exited (or could not be started): no document is coming soon
  auto tool = ctx.start_streaming_tool(
      setup->command, StreamingToolOptions{},
      [&, reader](std::string_view line) -> Status {
        auto document = reader->Read(line);
        if (!document) return Error{document.error()};
        auto described = trainium::DescribeTrainium(*document);
        std::lock_guard lock(mutex);
        if (described && !metadata) {
          metadata = std::move(described);
          arrived.notify_all();
        }
        return OkStatus();
      },
      [&](const std::string& message) {
        std::lock_guard lock(mutex);
        last_warning = message;
        // An exit (or a missing tool) ends the wait: no document is coming soon.
        if (message.find(": skipped a line") == std::string::npos) {
          tool_ended = true;
          arrived.notify_all();
        }
      });
  {
    std::unique_lock lock(mutex);
    arrived.wait_for(lock, std::chrono::duration<double>(kProbeWaitSeconds),
                     [&] { return metadata.has_value() || tool_ended; });
  }
  tool->Stop();
  std::lock_guard lock(mutex);
  if (metadata) return *metadata;
  if (!last_warning.empty()) return Error{last_warning};
  return Error{fmt::format("neuron-monitor wrote no document with neuron_hardware_info in {:.0f} s",
                           kProbeWaitSeconds)};
}

}  // namespace

const CollectorFamily& trainium() {
  static constexpr CollectorFamily kFamily{
      .name = "trainium", .lane = "trainium", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
