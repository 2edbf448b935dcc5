// The AMD family's factory: one collector over every amdgpu card in a lane of its own. The cards are found
// at start (a few small sysfs reads); with none, the family is absent and says why (runmon info:
// collectors.amd.reason). The probe gives `runmon info` the cards' metadata.
#include <string_view>

#include "collectors/amd/amd_collector.hpp"
#include "collectors/amd/amd_metadata.hpp"
#include "collectors/amd/amdgpu_discovery.hpp"
#include "collectors/builtin.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "collectors/nvidia/cuda_devices.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_gpu_device_ids", "x_stats_track_process_tree"};

AmdOptions OptionsFor(const CollectorContext& ctx) {
  AmdOptions amd;
  amd.paths = ctx.paths;
  amd.first_index = gpu::CountPciGpus(ctx.paths, gpu::GpuVendor::kNvidia);
  if (auto it = ctx.settings.other.find("x_stats_gpu_device_ids"); it != ctx.settings.other.end()) {
    if (auto ids = ParseGpuDeviceIds(it->second)) amd.device_ids = *ids;  // validated with the settings
  }
  amd.pid = ctx.pid;
  amd.whole_tree = ctx.settings.track_process_tree;
  amd.publish_metadata = ctx.publish_metadata;
  amd.warn = ctx.warn;
  return amd;
}

FamilyStart Start(const CollectorContext& ctx) {
  AmdOptions options = OptionsFor(ctx);
  amd::CardDiscovery discovery = amd::DiscoverCards(ctx.paths, options.first_index, options.device_ids);
  if (discovery.cards.empty()) return FamilyStart{.absent_reason = discovery.absent_reason};
  return FamilyStart::Of(MakeAmdCollector(std::move(options), std::move(discovery)));
}

Result<nlohmann::json> Probe(const CollectorContext& ctx) {
  const AmdOptions options = OptionsFor(ctx);
  const amd::CardDiscovery discovery = amd::DiscoverCards(ctx.paths, options.first_index, options.device_ids);
  if (discovery.cards.empty()) return Error{discovery.absent_reason};
  return amd::DescribeCards(ctx.paths, discovery.cards, options.first_index);
}

}  // namespace

const CollectorFamily& amd() {
  static constexpr CollectorFamily kFamily{
      .name = "amd", .lane = "amd", .settings = kSettings, .start = Start, .probe = Probe};
  return kFamily;
}

}  // namespace runmon::collector_families
