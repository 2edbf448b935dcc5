// CUDA_VISIBLE_DEVICES parsing and the mapping of its selectors to NVML's devices (see cuda_devices.hpp).
// CUDA stops at the first entry it cannot use, so every odd case (a bad integer, a malformed or unknown
// UUID, an ambiguous prefix, a device named twice) simply ends the list. Indices are plain decimal digits
// only; UUIDs keep their "GPU-"/"MIG-" prefix case-sensitive and compare their hex case-insensitively. Only
// GPU UUIDs may be abbreviated (as NVIDIA documents); MIG UUIDs and legacy MIG names must be complete.
#include "collectors/nvidia/cuda_devices.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <numeric>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/linux/parse/text.hpp"

namespace runmon {
namespace {

// A GPU CUDA can see as a device of its own: not a MIG instance, and not a GPU in MIG mode (CUDA shows its
// instances instead).
bool CudaSeesGpu(const NvmlDeviceIdentity& device) {
  return !device.is_mig && !device.mig_enabled;
}

constexpr std::string_view kGpuPrefix = "GPU-";
constexpr std::string_view kMigPrefix = "MIG-";
constexpr std::string_view kLegacyMigPrefix = "MIG-GPU-";
// The shape of a UUID after its prefix: 'x' is a hex digit.
constexpr std::string_view kUuidBodyShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

char FoldCase(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// True when `body` is the start (or all) of an 8-4-4-4-12 hex UUID.
bool IsUuidBodyPrefix(std::string_view body) {
  if (body.size() > kUuidBodyShape.size()) return false;
  for (size_t i = 0; i < body.size(); ++i) {
    if (kUuidBodyShape[i] == '-' ? body[i] != '-' : !IsHex(body[i])) return false;
  }
  return true;
}

bool IsUuidBody(std::string_view body) {
  return body.size() == kUuidBodyShape.size() && IsUuidBodyPrefix(body);
}

// A plain non-negative decimal integer that fits `unsigned` (no sign, no base prefix, no spaces).
std::optional<unsigned> ParseUnsigned(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), IsDigit)) return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// "MIG-GPU-<uuid>/<gpu instance>/<compute instance>".
std::optional<CudaDeviceSelector> ParseLegacyMig(std::string_view entry) {
  std::string_view rest = entry.substr(kMigPrefix.size());  // "GPU-<uuid>/<gi>/<ci>"
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view uuid = rest.substr(0, slash);
  if (!IsUuidBody(uuid.substr(kGpuPrefix.size()))) return std::nullopt;
  rest.remove_prefix(slash + 1);
  const size_t second = rest.find('/');
  if (second == std::string_view::npos) return std::nullopt;
  const auto gpu_instance = ParseUnsigned(rest.substr(0, second));
  const auto compute_instance = ParseUnsigned(rest.substr(second + 1));
  if (!gpu_instance || !compute_instance) return std::nullopt;
  CudaDeviceSelector selector;
  selector.kind = CudaDeviceSelector::Kind::kLegacyMig;
  selector.uuid = std::string(uuid);
  selector.gpu_instance = *gpu_instance;
  selector.compute_instance = *compute_instance;
  return selector;
}

// One entry, already trimmed; nullopt when CUDA would not accept it.
std::optional<CudaDeviceSelector> ParseEntry(std::string_view entry) {
  CudaDeviceSelector selector;
  if (!entry.empty() && IsDigit(entry.front())) {
    const auto index = ParseUnsigned(entry);
    if (!index) return std::nullopt;
    selector.kind = CudaDeviceSelector::Kind::kIndex;
    selector.index = *index;
    return selector;
  }
  if (entry.starts_with(kLegacyMigPrefix)) return ParseLegacyMig(entry);
  if (entry.starts_with(kMigPrefix)) {
    if (!IsUuidBody(entry.substr(kMigPrefix.size()))) return std::nullopt;
    selector.kind = CudaDeviceSelector::Kind::kMigUuid;
    selector.uuid = std::string(entry);
    return selector;
  }
  if (entry.starts_with(kGpuPrefix)) {
    if (!IsUuidBodyPrefix(entry.substr(kGpuPrefix.size()))) return std::nullopt;
    selector.kind = CudaDeviceSelector::Kind::kUuid;
    selector.uuid = std::string(entry);
    return selector;
  }
  return std::nullopt;
}

// Whether `wanted` names `uuid`: same (case-sensitive) 4-character prefix, then the rest compared without
// regard to case; `wanted` may be a leading part of `uuid` when `allow_prefix`.
bool UuidMatches(std::string_view uuid, std::string_view wanted, std::string_view kind_prefix,
                 bool allow_prefix) {
  if (!uuid.starts_with(kind_prefix) || !wanted.starts_with(kind_prefix)) return false;
  if (allow_prefix ? wanted.size() > uuid.size() : wanted.size() != uuid.size()) return false;
  for (size_t i = kind_prefix.size(); i < wanted.size(); ++i) {
    if (FoldCase(uuid[i]) != FoldCase(wanted[i])) return false;
  }
  return true;
}

// The one device `selector` names, or nullopt when it names none or several.
template <typename Predicate>
std::optional<size_t> UniqueMatch(const std::vector<NvmlDeviceIdentity>& devices, Predicate matches) {
  std::optional<size_t> found;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!matches(devices[i])) continue;
    if (found) return std::nullopt;
    found = i;
  }
  return found;
}

