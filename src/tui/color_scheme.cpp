// W&B LEET's colour schemes mapped to xterm-256 colours. See color_scheme.hpp. The RGB values are W&B's
// dark-background variants; the mapping is done at compile time.
#include "tui/color_scheme.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "tui/cell_grid.hpp"

namespace runmon::tui {
namespace {

constexpr std::array<int, 6> kCubeLevels = {0, 95, 135, 175, 215, 255};

constexpr int Squared(int v) {
  return v * v;
}

// The cube level nearest a channel's value: the levels are 0, 95, then 40 apart.
constexpr int CubeLevel(int value) {
  if (value < 48) return 0;
  if (value < 115) return 1;
  return (value - 35) / 40;
}

// The nearest cube colour is the nearest level of each channel; the nearest grey, the ramp value nearest
// the channels' mean (8 + 10 i).
constexpr int16_t Nearest(uint32_t rgb) {
  const int red = static_cast<int>((rgb >> 16) & 0xFF);
  const int green = static_cast<int>((rgb >> 8) & 0xFF);
  const int blue = static_cast<int>(rgb & 0xFF);
  const int r = CubeLevel(red);
  const int g = CubeLevel(green);
  const int b = CubeLevel(blue);
  const int cube_distance = Squared(red - kCubeLevels[static_cast<size_t>(r)]) +
                            Squared(green - kCubeLevels[static_cast<size_t>(g)]) +
                            Squared(blue - kCubeLevels[static_cast<size_t>(b)]);
  const int mean = (red + green + blue) / 3;
  const int grey = std::clamp((mean - 3) / 10, 0, 23);
  const int level = 8 + 10 * grey;
  const int grey_distance = Squared(red - level) + Squared(green - level) + Squared(blue - level);
  if (grey_distance < cube_distance) return static_cast<int16_t>(232 + grey);
  return static_cast<int16_t>(16 + 36 * r + 6 * g + b);
}

template <size_t N>
constexpr std::array<int16_t, N> ToXterm(const std::array<uint32_t, N>& rgb) {
  std::array<int16_t, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = Nearest(rgb[i]);
  return out;
}

constexpr std::array<uint32_t, 10> kSunsetGlow = {0xE281FE, 0xE78DE3, 0xE993D5, 0xED9FBB, 0xF0A5AD,
                                                  0xF2AB9F, 0xF6B784, 0xF8BD78, 0xFBC36B, 0xFFCF4F};
constexpr std::array<uint32_t, 10> kBlushTide = {0xF9A7CC, 0xEEB3E0, 0xE4BFEE, 0xDBC9F7, 0xD5D3FC,
                                                 0xD1DCFE, 0xD0E5FF, 0xD3ECFE, 0xD8F2FC, 0xE1F7FA};
constexpr std::array<uint32_t, 10> kGildedLagoon = {0xFFCF4F, 0xEADB74, 0xDAE492, 0xCFEBAB, 0xC8EFC0,
                                                    0xC5F3D2, 0xC7F5E1, 0xCDF6ED, 0xD5F7F5, 0xE1F7FA};
constexpr std::array<uint32_t, 8> kBootstrapVibe = {0xA7B0B8, 0x78AEFC, 0x72CF9D, 0x7BE3FA,
                                                    0xFFB574, 0xF28A93, 0xB99AFF, 0x83E6CA};
constexpr std::array<uint32_t, 10> kWandbVibe10 = {0xB1B4B9, 0x58D3DB, 0x5ED6A4, 0xFCA36F, 0xFF7A88,
                                                   0x7DB1FA, 0xBBE06B, 0xFFCF4D, 0xE180FF, 0xB199FF};
constexpr std::array<uint32_t, 20> kWandbVibe20 = {
    0xD4D5D9, 0x565C66, 0xA9EDF2, 0x038194, 0xA1F0CB, 0x00875A, 0xFFCFB2, 0xC2562F, 0xFFC7CA, 0xCC2944,
    0xBDD9FF, 0x1F59C4, 0xD0ED9D, 0x5F8A2D, 0xFFE49E, 0xB8740F, 0xEFC2FC, 0x9E36C2, 0xD6C9FF, 0x6645D1};
constexpr std::array<uint32_t, 16> kDuskShore = {0x994228, 0xC2562F, 0xD96534, 0xFC8F58, 0xFCA36F, 0xFFBA91,
                                                 0xFFCFB2, 0xA4C9FC, 0x7DB1FA, 0x629DF5, 0x397EED, 0x286CE0,
                                                 0x1F59C4, 0xB1B4B9, 0x79808A, 0x565C66};
constexpr std::array<uint32_t, 16> kClearSignal = {0xD96534, 0x286CE0, 0x629DF5, 0x994228, 0xFCA36F, 0xFFCFB2,
                                                   0xB1B4B9, 0x79808A, 0x7DB1FA, 0x1F59C4, 0xC2562F, 0xFC8F58,
                                                   0xFFBA91, 0xA4C9FC, 0x397EED, 0x565C66};
constexpr std::array<uint32_t, 11> kTrafficLight = {0x1A9850, 0x3EAE51, 0x67C35C, 0x97D168,
                                                    0xC8DE72, 0xF1DD6B, 0xFDB863, 0xF89C5A,
                                                    0xF67C4B, 0xE85D4F, 0xD73027};
constexpr std::array<uint32_t, 11> kViridis = {0x440154, 0x482475, 0x414487, 0x355F8D, 0x2A788E, 0x21918C,
                                               0x22A884, 0x44BF70, 0x7AD151, 0xBDDF26, 0xFDE725};
constexpr std::array<uint32_t, 11> kPlasma = {0x0D0887, 0x41049D, 0x6A00A8, 0x8F0DA4, 0xB12A90, 0xCC4778,
                                              0xE16462, 0xF2844B, 0xFCA636, 0xFCCE25, 0xF0F921};
constexpr std::array<uint32_t, 11> kInferno = {0x000004, 0x160B39, 0x420A68, 0x6A176E, 0x932667, 0xBC3754,
                                               0xDD513A, 0xF37819, 0xFCA50A, 0xF6D746, 0xFCFFA4};
constexpr std::array<uint32_t, 11> kMagma = {0x000004, 0x140E36, 0x3B0F70, 0x641A80, 0x8C2981, 0xB73779,
                                             0xDE4968, 0xF7705C, 0xFE9F6D, 0xFECF92, 0xFCFDBF};
constexpr std::array<uint32_t, 11> kCividis = {0x00224E, 0x083370, 0x35456C, 0x4F576C, 0x666970, 0x7D7C78,
                                               0x948E77, 0xAEA371, 0xC8B866, 0xE5CF52, 0xFEE838};

constexpr auto kSunsetGlowXterm = ToXterm(kSunsetGlow);
constexpr auto kBlushTideXterm = ToXterm(kBlushTide);
constexpr auto kGildedLagoonXterm = ToXterm(kGildedLagoon);
constexpr auto kBootstrapVibeXterm = ToXterm(kBootstrapVibe);
constexpr auto kWandbVibe10Xterm = ToXterm(kWandbVibe10);
constexpr auto kWandbVibe20Xterm = ToXterm(kWandbVibe20);
constexpr auto kDuskShoreXterm = ToXterm(kDuskShore);
constexpr auto kClearSignalXterm = ToXterm(kClearSignal);
constexpr auto kTrafficLightXterm = ToXterm(kTrafficLight);
constexpr auto kViridisXterm = ToXterm(kViridis);
constexpr auto kPlasmaXterm = ToXterm(kPlasma);
constexpr auto kInfernoXterm = ToXterm(kInferno);
constexpr auto kMagmaXterm = ToXterm(kMagma);
constexpr auto kCividisXterm = ToXterm(kCividis);

// In kColorSchemeNames' order.
constexpr std::array<std::span<const int16_t>, 14> kSchemeColors = {
    kSunsetGlowXterm,  kBlushTideXterm, kGildedLagoonXterm, kBootstrapVibeXterm, kWandbVibe10Xterm,
    kWandbVibe20Xterm, kDuskShoreXterm, kClearSignalXterm,  kTrafficLightXterm,  kViridisXterm,
    kPlasmaXterm,      kInfernoXterm,   kMagmaXterm,        kCividisXterm,
};
static_assert(kSchemeColors.size() == kColorSchemeNames.size());

constexpr int IndexOf(std::string_view name) {
  for (size_t i = 0; i < kColorSchemeNames.size(); ++i) {
    if (kColorSchemeNames[i] == name) return static_cast<int>(i);
  }
  return -1;
}

static_assert(IndexOf("wandb-vibe-10") == kDefaultColorScheme);
static_assert(IndexOf("sunset-glow") == kDefaultPerPlotColorScheme);
static_assert(IndexOf("viridis") == kDefaultFrenchFriesColorScheme);

}  // namespace

int FindColorScheme(std::string_view name) {
  return IndexOf(name);
}

std::span<const int16_t> SchemeColors(int scheme) {
  if (scheme < 0 || static_cast<size_t>(scheme) >= kSchemeColors.size()) scheme = kDefaultColorScheme;
  return kSchemeColors[static_cast<size_t>(scheme)];
}

int16_t NearestXterm256(uint32_t rgb) {
  return Nearest(rgb & 0xFFFFFF);
}

size_t StableColorIndex(std::string_view name, size_t size) {
  if (size == 0) return 0;
  uint32_t hash = 2166136261u;
  for (const char c : name) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  return hash % size;
}

int16_t RampColor(std::span<const int16_t> ramp, double percent) {
  if (std::isnan(percent) || ramp.empty()) return kDefaultColor;
  const double fraction = std::clamp(percent / 100.0, 0.0, 1.0);
  return ramp[static_cast<size_t>(std::lround(fraction * static_cast<double>(ramp.size() - 1)))];
}

}  // namespace runmon::tui
