// The scans behind the GPU index rule (gpu_index.hpp): the PCI bus for NVIDIA's GPUs (each function's
// vendor, class and bound driver), the DRM cards for AMD's. A device whose files cannot be read is not
// counted (a partial tree counts what it shows).
#include "collectors/gpu/gpu_index.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon::gpu {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kNvidiaVendorId = 0x10de;
constexpr uint32_t kAmdVendorId = 0x1002;

std::optional<uint32_t> PciId(const fs::path& path) {
  return ReadOptionalParsed(path, amd::ParsePciId, nullptr);
}

bool BoundTo(const fs::path& device, std::string_view driver) {
  std::error_code error;
  const auto bound = fs::read_symlink(device / "driver", error);
  return !error && bound.filename() == driver;
}

// PCI class 0x03xxxx (display controller) or 0x12xxxx (processing accelerator).
bool IsGpuClass(std::optional<uint32_t> pci_class) {
  return pci_class && ((*pci_class >> 16) == 0x03 || (*pci_class >> 16) == 0x12);
}

}  // namespace

fs::path DrmCardDevice(const HostPaths& paths, unsigned card_number) {
  return paths.Sys(fmt::format("class/drm/card{}/device", card_number));
}

Result<std::vector<unsigned>> AmdgpuCardNumbers(const HostPaths& paths) {
  auto names = ListDirectory(paths.Sys("class/drm"));
  if (!names) return Error{names.error()};
  std::vector<unsigned> numbers;
  for (const auto& name : *names) {
    const auto number = amd::ParseCardName(name);
    if (!number) continue;
    const fs::path device = DrmCardDevice(paths, *number);
    if (PciId(device / "vendor") == kAmdVendorId && BoundTo(device, "amdgpu")) numbers.push_back(*number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

HostGpus CountHostGpus(const HostPaths& paths) {
  HostGpus gpus;
  if (auto cards = AmdgpuCardNumbers(paths)) gpus.amd = static_cast<unsigned>(cards->size());
  const fs::path devices = paths.Sys("bus/pci/devices");
  auto names = ListDirectory(devices);
  if (!names) return gpus;
  for (const auto& name : *names) {
    const fs::path device = devices / name;
    if (PciId(device / "vendor") == kNvidiaVendorId && IsGpuClass(PciId(device / "class")) &&
        BoundTo(device, "nvidia")) {
      ++gpus.nvidia;
    }
  }
  return gpus;
}

}  // namespace runmon::gpu
