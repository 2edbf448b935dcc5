// The GPU index rule (collectors/gpu/gpu_index.hpp): which PCI functions count as NVIDIA's GPUs and which
// DRM cards as AMD's, the walk the AMD family numbers its cards with, so that NVIDIA's keys, AMD's after
// them and NVIDIA's MIG instances after both never collide.
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

TEST(GpuIndex, NvidiaGpusAreThePciFunctionsItsDriverDrivesAsGpus) {
  FixtureTree tree;
  AddPciFunction(tree, "0000:17:00.0", "0x10de", "0x030200", "nvidia");         // H100: 3D controller
  AddPciFunction(tree, "0000:18:00.0", "0x10de", "0x030000", "nvidia");         // a VGA GeForce
  AddPciFunction(tree, "0000:19:00.0", "0x10de", "0x068000", "nvidia");         // NVSwitch: a bridge
  AddPciFunction(tree, "0000:1a:00.0", "0x10de", "0x030200", "vfio-pci");       // passed through to a VM
  AddPciFunction(tree, "0000:1b:00.0", "0x10de", "0x040300", "snd_hda_intel");  // the GPU's HDMI audio
  AddPciFunction(tree, "0000:00:02.0", "0x8086", "0x030000", "i915");           // another vendor
  AddPciFunction(tree, "0000:1c:00.0", "0x10de", "garbage", "nvidia");          // unreadable: not counted
  EXPECT_EQ(CountHostGpus(tree.paths()).nvidia, 2u);
  EXPECT_EQ(CountHostGpus(tree.paths()).amd, 0u);
}

TEST(GpuIndex, AmdGpusAreTheAmdgpuCardsTheFamilyNumbers) {
  // The amd-gpus host: card0, card2, card3 and card10 are amdgpu's; card1 (ASPEED), card4 (radeon), the
  // connectors and render nodes are not.
  FixtureTree tree(test::HostFixture("amd-gpus"));
  auto cards = AmdgpuCardNumbers(tree.paths());
  ASSERT_TRUE(cards) << cards.error();
  EXPECT_EQ(*cards, (std::vector<unsigned>{0, 2, 3, 10}));
  EXPECT_EQ(CountHostGpus(tree.paths()).amd, 4u);
  // A name the kernel never writes is not a second card0.
  std::filesystem::create_directory_symlink("card0", tree.Path("sys/class/drm/card00"));
  EXPECT_EQ(*AmdgpuCardNumbers(tree.paths()), (std::vector<unsigned>{0, 2, 3, 10}));
}

TEST(GpuIndex, NoTreesCountNothing) {
  FixtureTree tree;
  EXPECT_EQ(CountHostGpus(tree.paths()).nvidia, 0u);
  EXPECT_EQ(CountHostGpus(tree.paths()).amd, 0u);
  EXPECT_FALSE(AmdgpuCardNumbers(tree.paths()));
}

}  // namespace
}  // namespace runmon::gpu
