// DRM fdinfo of an amdgpu client (see drm_fdinfo_parse.hpp). Keys are matched exactly; a key that names the
// same quantity in another generation (drm-resident-vram, drm-memory-vram, "vram mem") is taken in that
// order of preference, whatever order the lines come in. Errors are only reported for files that turn out to
// be DRM clients: other files' fdinfo may hold anything.
#include "collectors/amd/drm_fdinfo_parse.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include "collectors/linux/parse/text.hpp"

namespace runmon::amd {
namespace {

constexpr std::string_view kEnginePrefix = "drm-engine-";
constexpr std::string_view kEngineCapacityPrefix = "drm-engine-capacity-";
// Old kernels' ring names (amdgpu_ip_name), longest first so "enc_1" is not read as "enc".
constexpr std::array<std::string_view, 7> kOldRingNames = {"compute", "enc_1", "jpeg", "gfx",
                                                           "dma",     "dec",   "enc"};

// A size as drm-usage-stats writes it: bytes, "N KiB" or "N MiB"; old kernels wrote "N kB" (KiB).
std::optional<uint64_t> ParseSize(std::string_view value) {
  text::Fields fields(value);
  std::string_view number, unit, extra;
  if (!fields.Next(number)) return std::nullopt;
  const auto count = text::ParseU64(number);
  if (!count) return std::nullopt;
  uint64_t multiplier = 1;
  if (fields.Next(unit)) {
    if (unit == "KiB" || unit == "kB")
      multiplier = 1024;
    else if (unit == "MiB")
      multiplier = 1024 * 1024;
    else
      return std::nullopt;
  }
  if (fields.Next(extra)) return std::nullopt;
  if (*count > UINT64_MAX / multiplier) return std::nullopt;
  return *count * multiplier;
}

// "N ns".
std::optional<uint64_t> ParseNanoseconds(std::string_view value) {
  text::Fields fields(value);
  std::string_view number, unit, extra;
  if (!fields.Next(number) || !fields.Next(unit) || unit != "ns" || fields.Next(extra)) return std::nullopt;
  return text::ParseU64(number);
}

// "12.34%": a finite, non-negative percentage.
std::optional<double> ParsePercent(std::string_view value) {
  if (value.size() < 2 || value.back() != '%') return std::nullopt;
  value.remove_suffix(1);
  double percent = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), percent);
  if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  if (!std::isfinite(percent) || percent < 0) return std::nullopt;
  return percent;
}

// "0000:03:00.0" (any case): hex digits, ':' and '.'.
bool IsPciAddress(std::string_view value) {
  if (value.empty() || value.find(':') == std::string_view::npos) return false;
  for (char c : value) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return false;
  }
  return true;
}

std::string Lower(std::string_view value) {
  std::string lower(value);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

// The ring prefix of an old-kernel key ("gfx0" -> "gfx"), or empty when the key is not one.
std::string_view OldRingName(std::string_view key) {
  for (std::string_view name : kOldRingNames) {
    if (key.size() <= name.size() || key.substr(0, name.size()) != name) continue;
    if (text::ParseU64(key.substr(name.size()))) return name;
  }
  return {};
}

// A memory region's value and how preferred the key it came from is (lower is better).
struct Ranked {
  std::optional<uint64_t>* target;
  int rank;
};

}  // namespace

Result<DrmFdinfo> ParseDrmFdinfo(std::string_view text) {
  DrmFdinfo info;
  std::string error;
  int vram_rank = 100, gtt_rank = 100;
  const auto fail = [&](std::string_view key, std::string_view what) {
    if (error.empty()) error = std::string(key) + ": " + std::string(what);
  };
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = text::Trim(line.substr(colon + 1));

    std::optional<Ranked> memory;
    if (key == "drm-resident-vram") memory = Ranked{&info.vram_bytes, 0};
    if (key == "drm-memory-vram") memory = Ranked{&info.vram_bytes, 1};
    if (key == "vram mem") memory = Ranked{&info.vram_bytes, 2};
    if (key == "drm-resident-gtt") memory = Ranked{&info.gtt_bytes, 0};
    if (key == "drm-memory-gtt") memory = Ranked{&info.gtt_bytes, 1};
    if (key == "gtt mem") memory = Ranked{&info.gtt_bytes, 2};
    if (memory) {
      const auto bytes = ParseSize(value);
      if (!bytes) {
        fail(key, "not a size (N, N KiB or N MiB)");
        continue;
      }
      int& best = memory->target == &info.vram_bytes ? vram_rank : gtt_rank;
      if (memory->rank < best) {
        best = memory->rank;
        *memory->target = *bytes;
      }
      continue;
    }

    if (key == "drm-driver") {
      info.driver = std::string(value);
    } else if (key == "drm-pdev" || key == "pdev") {
      if (IsPciAddress(value))
        info.pci_address = Lower(value);
      else
        fail(key, "not a PCI address");
    } else if (key == "drm-client-id" || key == "pasid") {
      const auto id = text::ParseU64(value);
      if (!id)
        fail(key, "not an unsigned integer");
      else
        (key == "pasid" ? info.pasid : info.client_id) = *id;
    } else if (key.starts_with(kEnginePrefix)) {
      if (key.starts_with(kEngineCapacityPrefix)) continue;
      const std::string_view name = key.substr(kEnginePrefix.size());
      const auto ns = ParseNanoseconds(value);
      if (name.empty() || !ns) {
        fail(key, "not an engine's busy time (N ns)");
        continue;
      }
      info.engines.push_back(DrmEngineBusy{std::string(name), false, *ns, 0.0});
    } else if (const std::string_view ring = OldRingName(key); !ring.empty()) {
      const auto percent = ParsePercent(value);
      if (!percent) {
        fail(key, "not a ring's busy percentage (N.N%)");
        continue;
      }
      info.engines.push_back(DrmEngineBusy{std::string(ring), true, 0, *percent});
    }
  }
  if (!info.IsDrmClient()) return DrmFdinfo{};
  if (!error.empty()) return Error{error};
  return info;
}

}  // namespace runmon::amd