std::optional<size_t> FindDevice(const CudaDeviceSelector& selector,
                                 const std::vector<NvmlDeviceIdentity>& devices) {
  using Kind = CudaDeviceSelector::Kind;
  switch (selector.kind) {
    case Kind::kIndex:
      return UniqueMatch(devices, [&](const NvmlDeviceIdentity& d) {
        return CudaSeesGpu(d) && d.nvml_index == selector.index;
      });
    case Kind::kUuid: {
      // A complete UUID names its GPU even if (in a made-up list) it were also a prefix of another.
      if (auto exact = UniqueMatch(devices, [&](const NvmlDeviceIdentity& d) {
            return CudaSeesGpu(d) && UuidMatches(d.uuid, selector.uuid, kGpuPrefix, false);
          })) {
        return exact;
      }
      return UniqueMatch(devices, [&](const NvmlDeviceIdentity& d) {
        return CudaSeesGpu(d) && UuidMatches(d.uuid, selector.uuid, kGpuPrefix, true);
      });
    }
    case Kind::kMigUuid:
      return UniqueMatch(devices, [&](const NvmlDeviceIdentity& d) {
        return d.is_mig && UuidMatches(d.uuid, selector.uuid, kMigPrefix, false);
      });
    case Kind::kLegacyMig:
      return UniqueMatch(devices, [&](const NvmlDeviceIdentity& d) {
        return d.is_mig && d.gpu_instance == selector.gpu_instance &&
               d.compute_instance == selector.compute_instance &&
               UuidMatches(d.parent_uuid, selector.uuid, kGpuPrefix, false);
      });
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<CudaDeviceSelector>> ParseCudaVisibleDevices(
    std::optional<std::string_view> value) {
  if (!value) return std::nullopt;
  std::vector<CudaDeviceSelector> selectors;
  std::string_view rest = *value;
  while (true) {
    const size_t comma = rest.find(',');
    auto selector = ParseEntry(text::Trim(rest.substr(0, comma)));
    if (!selector) break;
    selectors.push_back(std::move(*selector));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return selectors;
}

std::vector<std::optional<unsigned>> MapCudaOrdinals(
    const std::optional<std::vector<CudaDeviceSelector>>& selectors,
    const std::vector<NvmlDeviceIdentity>& devices) {
  std::vector<std::optional<unsigned>> ordinals(devices.size());
  unsigned next = 0;
  if (!selectors) {
    // Everything is visible, in NVML's order: by GPU, each GPU before its MIG instances, which keep the
    // order they were given in.
    std::vector<size_t> order(devices.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto& x = devices[a];
      const auto& y = devices[b];
      if (x.nvml_index != y.nvml_index) return x.nvml_index < y.nvml_index;
      return !x.is_mig && y.is_mig;
    });
    for (const size_t i : order) {
      if (devices[i].is_mig || CudaSeesGpu(devices[i])) ordinals[i] = next++;
    }
    return ordinals;
  }
  for (const auto& selector : *selectors) {
    const auto device = FindDevice(selector, devices);
    if (!device || ordinals[*device]) break;  // not a (unique) device, or one already listed: CUDA stops here
    ordinals[*device] = next++;
  }
  return ordinals;
}

}  // namespace runmon
