// The PCI scan (collectors/tpu/tpu_chips.hpp) on fake sys trees: every generation, v2 and v3 told apart by
// their subsystem id, a chip's functions counted once, Google's network card and other vendors ignored,
// mixed generations (the most common wins) and trees without a TPU.
#include "collectors/tpu/tpu_chips.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon::tpu {
namespace {

void AddFunction(test::FixtureTree& tree, const std::string& address, const std::string& vendor,
                 const std::string& device, const std::string& subsystem = "0x0000") {
  const std::string dir = "sys/bus/pci/devices/" + address + "/";
  tree.Write(dir + "vendor", vendor + "\n").Write(dir + "device", device + "\n");
  tree.Write(dir + "subsystem_device", subsystem + "\n");
}

struct Generation {
  const char* device;
  const char* subsystem;
  const char* name;
  unsigned hbm_gib, devices_per_chip, fanout;
};

TEST(TpuChips, EveryGenerationIsKnown) {
  const Generation generations[] = {
      {"0x0027", "0x004e", "v2", 8, 2, 2},   {"0x0027", "0x004f", "v3", 16, 2, 2},
      {"0x005e", "0x0000", "v4", 32, 1, 1},  {"0x0063", "0x0000", "v5e", 16, 1, 1},
      {"0x0062", "0x0000", "v5p", 95, 1, 1}, {"0x006f", "0x0000", "v6e", 32, 1, 1},
      {"0x0076", "0x0000", "7x", 192, 2, 1}};
  for (const Generation& generation : generations) {
    SCOPED_TRACE(generation.name);
    test::FixtureTree tree;
    for (int chip = 0; chip < 4; ++chip) {
      AddFunction(tree, fmt::format("0000:00:{:02x}.0", 4 + chip), "0x1ae0", generation.device,
                  generation.subsystem);
    }
    AddFunction(tree, "0000:00:03.0", "0x1ae0", "0x0042");  // gVNIC
    AddFunction(tree, "0000:00:01.0", "0x8086", "0x1237");
    const TpuChips chips = ScanTpuChips(tree.paths());
    ASSERT_NE(chips.type, nullptr);
    EXPECT_EQ(chips.type->name, generation.name);
    EXPECT_EQ(chips.type->hbm_gib, generation.hbm_gib);
    EXPECT_EQ(chips.type->devices_per_chip, generation.devices_per_chip);
    EXPECT_EQ(chips.type->duty_cycle_fanout, generation.fanout);
    EXPECT_EQ(chips.chip_count, 4u);
    EXPECT_EQ(chips.device_count(), 4 * generation.devices_per_chip);
    EXPECT_TRUE(chips.other_types.empty());
  }
}

TEST(TpuChips, Device0027WithAnotherSubsystemIsNoTpu) {
  test::FixtureTree tree;
  AddFunction(tree, "0000:00:04.0", "0x1ae0", "0x0027", "0x0001");
  EXPECT_EQ(ScanTpuChips(tree.paths()).type, nullptr);
  test::FixtureTree no_subsystem;
  no_subsystem.Write("sys/bus/pci/devices/0000:00:04.0/vendor", "0x1ae0\n")
      .Write("sys/bus/pci/devices/0000:00:04.0/device", "0x0027\n");
  EXPECT_EQ(ScanTpuChips(no_subsystem.paths()).type, nullptr);
}

TEST(TpuChips, AChipsFunctionsCountOnce) {
  test::FixtureTree tree;
  for (const char* address : {"0000:00:04.0", "0000:00:04.1", "0000:00:05.0", "0000:00:05.1"}) {
    AddFunction(tree, address, "0x1ae0", "0x0076");
  }
  const TpuChips chips = ScanTpuChips(tree.paths());
  EXPECT_EQ(chips.chip_count, 2u);
  EXPECT_EQ(chips.device_count(), 4u);
}

TEST(TpuChips, MixedGenerationsTakeTheMostCommon) {
  test::FixtureTree tree;
  AddFunction(tree, "0000:00:04.0", "0x1ae0", "0x005e");
  AddFunction(tree, "0000:00:05.0", "0x1ae0", "0x0063");
  AddFunction(tree, "0000:00:06.0", "0x1ae0", "0x0063");
  const TpuChips chips = ScanTpuChips(tree.paths());
  ASSERT_NE(chips.type, nullptr);
  EXPECT_EQ(chips.type->name, "v5e");
  EXPECT_EQ(chips.chip_count, 2u);
  EXPECT_EQ(chips.other_types, (std::map<std::string, unsigned>{{"v4", 1}}));
  // A tie goes to the table's earlier row.
  AddFunction(tree, "0000:00:07.0", "0x1ae0", "0x005e");
  EXPECT_EQ(ScanTpuChips(tree.paths()).type->name, "v4");
}

TEST(TpuChips, TreesWithoutATpuHaveNone) {
  test::FixtureTree empty;
  EXPECT_EQ(ScanTpuChips(empty.paths()).type, nullptr);
  EXPECT_EQ(ScanTpuChips(empty.paths()).device_count(), 0u);
  test::FixtureTree others;
  AddFunction(others, "0000:00:03.0", "0x1ae0", "0x0042");  // only the gVNIC
  AddFunction(others, "0000:00:04.0", "0x10de", "0x2335");
  others.Write("sys/bus/pci/devices/0000:00:05.0/vendor", "garbage\n");
  others.Write("sys/bus/pci/devices/0000:00:06.0/vendor", "0x1ae0\n");  // no device file
  EXPECT_EQ(ScanTpuChips(others.paths()).type, nullptr);
}

}  // namespace
}  // namespace runmon::tpu
