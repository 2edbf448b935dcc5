// W&B LEET's colour schemes (its styles.go): named palettes of RGB colours that charts, run markers, tags
// and heatmaps take their colours from, by the config's names (color_scheme, system_color_scheme,
// french_fries_color_scheme, ...). runmon draws in xterm-256 colours, so each RGB colour is mapped to the
// nearest of the palette's 6x6x6 cube and 24 greys (the first 16 are left out: terminals redefine them).
// W&B gives each colour a light-background and a dark-background variant and picks by the terminal; runmon
// takes the dark ones (a terminal's background cannot be asked portably through curses). The sequential
// schemes (viridis ... cividis, traffic-light) are one colour for both in W&B too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace runmon::tui {

// How charts take their colours (W&B's color modes): per_series, every single-series chart in the base
// colour (a run's own colour, or the palette's first for system charts) and a multi-series chart's series
// in the palette's order; per_plot, each chart the next colour of the palette.
enum class ColorMode : uint8_t { kPerSeries, kPerPlot };
inline constexpr std::array<std::string_view, 2> kColorModeNames = {"per_series", "per_plot"};

// The schemes' names, in W&B's order; a scheme is its index here.
inline constexpr std::array<std::string_view, 14> kColorSchemeNames = {
    "sunset-glow",   "blush-tide", "gilded-lagoon", "bootstrap-vibe", "wandb-vibe-10",
    "wandb-vibe-20", "dusk-shore", "clear-signal",  "traffic-light",  "viridis",
    "plasma",        "inferno",    "magma",         "cividis"};
// The index of `name`, or -1.
int FindColorScheme(std::string_view name);

// W&B's defaults (indices into ColorSchemeNames(); color_scheme.cpp checks them against the names).
inline constexpr int kDefaultColorScheme = 4;             // wandb-vibe-10: metrics, runs, tags, system charts
inline constexpr int kDefaultPerPlotColorScheme = 0;      // sunset-glow
inline constexpr int kDefaultFrenchFriesColorScheme = 9;  // viridis: heatmaps

// The scheme's colours as xterm-256 indices (an index out of range gives the default scheme's).
std::span<const int16_t> SchemeColors(int scheme);
// The nearest xterm-256 colour (16-255) to an 0xRRGGBB colour, by squared distance in RGB (a tie goes to
// the cube). Also what images are drawn with (media_pane.hpp).
int16_t NearestXterm256(uint32_t rgb);
// A stable index into a palette of `size` colours for a name (a run's id, a tag): FNV-1a 32 of the
// bytes modulo `size`, as W&B's colorIndex, so a run or tag has the same colour in both tools' palettes.
size_t StableColorIndex(std::string_view name, size_t size);
// A percentage's colour on a sequential ramp: 0 % the first colour, 100 % the last, clamped; NaN none.
int16_t RampColor(std::span<const int16_t> ramp, double percent);

}  // namespace runmon::tui
