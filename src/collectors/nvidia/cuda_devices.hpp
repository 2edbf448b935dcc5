// CUDA_VISIBLE_DEVICES, read the way the CUDA runtime reads it: a comma-separated list of device indices,
// GPU UUIDs (or unique prefixes of them, "GPU-" included), MIG UUIDs ("MIG-<uuid>") or legacy MIG names
// ("MIG-GPU-<uuid>/<gpu instance>/<compute instance>"); whitespace around entries is ignored; the list ends
// at the first entry that is not valid (CUDA ignores everything from there on); an empty value hides every
// device. Pure functions: the mapping to NVML's devices takes their identities as input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon {

struct CudaDeviceSelector {
  enum class Kind { kIndex, kUuid, kMigUuid, kLegacyMig };
  Kind kind = Kind::kIndex;
  unsigned index = 0;  // kIndex
  std::string uuid;    // kUuid: "GPU-..." (possibly a prefix); kMigUuid: "MIG-..."; kLegacyMig: "GPU-..."
  unsigned gpu_instance = 0;      // kLegacyMig
  unsigned compute_instance = 0;  // kLegacyMig
};

// nullopt when the variable is unset (every device visible); an empty list when nothing is visible.
std::optional<std::vector<CudaDeviceSelector>> ParseCudaVisibleDevices(std::optional<std::string_view> value);

// What NVML says about one device the collector reports (a GPU, or a MIG instance of one).
struct NvmlDeviceIdentity {
  unsigned nvml_index = 0;  // of the GPU (the parent, for a MIG instance)
  std::string uuid;         // "GPU-..." or, for a MIG instance, "MIG-..."
  bool is_mig = false;
  bool mig_enabled = false;              // a GPU in MIG mode: CUDA shows its instances, not the GPU itself
  std::string parent_uuid;               // for a MIG instance
  std::optional<unsigned> gpu_instance;  // for a MIG instance, when NVML says
  std::optional<unsigned> compute_instance;
};

// The CUDA ordinal each device has for the run (its position among the visible devices), or nullopt when
// CUDA cannot see it. Index selectors name GPUs in NVML's order (PCI bus order: what CUDA uses with
// CUDA_DEVICE_ORDER=PCI_BUS_ID, and with identical GPUs). A UUID prefix that matches more than one device,
// or none, ends the list like an invalid entry; so does a device listed twice. Index and GPU-UUID selectors
// match GPUs (not MIG instances, not GPUs in MIG mode, which CUDA does not show), MIG selectors match MIG
// instances. Pass every device NVML enumerates, not only the ones reported, or the ordinals shift.
std::vector<std::optional<unsigned>> MapCudaOrdinals(
    const std::optional<std::vector<CudaDeviceSelector>>& selectors,
    const std::vector<NvmlDeviceIdentity>& devices);

}  // namespace runmon
