// The PCI scan behind the GPU index rule (gpu_index.hpp): each function's vendor, class and bound driver.
// A function whose files cannot be read is not counted (a partial tree counts what it shows).
#include "collectors/gpu/gpu_index.hpp"

#include <filesystem>
#include <string_view>
#include <system_error>

#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon::gpu {
namespace {

struct VendorIds {
  std::string_view vendor_id;  // as sysfs writes it
  std::string_view driver;
};

VendorIds IdsOf(GpuVendor vendor) {
  return vendor == GpuVendor::kNvidia ? VendorIds{"0x10de", "nvidia"} : VendorIds{"0x1002", "amdgpu"};
}

std::string Trimmed(const std::filesystem::path& path) {
  auto text = ReadFileToString(path);
  return text ? std::string(text::Trim(*text)) : std::string();
}

// PCI class 0x03xxxx (display controller) or 0x12xxxx (processing accelerator).
bool IsGpuClass(std::string_view pci_class) {
  return pci_class.starts_with("0x03") || pci_class.starts_with("0x12");
}

}  // namespace

unsigned CountPciGpus(const HostPaths& paths, GpuVendor vendor) {
  const VendorIds ids = IdsOf(vendor);
  const std::filesystem::path devices = paths.Sys("bus/pci/devices");
  auto names = ListDirectory(devices);
  if (!names) return 0;
  unsigned count = 0;
  for (const auto& name : *names) {
    const std::filesystem::path device = devices / name;
    if (Trimmed(device / "vendor") != ids.vendor_id || !IsGpuClass(Trimmed(device / "class"))) continue;
    std::error_code error;
    const auto driver = std::filesystem::read_symlink(device / "driver", error);
    if (!error && driver.filename() == ids.driver) ++count;
  }
  return count;
}

}  // namespace runmon::gpu
