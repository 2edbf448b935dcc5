// The IPU family's pure parsers (fuzzed: fuzz/ipu_metric_fuzz.cpp, ipu_helper_line_fuzz.cpp,
// gc_info_fuzz.cpp). A device is what gcipuinfo's getDevices() gives for one IPU: string fields in the
// order the source wrote them ("average board temp" -> "36.2 C").
//   - ParseIpuMetric is W&B's parse_metric (metrics.md B §6): the key's last word names the unit its value
//     may end with (temp C, clock MHz, power W, utilisation %, utilisation (session) %, speed GT/s); that
//     unit is stripped and appended to the key in parentheses, and what is left must be a plain decimal
//     number. Real values put a space before some units and not others ("36.2 C", "1300MHz"), so the number
//     is trimmed; "N/A", version strings, dates, PCI addresses and names are not numbers and are dropped.
//   - ParseIpuHelperLine reads one line of runmon's gcipuinfo helper (ipu_helper.hpp): {"ready": true},
//     {"request": "N", "devices": [{...}, ...]}, or {"error": "...", "missing_module": true}.
//   - ParseGcInfoDeviceList and ParseGcInfoDeviceInfo read `gc-info --list-devices` and
//     `gc-info -d N --device-info`, the fallback where the Python module is missing.
// Each refuses what its source never writes, with an error saying why, rather than guessing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace runmon::ipu {

struct IpuDevice {
  std::vector<std::pair<std::string, std::string>> fields;  // in the source's order, names unique
  // The field's value, or nullopt when the device has none of that name.
  std::optional<std::string_view> Field(std::string_view name) const;
};

struct IpuMetric {
  std::string key;  // the field's name, with " (unit)" when its unit was stripped: "clock (MHz)"
  double value = 0;
};

// W&B's parse_metric (above); nullopt for a value that is not a number.
std::optional<IpuMetric> ParseIpuMetric(std::string_view key, std::string_view value);

// Whether a parsed value can be true, by the unit its key ends with: a share within 0-100 %, a temperature
// above absolute zero and at most 200 °C, a power within 0-10 kW, a clock within 0-100 GHz, a link speed
// within 0-1000 GT/s; a count (a key ending in "count") not negative. Other fields are taken as they are.
bool IsPossible(const IpuMetric& metric);

// Limits on a helper line, past which it is refused as hostile (no real host has a thousand IPUs).
inline constexpr size_t kMaxHelperLineBytes = 4 * 1024 * 1024;
inline constexpr size_t kMaxDevices = 1024;
inline constexpr size_t kMaxFieldsPerDevice = 256;
inline constexpr size_t kMaxFieldBytes = 4096;

struct HelperMessage {
  enum class Kind { kReady, kDevices, kError };
  Kind kind = Kind::kError;
  std::optional<uint64_t> request;  // the request the helper answered (devices, error)
  std::vector<IpuDevice> devices;   // kDevices
  std::string error;                // kError: the helper's words
  bool missing_module = false;      // kError: gcipuinfo could not be imported
};

// One line of the helper's output; an error says what is wrong with it.
Result<HelperMessage> ParseIpuHelperLine(std::string_view line);

struct GcInfoListedDevice {
  uint64_t id = 0;
  std::string target;  // "PCIe", "Fabric" (empty when the line has none)
};

// The single IPUs of `gc-info --list-devices`: its "-+- Id: [N], target: [...]" lines, without the
// multi-IPU devices (target "Multi IPU", or a line followed by " |--- " member lines). An error when no
// line is a device line and the text is not an empty listing.
Result<std::vector<GcInfoListedDevice>> ParseGcInfoDeviceList(std::string_view text);

// The fields of `gc-info -d N --device-info`: the "key: value" lines after "Device Info:" (indented by two
// spaces in gc-info's output), split at the first ": " (keys hold spaces and parentheses); a key given
// twice keeps its first value. An error without that heading or any field, or for a line after it that is
// not "key: value".
Result<IpuDevice> ParseGcInfoDeviceInfo(std::string_view text);

}  // namespace runmon::ipu
