// How GPUs of different vendors share the gpu.{i} keys without colliding. W&B numbers each vendor's GPUs
// from 0, so a host with an NVIDIA and an AMD GPU would write both as gpu.0. runmon's rule, from the PCI
// bus alone (so it holds before any vendor library is loaded and is the same on every run of a host):
//   - NVIDIA GPUs take gpu.0 ... gpu.{n-1} in NVML's order, as W&B numbers them;
//   - AMD GPUs follow, gpu.{n} ... gpu.{n+m-1}, in DRM card-number order;
//   - NVIDIA's MIG instances, which runmon numbers after the GPUs, come after both: gpu.{n+m} ...
// where n counts the PCI functions the nvidia driver drives as a GPU (display or processing-accelerator
// class: NVSwitches, which it drives too, are bridges) and m those the amdgpu driver drives. A GPU the
// driver has not bound (passed through to a VM) takes no index.
#pragma once

#include "host/host_paths.hpp"

namespace runmon::gpu {

enum class GpuVendor { kNvidia, kAmd };

// The GPUs of `vendor` on the PCI bus under the sys root (bus/pci/devices), bound to its driver.
unsigned CountPciGpus(const HostPaths& paths, GpuVendor vendor);

}  // namespace runmon::gpu
