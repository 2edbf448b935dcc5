// The run's AMD GPU facts in W&B's wandb-metadata.json layout (metrics.md B §4, B §11.4): gpu_count, gpu
// (the first card's series, when no NVIDIA GPU comes first) and gpu_amd[] with W&B's fields in protobuf
// JSON spelling (id, uniqueId, vbiosVersion, performanceLevel, maxPower, series, model, vendor, sku,
// sclkRange, mclkRange), read from sysfs where W&B reads rocm-smi; plus runmon's own per-card facts under
// runmon.amd (key, card, PCI bus id, VRAM and GTT totals, KFD gpu id) and the driver version.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/amd/amd_card_reading.hpp"
#include "collectors/amd/amdgpu_discovery.hpp"
#include "collectors/gpu/gpu_index.hpp"
#include "host/host_paths.hpp"

namespace runmon::amd {

// gpu_count is the reported cards' count on a host without NVIDIA GPUs, else the host's (`host`: both
// vendors, as the NVIDIA family writes it too); `gpu` is the first card's series when no NVIDIA GPU comes
// first.
nlohmann::json DescribeCards(const HostPaths& paths, const std::vector<AmdCard>& cards, gpu::HostGpus host);

// The same from a vendor tool's cards, when sysfs shows none: keyed in the tool's order from `first_index`
// (the host's NVIDIA GPUs), those `device_ids` selects (unset: all).
nlohmann::json DescribeToolCards(const std::vector<ToolCard>& cards, unsigned first_index,
                                 const std::optional<std::vector<unsigned>>& device_ids);

}  // namespace runmon::amd
