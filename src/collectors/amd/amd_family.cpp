// The AMD family's factory: one collector over every amdgpu card in a lane of its own. The cards are found
// at start (a few small sysfs reads); with none, the family is absent and says why (runmon info:
// collectors.amd.reason), unless the driver is live and a vendor tool can name the cards. The probe gives
// `runmon info` the cards' metadata.
// The vendor tools (amd-smi, else rocm-smi) are looked for on the environment's PATH when the sys root is
// the host's own: under --root another tree is read, which the tools, reading /sys, would not see.
// RUNMON_AMD_TOOL_PATH names where to look instead, whatever the root (tests hand fake tools this way).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "collectors/amd/amd_collector.hpp"
#include "collectors/amd/amd_metadata.hpp"
#include "collectors/amd/amdgpu_discovery.hpp"
#include "collectors/builtin.hpp"
#include "collectors/gpu/gpu_device_ids.hpp"
#include "collectors/gpu/gpu_index.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_gpu_device_ids", "x_stats_track_process_tree",
                                          "RUNMON_AMD_TOOL_PATH", "PATH"};

// Where the vendor tools are looked for, or nullopt when they are not to be used.
std::optional<std::string> ToolSearchPathFor(const CollectorContext& ctx) {
  if (auto explicit_path = EnvironmentValue(ctx, "RUNMON_AMD_TOOL_PATH")) return explicit_path;
  if (ctx.paths.sys != HostPaths::System().sys) return std::nullopt;
  return ToolSearchPath(ctx);
}

AmdOptions OptionsFor(const CollectorContext& ctx) {
  AmdOptions amd;
  amd.paths = ctx.paths;
  amd.host_gpus = ctx.facts.gpus;
  amd.first_index = amd.host_gpus.nvidia;
  if (auto it = ctx.settings.other.find("x_stats_gpu_device_ids"); it != ctx.settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second)) amd.device_ids = *ids;  // validated with the settings
  }
  amd.pid = ctx.pid;
  amd.whole_tree = ctx.settings.track_process_tree;
  amd.publish_metadata = ctx.publish_metadata;
  amd.warn = ctx.warn;
  amd.interval_seconds = ctx.settings.interval_seconds;
  amd.monotonic_seconds =
      ctx.clocks.monotonic_seconds ? ctx.clocks.monotonic_seconds : Clocks::System().monotonic_seconds;
  if (auto search_path = ToolSearchPathFor(ctx)) {
    amd.start_tool = [run_tool = ctx.run_tool, path = *search_path, environment = ctx.environment,
                      interval = ctx.settings.interval_seconds]() -> std::unique_ptr<amd::AmdToolFallback> {
      auto tool = amd::AmdToolFallback::Find(run_tool, path, environment,
                                             amd::ToolFallbackOptions::ForInterval(interval));
      return tool ? std::move(*tool) : nullptr;
    };
  }
  return amd;
}

// Whether the tool's cards are the cards: the driver is live, sysfs shows none of its cards (not merely none
// selected) and amd-smi or rocm-smi is where the family would look (no process is started to find out).
bool ToolNamesTheCards(const CollectorContext& ctx, const amd::CardDiscovery& discovery) {
  if (!discovery.driver_live || discovery.amdgpu_cards > 0) return false;
  const auto path = ToolSearchPathFor(ctx);
  return path && amd::FindVendorTool(*path);
}

FamilyStart Start(const CollectorContext& ctx) {
  AmdOptions options = OptionsFor(ctx);
  amd::CardDiscovery discovery = amd::DiscoverCards(ctx.paths, options.first_index, options.device_ids);
  if (discovery.cards.empty() && !ToolNamesTheCards(ctx, discovery)) {
    return FamilyStart{.absent_reason = discovery.absent_reason};
  }
  return FamilyStart::Of(MakeAmdCollector(std::move(options), std::move(discovery)));
}

// No card in sysfs but a tool: one run of it, waited for (its deadline bounds the wait), names the cards.
Result<nlohmann::json> ProbeWithTool(const AmdOptions& options, const std::string& absent_reason) {
  auto tool = options.start_tool ? options.start_tool() : nullptr;
  if (!tool) return Error{absent_reason};
  const auto now = Clocks::System().monotonic_seconds;
  tool->Request(now());
  while (tool->InFlight()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (auto reading = tool->Latest(now()); reading && !reading->cards.empty()) {
    return amd::DescribeToolCards(reading->cards, options.first_index, options.device_ids);
  }
  return Error{absent_reason + "; " + std::string(amd::VendorToolName(tool->tool())) + ": " +
               tool->TakeFailure().value_or("no card")};
}

Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  const AmdOptions options = OptionsFor(ctx);
  const amd::CardDiscovery discovery = amd::DiscoverCards(ctx.paths, options.first_index, options.device_ids);
  if (discovery.cards.empty()) {
    if (ToolNamesTheCards(ctx, discovery)) return ProbeWithTool(options, discovery.absent_reason);
    return Error{discovery.absent_reason};
  }
  return amd::DescribeCards(ctx.paths, discovery.cards, options.host_gpus);
}

}  // namespace

const CollectorFamily& amd() {
  static constexpr CollectorFamily kFamily{
      .name = "amd", .lane = "amd", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
