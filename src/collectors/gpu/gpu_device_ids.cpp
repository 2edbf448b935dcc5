// The x_stats_gpu_device_ids parser (gpu_device_ids.hpp).
#include "collectors/gpu/gpu_device_ids.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon {

Result<std::optional<std::vector<unsigned>>> ParseGpuDeviceIds(const std::optional<std::string>& setting) {
  if (!setting || setting->empty()) return std::optional<std::vector<unsigned>>();
  const auto parsed = nlohmann::json::parse(*setting, nullptr, false);
  std::vector<unsigned> ids;
  const auto take = [&](const nlohmann::json& value) {
    if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 0xFFFF)
      return false;
    ids.push_back(value.get<unsigned>());
    return true;
  };
  if (parsed.is_array()) {
    for (const auto& value : parsed) {
      if (!take(value))
        return Error{fmt::format("x_stats_gpu_device_ids: {} is not a device index", value.dump())};
    }
  } else if (!take(parsed)) {
    return Error{fmt::format("x_stats_gpu_device_ids: expected a list of device indices, got {}", *setting)};
  }
  return std::optional<std::vector<unsigned>>(ids);
}

}  // namespace runmon
