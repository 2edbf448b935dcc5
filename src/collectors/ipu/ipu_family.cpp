// The IPU family's factory: one collector in a lane of its own, available when python3 (for runmon's
// gcipuinfo helper) or gc-info is on the environment's PATH and the proc and sys roots are the host's own
// (under --root the host's IPUs and PIDs are not the tree's); nothing is started otherwise. Whether the
// module is there is known only once the helper runs: the collector then ends quietly, and `runmon info`
// (the probe, which asks the devices once) says why ("No module named 'gcipuinfo'") or gives W&B's
// metadata, ipu = {device_count, devices, vendor}. The helper and gc-info get runmon's environment
// (ctx.environment: PYTHONPATH is honoured).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "collectors/builtin.hpp"
#include "collectors/ipu/ipu_collector.hpp"
#include "host/child_process.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_track_process_tree", "PATH", "PYTHONPATH"};

// How long the probe waits for the devices: python3, the module's import and its device discovery.
constexpr double kProbeWaitSeconds = 8.0;

bool OnPath(std::string_view command, const std::string& search_path) {
  return std::holds_alternative<std::string>(FindExecutable(command, search_path));
}

IpuSourceStarters StartersFor(const CollectorContext& ctx, double interval_seconds) {
  const std::string search_path = ToolSearchPath(ctx);
  IpuSourceStarters starters;
  if (OnPath("python3", search_path)) {
    starters.helper = [start = ctx.start_streaming_tool, search_path,
                       environment = ToolEnvironment(ctx.environment),
                       warn = ctx.warn](std::shared_ptr<ipu::IpuAnswers> answers) {
      return ipu::StartHelperSource(start, search_path, environment, std::move(answers),
                                    [warn](const std::string& message) {
                                      if (warn) warn("ipu: " + message);
                                    });
    };
  }
  if (OnPath("gc-info", search_path)) {
    ipu::GcInfoOptions options;
    options.deadline_seconds = std::clamp(interval_seconds / 2, 0.5, 2.0);
    starters.gc_info = [run_tool = ctx.run_tool, search_path, environment = ToolEnvironment(ctx.environment),
                        options](std::shared_ptr<ipu::IpuAnswers> answers) {
      return ipu::StartGcInfoSource(run_tool, search_path, environment, std::move(answers), options);
    };
  }
  return starters;
}

// gcipuinfo and gc-info read this host's IPUs, and their user process ids are this host's PIDs: under
// another root (--root, fixture trees) they would describe a machine the tree is not.
std::optional<std::string> ForeignRootReason(const CollectorContext& ctx) {
  const HostPaths host = HostPaths::System();
  if (ctx.paths.proc == host.proc && ctx.paths.sys == host.sys) return std::nullopt;
  return "the proc and sys roots are not this host's own (--root): gcipuinfo and gc-info would read this "
         "host's IPUs";
}

std::string NoSourceReason(const CollectorContext& ctx) {
  return "neither python3 (for the gcipuinfo module) nor gc-info is on PATH (" + ToolSearchPath(ctx) + ")";
}

FamilyStart Start(const CollectorContext& ctx) {
  if (auto foreign = ForeignRootReason(ctx)) return FamilyStart{.absent_reason = *foreign};
  IpuOptions options;
  options.starters = StartersFor(ctx, ctx.settings.interval_seconds);
  if (!options.starters.helper && !options.starters.gc_info)
    return FamilyStart{.absent_reason = NoSourceReason(ctx)};
  options.paths = ctx.paths;
  options.pid = ctx.pid;
  options.whole_tree = ctx.settings.track_process_tree;
  options.publish_metadata = ctx.publish_metadata;
  options.monotonic_seconds =
      ctx.clocks.monotonic_seconds ? ctx.clocks.monotonic_seconds : Clocks::System().monotonic_seconds;
  SetIpuWaits(options, ctx.settings.interval_seconds);
  return FamilyStart::Of(MakeIpuCollector(std::move(options)));
}

Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  if (auto foreign = ForeignRootReason(ctx)) return Error{*foreign};
  IpuSourceStarters starters = StartersFor(ctx, ctx.settings.interval_seconds);
  if (!starters.helper && !starters.gc_info) return Error{NoSourceReason(ctx)};
  IpuReader reader(std::move(starters), Clocks::System().monotonic_seconds, kProbeWaitSeconds);
  auto devices = reader.Read(kProbeWaitSeconds);
  if (!devices.ok()) return Error{devices.error()};
  if (devices->empty()) return Error{"no IPU"};
  return DescribeIpuDevices(*devices);
}

}  // namespace

const CollectorFamily& ipu() {
  static constexpr CollectorFamily kFamily{
      .name = "ipu", .lane = "ipu", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
