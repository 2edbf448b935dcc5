// The IPU family's parsers (see ipu_parse.hpp for what each reads and why).
#include "collectors/ipu/ipu_parse.hpp"

#include <cmath>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collectors/linux/parse/text.hpp"

namespace runmon::ipu {
namespace {

using nlohmann::ordered_json;

// parse_metric's rules, in W&B's order: the key's ending, the unit its value may end with.
struct UnitRule {
  std::string_view key_ending;
  std::string_view unit;
};
constexpr UnitRule kUnitRules[] = {
    {"temp", "C"},    {"clock", "MHz"}, {"power", "W"}, {"utilisation", "%"}, {"utilisation (session)", "%"},
    {"speed", "GT/s"}};

// What a value under each unit can be (see IsPossible).
struct UnitRange {
  std::string_view key_ending;
  double low, high;
  bool low_inclusive = true;
};
constexpr UnitRange kUnitRanges[] = {{" (%)", 0, 100},      {" (C)", -273.15, 200, false},
                                     {" (W)", 0, 10'000},   {" (MHz)", 0, 100'000},
                                     {" (GT/s)", 0, 1'000}, {"count", 0, 1e300}};

Result<IpuDevice> ReadDevice(const ordered_json& device, size_t index) {
  if (!device.is_object()) return Error{fmt::format("device {} is not an object", index)};
  if (device.size() > kMaxFieldsPerDevice) {
    return Error{
        fmt::format("device {} has {} fields (at most {})", index, device.size(), kMaxFieldsPerDevice)};
  }
  IpuDevice out;
  out.fields.reserve(device.size());
  for (const auto& [name, value] : device.items()) {
    if (!value.is_string())
      return Error{fmt::format("device {}: the value of \"{}\" is not a string", index, name)};
    const auto& text = value.get_ref<const std::string&>();
    if (name.size() > kMaxFieldBytes || text.size() > kMaxFieldBytes) {
      return Error{fmt::format("device {}: a field over {} bytes", index, kMaxFieldBytes)};
    }
    out.fields.emplace_back(name, text);
  }
  return out;
}

Result<std::optional<uint64_t>> ReadRequest(const ordered_json& message) {
  const auto it = message.find("request");
  if (it == message.end()) return std::optional<uint64_t>{};
  if (!it->is_string()) return Error{"\"request\" is not a string"};
  const auto number = text::ParseU64(it->get_ref<const std::string&>());
  if (!number) return Error{"\"request\" is not a request number"};
  return std::optional<uint64_t>(*number);
}

// "Id: [0], target: [Fabric], IPU-M host: [10.1.5.10]": the bracketed value of `name`, or nullopt.
std::optional<std::string_view> BracketedField(std::string_view line, std::string_view name) {
  const std::string marker = std::string(name) + ": [";
  size_t at = 0;
  while ((at = line.find(marker, at)) != std::string_view::npos) {
    // The name is a word of its own ("DNC Id" is not "Id").
    if (at == 0 || (line[at - 1] == ' ' && (at < 2 || line[at - 2] == ',' || line[at - 2] == '-'))) {
      const size_t open = at + marker.size();
      const size_t close = line.find(']', open);
      if (close == std::string_view::npos) return std::nullopt;
      return line.substr(open, close - open);
    }
    at += marker.size();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> IpuDevice::Field(std::string_view name) const {
  for (const auto& [field, value] : fields) {
    if (field == name) return std::string_view(value);
  }
  return std::nullopt;
}

std::optional<IpuMetric> ParseIpuMetric(std::string_view key, std::string_view value) {
  std::string parsed_key(key);
  for (const UnitRule& rule : kUnitRules) {
    if (parsed_key.ends_with(rule.key_ending) && value.ends_with(rule.unit)) {
      value.remove_suffix(rule.unit.size());
      parsed_key += fmt::format(" ({})", rule.unit);
    }
  }
  const auto number = text::ParseDecimal(text::Trim(value));
  if (!number) return std::nullopt;
  return IpuMetric{std::move(parsed_key), *number};
}

bool IsPossible(const IpuMetric& metric) {
  if (!std::isfinite(metric.value)) return false;
  for (const UnitRange& range : kUnitRanges) {
    if (!metric.key.ends_with(range.key_ending)) continue;
    const bool above_low = range.low_inclusive ? metric.value >= range.low : metric.value > range.low;
    return above_low && metric.value <= range.high;
  }
  return true;
}

Result<HelperMessage> ParseIpuHelperLine(std::string_view line) {
  if (line.size() > kMaxHelperLineBytes) {
    return Error{fmt::format("a line of {} bytes (at most {})", line.size(), kMaxHelperLineBytes)};
  }
  const ordered_json message = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return Error{"not JSON"};
  if (!message.is_object()) return Error{"not a JSON object"};
  auto request = ReadRequest(message);
  if (!request.ok()) return Error{request.error()};
  HelperMessage out;
  out.request = *request;
  if (const auto error = message.find("error"); error != message.end()) {
    if (!error->is_string()) return Error{"\"error\" is not a string"};
    out.kind = HelperMessage::Kind::kError;
    out.error = text::Trim(error->get_ref<const std::string&>()).substr(0, kMaxFieldBytes);
    if (out.error.empty()) out.error = "an error without a message";
    const auto missing = message.find("missing_module");
    out.missing_module = missing != message.end() && missing->is_boolean() && missing->get<bool>();
    return out;
  }
  if (const auto devices = message.find("devices"); devices != message.end()) {
    if (!devices->is_array()) return Error{"\"devices\" is not a list"};
    if (devices->size() > kMaxDevices) {
      return Error{fmt::format("{} devices (at most {})", devices->size(), kMaxDevices)};
    }
    out.kind = HelperMessage::Kind::kDevices;
    out.devices.reserve(devices->size());
    for (size_t i = 0; i < devices->size(); ++i) {
      auto device = ReadDevice((*devices)[i], i);
      if (!device.ok()) return Error{device.error()};
      out.devices.push_back(std::move(*device));
    }
    return out;
  }
  if (const auto ready = message.find("ready"); ready != message.end() && *ready == true) {
    out.kind = HelperMessage::Kind::kReady;
    return out;
  }
  return Error{"neither devices, an error nor ready"};
}

Result<std::vector<GcInfoListedDevice>> ParseGcInfoDeviceList(std::string_view text) {
  std::vector<GcInfoListedDevice> out;
  bool listing = false;          // a line of the listing was seen
  bool previous_single = false;  // the last device line was taken as a single IPU
  text::Lines lines(text);
  for (std::string_view line; lines.Next(line);) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with(" |--- ")) {
      // A member of the multi-IPU device above: that device is not a single IPU.
      if (previous_single) out.pop_back();
      previous_single = false;
      listing = true;
      continue;
    }
    if (!line.starts_with("-+- ")) {
      listing = listing || line.starts_with("Graphcore device listing") || line.starts_with("Partition: ");
      previous_single = false;
      continue;
    }
    listing = true;
    previous_single = false;
    const auto id = BracketedField(line, "Id");
    const auto number = id ? text::ParseU64(*id) : std::nullopt;
    if (!number) return Error{fmt::format("a device line without an Id: {}", line.substr(0, 80))};
    const std::string target(BracketedField(line, "target").value_or(""));
    if (target == "Multi IPU") continue;
    out.push_back({*number, target});
    previous_single = true;
  }
  if (!listing) return Error{"not a gc-info device listing"};
  return out;
}

Result<IpuDevice> ParseGcInfoDeviceInfo(std::string_view text) {
  IpuDevice out;
  bool in_info = false;
  text::Lines lines(text);
  for (std::string_view line; lines.Next(line);) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!in_info) {
      in_info = text::Trim(line) == "Device Info:";
      continue;
    }
    if (text::Trim(line).empty()) continue;
    const std::string_view field = text::Trim(line);
    std::string_view name = field, value;
    if (const size_t split = field.find(": "); split != std::string_view::npos) {
      name = field.substr(0, split);
      value = text::Trim(field.substr(split + 2));
    } else if (field.ends_with(':')) {
      name = field.substr(0, field.size() - 1);  // "key:" with nothing after it
    } else {
      return Error{fmt::format("a device info line that is not \"key: value\": {}", field.substr(0, 80))};
    }
    name = text::Trim(name);
    if (name.empty()) return Error{"a device info line without a key"};
    if (name.size() > kMaxFieldBytes || value.size() > kMaxFieldBytes) {
      return Error{fmt::format("a device info field over {} bytes", kMaxFieldBytes)};
    }
    if (out.fields.size() >= kMaxFieldsPerDevice) {
      return Error{fmt::format("more than {} device info fields", kMaxFieldsPerDevice)};
    }
    if (out.Field(name)) continue;  // the first of a name twice wins
    out.fields.emplace_back(name, value);
  }
  if (!in_info) return Error{"no \"Device Info:\" heading"};
  if (out.fields.empty()) return Error{"no field after \"Device Info:\""};
  return out;
}

}  // namespace runmon::ipu
