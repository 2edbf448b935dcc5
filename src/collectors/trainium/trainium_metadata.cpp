// The `trainium` metadata (trainium_metadata.hpp). Counts are written as integers, and only when they are
// whole, positive numbers; empty strings are left out.
#include "collectors/trainium/trainium_metadata.hpp"

#include <cmath>
#include <string>

namespace runmon::trainium {
namespace {

void PutCount(nlohmann::json& out, const char* key, const std::optional<double>& value) {
  if (value && *value >= 0 && *value < 0x1p53 && std::floor(*value) == *value) {
    out[key] = static_cast<uint64_t>(*value);
  }
}

void PutText(nlohmann::json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

}  // namespace

std::optional<nlohmann::json> DescribeTrainium(const NeuronDocument& document) {
  if (!document.hardware) return std::nullopt;
  const HardwareInfo& hardware = *document.hardware;
  nlohmann::json trainium = {{"name", "Trainium"}, {"vendor", "AWS"}};
  PutCount(trainium, "neuron_device_count", hardware.device_count);
  PutCount(trainium, "neuroncore_per_device_count", hardware.cores_per_device);
  PutText(trainium, "neuron_device_type", hardware.device_type);
  PutText(trainium, "neuron_device_version", hardware.device_version);
  PutText(trainium, "neuroncore_version", hardware.core_version);
  PutCount(trainium, "neuron_device_memory_size", hardware.device_memory_bytes);
  PutText(trainium, "logical_neuroncore_config", hardware.logical_core_config);
  if (document.instance) PutText(trainium, "instance_type", document.instance->instance_type);
  return nlohmann::json{{"trainium", std::move(trainium)}};
}

}  // namespace runmon::trainium
