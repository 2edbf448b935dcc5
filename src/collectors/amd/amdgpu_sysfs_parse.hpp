// Pure parsers for the amdgpu sysfs and hwmon files (accelerators.md §3.2-§3.3), fuzzed
// (fuzz/amdgpu_sysfs_fuzz.cpp). The files hold one value each, but under --root and in containers they are
// untrusted text: anything the kernel never writes (a sign, a fraction, trailing words, no current DPM
// level) is an error rather than a guess, so a value that cannot be true never leaves runmon.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::amd {

// "card3" -> 3: a DRM card's name (class/drm/cardN), which rocm-smi's JSON keys copy. Connectors
// ("card0-DP-1"), render nodes, "system" and names the kernel never writes ("card03", "card+3"): nullopt.
std::optional<unsigned> ParseCardName(std::string_view name);

// "123\n": a non-negative decimal integer (busy percentages, bytes, µW, m°C, RPM).
Result<uint64_t> ParseSysfsUnsigned(std::string_view text);

// "0x1002\n": a PCI id file (vendor, device, subsystem ids, revision).
Result<uint32_t> ParsePciId(std::string_view text);

// pp_dpm_sclk / pp_dpm_mclk: one line per DPM level, "<level>: <freq>Mhz", the current one ending in '*'
// ("1: 800Mhz *"); newer SMUs add a deep-sleep level "S: 19Mhz", which is not one of the card's range.
struct DpmLevels {
  std::vector<double> mhz;        // the numbered levels, in the file's order
  std::optional<double> current;  // the marked level's frequency (the deep-sleep one included)
};
Result<DpmLevels> ParseDpmLevels(std::string_view text);

// The current level's frequency in MHz; a file with no marked level is an error.
Result<double> ParseCurrentDpmLevelMhz(std::string_view text);

}  // namespace runmon::amd
