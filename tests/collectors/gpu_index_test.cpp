// The GPU index rule (collectors/gpu/gpu_index.hpp): which PCI functions count as each vendor's GPUs, so that
// NVIDIA's keys, AMD's after them and NVIDIA's MIG instances after both never collide.
#include "collectors/gpu/gpu_index.hpp"

#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon::gpu {
namespace {

using test::FixtureTree;

// A PCI function under bus/pci/devices, bound to `driver` (none: empty).
void AddPciFunction(FixtureTree& tree, const std::string& address, const std::string& vendor,
                    const std::string& pci_class, const std::string& driver) {
  const std::string device = "sys/devices/pci0000:00/" + address;
  tree.Write(device + "/vendor", vendor + "\n").Write(device + "/class", pci_class + "\n");
  tree.Mkdir("sys/bus/pci/devices");
  std::filesystem::create_directory_symlink("../../../devices/pci0000:00/" + address,
                                            tree.Path("sys/bus/pci/devices/" + address));
  if (driver.empty()) return;
  tree.Mkdir("sys/bus/pci/drivers/" + driver);
  std::filesystem::create_directory_symlink("../../../bus/pci/drivers/" + driver,
                                            tree.Path(device + "/driver"));
}

TEST(GpuIndex, CountsEachVendorsGpusBoundToItsDriver) {
  FixtureTree tree;
  AddPciFunction(tree, "0000:17:00.0", "0x10de", "0x030200", "nvidia");    // H100: 3D controller
  AddPciFunction(tree, "0000:18:00.0", "0x10de", "0x030000", "nvidia");    // a VGA GeForce
  AddPciFunction(tree, "0000:19:00.0", "0x10de", "0x068000", "nvidia");    // NVSwitch: a bridge, not a GPU
  AddPciFunction(tree, "0000:1a:00.0", "0x10de", "0x030200", "vfio-pci");  // passed through to a VM
  AddPciFunction(tree, "0000:1b:00.0", "0x10de", "0x040300", "snd_hda_intel");  // the GPU's HDMI audio
  AddPciFunction(tree, "0000:29:00.0", "0x1002", "0x038000", "amdgpu");         // MI250: display controller
  AddPciFunction(tree, "0000:2a:00.0", "0x1002", "0x120000", "amdgpu");  // processing accelerator class
  AddPciFunction(tree, "0000:2b:00.0", "0x1002", "0x030000", "radeon");  // an old card, not amdgpu's
  AddPciFunction(tree, "0000:2c:00.0", "0x1002", "0x030000", "");        // no driver bound
  AddPciFunction(tree, "0000:00:02.0", "0x8086", "0x030000", "i915");    // another vendor
  EXPECT_EQ(CountPciGpus(tree.paths(), GpuVendor::kNvidia), 2u);
  EXPECT_EQ(CountPciGpus(tree.paths(), GpuVendor::kAmd), 2u);
}

TEST(GpuIndex, NoPciTreeCountsNothing) {
  FixtureTree tree;
  EXPECT_EQ(CountPciGpus(tree.paths(), GpuVendor::kNvidia), 0u);
  tree.Write("sys/bus/pci/devices/0000:17:00.0/vendor", "garbage\n");  // unreadable facts: not counted
  EXPECT_EQ(CountPciGpus(tree.paths(), GpuVendor::kNvidia), 0u);
}

}  // namespace
}  // namespace runmon::gpu
