// The amdgpu sysfs value parsers (collectors/amd/amdgpu_sysfs_parse.hpp): the texts the kernel writes, and
// what it never writes refused.
#include "collectors/amd/amdgpu_sysfs_parse.hpp"

#include <gtest/gtest.h>

namespace runmon::amd {
namespace {

TEST(AmdgpuSysfsParse, Unsigned) {
  EXPECT_EQ(*ParseSysfsUnsigned("37\n"), 37u);
  EXPECT_EQ(*ParseSysfsUnsigned("68702699520\n"), 68702699520u);
  EXPECT_EQ(*ParseSysfsUnsigned("0"), 0u);
  for (const char* bad : {"", "\n", "-1\n", "12.5\n", "12 W\n", "0x10\n", "99999999999999999999999\n"}) {
    EXPECT_FALSE(ParseSysfsUnsigned(bad)) << "'" << bad << "'";
  }
}

TEST(AmdgpuSysfsParse, CardName) {
  EXPECT_EQ(ParseCardName("card0"), 0u);
  EXPECT_EQ(ParseCardName("card10"), 10u);
  for (const char* bad : {"card", "card0-DP-1", "renderD128", "card03", "card00", "card+3", "card-1",
                          "system", "card99999999999"}) {
    EXPECT_FALSE(ParseCardName(bad)) << bad;
  }
}

TEST(AmdgpuSysfsParse, PciId) {
  EXPECT_EQ(*ParsePciId("0x1002\n"), 0x1002u);
  EXPECT_EQ(*ParsePciId("0x740c\n"), 0x740cu);
  EXPECT_EQ(*ParsePciId("0x030000\n"), 0x030000u);
  for (const char* bad : {"", "1002\n", "0x\n", "0xzz\n", "0x1002 x\n", "0x123456789\n"}) {
    EXPECT_FALSE(ParsePciId(bad)) << "'" << bad << "'";
  }
}

TEST(AmdgpuSysfsParse, CurrentDpmLevel) {
  EXPECT_DOUBLE_EQ(*ParseCurrentDpmLevelMhz("0: 500Mhz\n1: 800Mhz *\n2: 1700Mhz\n"), 800.0);
  // The marked level may be the first or the last, and the kernel's "Mhz" may be spelled "MHz".
  EXPECT_DOUBLE_EQ(*ParseCurrentDpmLevelMhz("0: 500Mhz *\n1: 800Mhz\n"), 500.0);
  EXPECT_DOUBLE_EQ(*ParseCurrentDpmLevelMhz("0: 96MHz\n1: 1600MHz *\n"), 1600.0);
  // SMU 13's deep-sleep level: current while idle, not part of the card's range.
  const auto idle = ParseDpmLevels("S: 19Mhz *\n0: 500Mhz\n1: 2900Mhz\n");
  ASSERT_TRUE(idle);
  EXPECT_DOUBLE_EQ(*idle->current, 19.0);
  EXPECT_EQ(idle->mhz, (std::vector<double>{500.0, 2900.0}));
}

TEST(AmdgpuSysfsParse, DpmTablesTheKernelNeverWrites) {
  EXPECT_FALSE(ParseCurrentDpmLevelMhz("0: 500Mhz\n1: 800Mhz\n"));  // no current level
  EXPECT_FALSE(ParseCurrentDpmLevelMhz(""));
  for (const char* bad : {"0: 500Mhz *\n1: 800Mhz *\n", "0 500Mhz *\n", "0: 500\n", "0: -5Mhz *\n",
                          "0: 500Mhz * extra\n", "0: 500Mhz +\n", "x: 500Mhz *\n", "0: Mhz *\n"}) {
    EXPECT_FALSE(ParseDpmLevels(bad)) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace runmon::amd
