// The files of the kernel's KFD (the ROCm compute driver) under /sys/class/kfd/kfd that the process share
// reads (kernel drivers/gpu/drm/amd/amdkfd/kfd_topology.c and kfd_process.c):
//   - topology/nodes/N/gpu_id: one number, the GPU's KFD id (0 for a CPU node);
//   - topology/nodes/N/properties: "name value" lines; location_id is the PCI bus and devfn
//     (pci_dev_id: bus << 8 | devfn) and domain the PCI domain, which together give the card's address;
//   - proc/PID/vram_GPUID: the VRAM bytes that process has allocated through KFD on that GPU.
// (proc/PID/stats_GPUID/cu_occupancy, on newer kernels, counts compute units busy with the process's waves at
// that instant: not a share of time, so it is not read.)
// On a partitioned GPU (MI300 in CPX mode) each partition is a node whose location_id has its partition
// number added (in the function bits on 6.5-6.7, in bits 28-31 since): the address is decoded from the low
// 16 bits, so partitions either name the device's address all together or a function that is no card; the
// caller treats an address claimed by several nodes as ambiguous.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon::amd {

// KFD's one-number files (gpu_id, vram_<gpu_id>) are sysfs numbers: amdgpu_sysfs_parse.hpp's
// ParseSysfsUnsigned.

struct KfdNodeProperties {
  std::optional<uint64_t> location_id;
  std::optional<uint64_t> domain;
};
Result<KfdNodeProperties> ParseKfdNodeProperties(std::string_view text);

// "0000:03:00.0" from location_id and domain; nullopt when either is missing.
std::optional<std::string> KfdNodePciAddress(const KfdNodeProperties& properties);

}  // namespace runmon::amd
