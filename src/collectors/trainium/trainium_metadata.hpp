// The run metadata's `trainium` object, from a neuron-monitor document's neuron_hardware_info and
// instance_info: W&B's {name, vendor, neuron_device_count, neuroncore_per_device_count} (which W&B never
// fills: it asserts the wrong JSON type), with the device type and versions, each device's memory, the
// logical core setting and the instance type where the document has them.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "collectors/trainium/neuron_monitor_parse.hpp"

namespace runmon::trainium {

// {"trainium": {...}}, or nullopt when the document has no hardware section.
std::optional<nlohmann::json> DescribeTrainium(const NeuronDocument& document);

}  // namespace runmon::trainium
