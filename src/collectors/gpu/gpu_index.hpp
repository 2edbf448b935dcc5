// How GPUs of different vendors share the gpu.{i} keys without colliding. W&B numbers each vendor's GPUs
// from 0, so a host with an NVIDIA and an AMD GPU would write both as gpu.0. runmon's rule, from the
// kernel's trees alone (so it holds before any vendor library is loaded and is the same on every run of a
// host):
//   - NVIDIA GPUs take gpu.0 ... gpu.{n-1} in NVML's order, as W&B numbers them;
//   - AMD GPUs follow, gpu.{n} ... gpu.{n+m-1}, in DRM card-number order;
//   - NVIDIA's MIG instances, which runmon numbers after the GPUs, come after both: gpu.{n+m} ...
// where n counts the PCI functions the nvidia driver drives as a GPU (display or processing-accelerator
// class: NVSwitches, which it drives too, are bridges; a GPU passed through to a VM is bound to another
// driver and takes no index), and m the amdgpu cards the AMD family numbers, found by the same walk
// (AmdgpuCardNumbers), so the two families can never disagree on it. On a host with both vendors,
// gpu_count is n + m in both families' metadata.
#pragma once

#include <filesystem>
#include <vector>

#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon::gpu {

struct HostGpus {
  unsigned nvidia = 0;  // n above
  unsigned amd = 0;     // m above
};

HostGpus CountHostGpus(const HostPaths& paths);

// The N of every class/drm/cardN that is an AMD GPU driven by amdgpu, in card-number order: connectors
// (card0-DP-1), render nodes, cards of other vendors or of the radeon driver, and names the kernel never
// writes (card00) are not. An error when class/drm cannot be listed.
Result<std::vector<unsigned>> AmdgpuCardNumbers(const HostPaths& paths);

// class/drm/cardN/device under the sys root.
std::filesystem::path DrmCardDevice(const HostPaths& paths, unsigned card_number);

}  // namespace runmon::gpu
