// Fuzzes ParseCudaVisibleDevices (CUDA_VISIBLE_DEVICES), MapCudaOrdinals and ParseGpuDeviceIds: no crash; the
// selectors are the leading entries of the value in order, an index one only from an entry of plain digits;
// and over a small synthetic machine (GPUs sharing a UUID prefix, a MIG-mode GPU with instances) the ordinals
// are distinct and exactly 0..k-1, with k no more than the selectors (every device listed for an unset
// value).
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/gpu/gpu_device_ids.hpp"
#include "collectors/nvidia/cuda_devices.hpp"
#include "fuzz_check.hpp"

namespace {

using runmon::CudaDeviceSelector;
using runmon::NvmlDeviceIdentity;

std::string_view TrimSpace(std::string_view s) {
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

NvmlDeviceIdentity Device(unsigned index, std::string uuid, bool is_mig = false, std::string parent = {},
                          unsigned gi = 0, unsigned ci = 0) {
  NvmlDeviceIdentity d;
  d.nvml_index = index;
  d.uuid = std::move(uuid);
  d.is_mig = is_mig;
  d.parent_uuid = std::move(parent);
  d.gpu_instance = gi;
  d.compute_instance = ci;
  return d;
}

const std::vector<NvmlDeviceIdentity>& Machine() {
  static const std::vector<NvmlDeviceIdentity> devices = {
      Device(0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"),
      Device(1, "GPU-8932f938-0a1b-4c2d-8e3f-000000000001"),
      Device(2, "GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"),
      Device(2, "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f", true, "GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
             1, 0),
      Device(2, "MIG-d9a47cfb-d1f2-d08c-b40e-0812b597ae69", true, "GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
             2, 0),
      Device(3, "GPU-00000000-0000-0000-0000-000000000000"),
  };
  return devices;
}

// Ordinals given are 0..k-1, each once; returns k.
size_t CheckOrdinals(const std::vector<std::optional<unsigned>>& ordinals, size_t devices) {
  FUZZ_CHECK(ordinals.size() == devices);
  std::vector<bool> seen(devices, false);
  size_t given = 0;
  for (const auto& ordinal : ordinals) {
    if (!ordinal) continue;
    FUZZ_CHECK(*ordinal < devices);
    FUZZ_CHECK(!seen[*ordinal]);
    seen[*ordinal] = true;
    ++given;
  }
  for (size_t i = 0; i < given; ++i) FUZZ_CHECK(seen[i]);
  return given;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view value = runmon::fuzz::AsText(data, size);
  // The same bytes as x_stats_gpu_device_ids: an error or indices that fit NVML's range.
  if (auto ids = runmon::ParseGpuDeviceIds(std::string(value)); ids && *ids) {
    for (unsigned id : **ids) FUZZ_CHECK(id <= 0xFFFF);
  }

  const auto selectors = runmon::ParseCudaVisibleDevices(value);
  FUZZ_CHECK(selectors.has_value());

  // Selector i comes from entry i of the comma-separated value.
  std::string_view rest = value;
  for (const auto& selector : *selectors) {
    const size_t comma = rest.find(',');
    const std::string_view entry = TrimSpace(rest.substr(0, comma));
    FUZZ_CHECK(!entry.empty());
    FUZZ_CHECK(!runmon::fuzz::HasSpace(entry));
    switch (selector.kind) {
      case CudaDeviceSelector::Kind::kIndex: {
        for (char c : entry) FUZZ_CHECK(c >= '0' && c <= '9');
        unsigned index = 0;
        const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
        FUZZ_CHECK(ec == std::errc() && end == entry.data() + entry.size() && index == selector.index);
        break;
      }
      case CudaDeviceSelector::Kind::kUuid:
        FUZZ_CHECK(entry == selector.uuid && entry.starts_with("GPU-"));
        break;
      case CudaDeviceSelector::Kind::kMigUuid:
        FUZZ_CHECK(entry == selector.uuid && entry.starts_with("MIG-") && entry.size() == 40);
        break;
      case CudaDeviceSelector::Kind::kLegacyMig:
        FUZZ_CHECK(entry.starts_with("MIG-" + selector.uuid + "/") && selector.uuid.starts_with("GPU-"));
        break;
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }

  const auto& devices = Machine();
  const size_t visible = CheckOrdinals(runmon::MapCudaOrdinals(selectors, devices), devices.size());
  FUZZ_CHECK(visible <= selectors->size());
  FUZZ_CHECK(CheckOrdinals(runmon::MapCudaOrdinals(std::nullopt, devices), devices.size()) == devices.size());
  return 0;
}
