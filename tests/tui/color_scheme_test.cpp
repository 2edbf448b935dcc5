// W&B's colour schemes as runmon draws them (color_scheme.hpp): the nearest xterm-256 colour of an RGB
// colour (against a brute force over all 240), the schemes' names, sizes and defaults, the stable index
// (FNV-1a, as W&B's) and the sequential ramps.
#include "tui/color_scheme.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <gtest/gtest.h>

#include "tui/cell_grid.hpp"

namespace runmon::tui {
namespace {

TEST(ColorScheme, MapsRgbToTheNearestXtermColour) {
  EXPECT_EQ(NearestXterm256(0x000000), 16);
  EXPECT_EQ(NearestXterm256(0xFFFFFF), 231);
  EXPECT_EQ(NearestXterm256(0xFF0000), 196);
  EXPECT_EQ(NearestXterm256(0x0000FF), 21);
  EXPECT_EQ(NearestXterm256(0x808080), 244);   // a grey: the grey ramp (8 + 10 x 12 = 128)
  EXPECT_EQ(NearestXterm256(0x5FD7AF), 79);    // exactly a cube colour (95, 215, 175)
  EXPECT_EQ(NearestXterm256(0xFF000000), 16);  // bits above the colour are ignored
  EXPECT_EQ(NearestXterm256(0x5F87AF), 67);
  EXPECT_EQ(NearestXterm256(0x080808), 232);
  EXPECT_EQ(NearestXterm256(0x00C800), 40);
}

// Brute force over the 240 colours on a lattice of the RGB cube: the fast answer is as near as the nearest.
TEST(ColorScheme, IsAsNearAsTheNearestOfAllTwoHundredForty) {
  constexpr std::array<int, 6> kLevels = {0, 95, 135, 175, 215, 255};
  const auto rgb_of = [&](int index) {
    if (index >= 232) {
      const int level = 8 + 10 * (index - 232);
      return std::array<int, 3>{level, level, level};
    }
    const int i = index - 16;
    return std::array<int, 3>{kLevels[static_cast<size_t>(i / 36)], kLevels[static_cast<size_t>(i / 6 % 6)],
                              kLevels[static_cast<size_t>(i % 6)]};
  };
  const auto distance = [](const std::array<int, 3>& a, const std::array<int, 3>& b) {
    return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
  };
  for (int r = 0; r < 256; r += 5) {
    for (int g = 0; g < 256; g += 7) {
      for (int b = 0; b < 256; b += 3) {
        const std::array<int, 3> colour = {r, g, b};
        int best = 1 << 30;
        for (int index = 16; index < 256; ++index) best = std::min(best, distance(colour, rgb_of(index)));
        const int16_t fast = NearestXterm256(static_cast<uint32_t>(r << 16 | g << 8 | b));
        ASSERT_GE(fast, 16);
        // The grey ramp is taken at the channels' mean rounded down: within one step of the nearest.
        EXPECT_LE(distance(colour, rgb_of(fast)), best + 3 * 100) << r << "," << g << "," << b;
      }
    }
  }
}

TEST(ColorScheme, NamesAndPalettesAreW_AndBsWithTheirDefaults) {
  ASSERT_EQ(kColorSchemeNames.size(), 14u);
  EXPECT_EQ(kColorSchemeNames[static_cast<size_t>(kDefaultColorScheme)], "wandb-vibe-10");
  EXPECT_EQ(kColorSchemeNames[static_cast<size_t>(kDefaultPerPlotColorScheme)], "sunset-glow");
  EXPECT_EQ(kColorSchemeNames[static_cast<size_t>(kDefaultFrenchFriesColorScheme)], "viridis");
  EXPECT_EQ(FindColorScheme("magma"), 12);
  EXPECT_EQ(FindColorScheme("Magma"), -1);
  EXPECT_EQ(FindColorScheme(""), -1);
  const std::array<size_t, 14> sizes = {10, 10, 10, 8, 10, 20, 16, 16, 11, 11, 11, 11, 11, 11};
  for (size_t i = 0; i < kColorSchemeNames.size(); ++i) {
    const auto colors = SchemeColors(static_cast<int>(i));
    EXPECT_EQ(colors.size(), sizes[i]) << kColorSchemeNames[i];
    for (const int16_t color : colors) {
      EXPECT_GE(color, 16) << kColorSchemeNames[i];
      EXPECT_LE(color, 255) << kColorSchemeNames[i];
    }
  }
  // W&B's wandb-vibe-10 dark colours: #B1B4B9 (a grey), #58D3DB (teal).
  EXPECT_EQ(SchemeColors(kDefaultColorScheme)[0], NearestXterm256(0xB1B4B9));
  EXPECT_EQ(SchemeColors(kDefaultColorScheme)[1], NearestXterm256(0x58D3DB));
  // Out of range: the default scheme.
  EXPECT_EQ(SchemeColors(-1).data(), SchemeColors(kDefaultColorScheme).data());
  EXPECT_EQ(SchemeColors(99).data(), SchemeColors(kDefaultColorScheme).data());
}

TEST(ColorScheme, StableIndexIsFnv1aAsW_AndBsAndRampsClamp) {
  // FNV-1a 32: "" is the offset basis 2166136261, "a" is 0xE40C292C.
  EXPECT_EQ(StableColorIndex("", 10), 2166136261u % 10);
  EXPECT_EQ(StableColorIndex("a", 7), 0xE40C292Cu % 7);
  EXPECT_EQ(StableColorIndex("anything", 0), 0u);
  const auto viridis = SchemeColors(kDefaultFrenchFriesColorScheme);
  EXPECT_EQ(RampColor(viridis, 0), viridis.front());
  EXPECT_EQ(RampColor(viridis, -20), viridis.front());
  EXPECT_EQ(RampColor(viridis, 100), viridis.back());
  EXPECT_EQ(RampColor(viridis, 1e9), viridis.back());
  EXPECT_EQ(RampColor(viridis, 50), viridis[5]);
  EXPECT_EQ(RampColor(viridis, std::nan("")), kDefaultColor);
  EXPECT_EQ(RampColor({}, 50), kDefaultColor);
}

}  // namespace
}  // namespace runmon::tui
