// neuron-monitor's document, read with simdjson On-Demand (see neuron_monitor_parse.hpp). Each object is
// walked field by field in the document's order (neuron-monitor's order is not promised), the fields
// runmon reads are decoded and the rest are skipped by the iterator without being looked at. simdjson
// reports a value of another type (INCORRECT_TYPE) without moving on, so such a value is simply left out;
// any other error means the JSON itself is broken and ends the parse.
#include "collectors/trainium/neuron_monitor_parse.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <simdjson.h>

namespace runmon::trainium {
namespace od = simdjson::ondemand;
using simdjson::error_code;

struct NeuronDocumentParser::State {
  od::parser parser;
  std::string buffer;  // the line, with SIMDJSON_PADDING bytes of room after it
};

namespace {

// The largest core or device index taken (a trn2.48xlarge has 128 logical cores, 16 devices).
constexpr int kMaxIndex = 1 << 16;

bool Recoverable(error_code error) {
  return error == simdjson::INCORRECT_TYPE || error == simdjson::NUMBER_ERROR ||
         error == simdjson::NUMBER_OUT_OF_RANGE;
}

// Calls on_field(key, value) for each field of `object`; stops at the first error it returns.
template <typename OnField>
error_code ForEachField(od::object object, OnField&& on_field) {
  for (auto field_result : object) {
    od::field field;
    if (auto error = std::move(field_result).get(field)) return error;
    std::string_view key;
    if (auto error = field.unescaped_key().get(key)) return error;
    od::value value = field.value();
    if (auto error = on_field(key, value)) return error;
  }
  return simdjson::SUCCESS;
}

// Walks `value`'s fields when it is an object; another type (null) is a group that is not there.
template <typename OnField>
error_code ForEachFieldOf(od::value& value, OnField&& on_field) {
  od::object object;
  if (auto error = value.get_object().get(object)) return Recoverable(error) ? simdjson::SUCCESS : error;
  return ForEachField(object, std::forward<OnField>(on_field));
}

error_code ReadNumber(od::value& value, std::optional<double>* out) {
  double number = 0;
  if (auto error = value.get_double().get(number)) return Recoverable(error) ? simdjson::SUCCESS : error;
  if (std::isfinite(number)) *out = number;
  return simdjson::SUCCESS;
}

error_code ReadString(od::value& value, std::string* out) {
  std::string_view text;
  if (auto error = value.get_string().get(text)) return Recoverable(error) ? simdjson::SUCCESS : error;
  out->assign(text);
  return simdjson::SUCCESS;
}

// A decimal index such as "17"; nullopt for anything else.
std::optional<int> ParseIndex(std::string_view text) {
  int index = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (error != std::errc{} || end != text.data() + text.size() || index < 0 || index > kMaxIndex) {
    return std::nullopt;
  }
  return index;
}

CoreReading& CoreEntry(RuntimeReading* runtime, int core) {
  for (CoreReading& reading : runtime->cores) {
    if (reading.core == core) return reading;
  }
  return runtime->cores.emplace_back(CoreReading{.core = core});
}

error_code ReadCoreCounters(od::value& in_use, RuntimeReading* runtime) {
  return ForEachFieldOf(in_use, [&](std::string_view key, od::value& counters) -> error_code {
    const auto core = ParseIndex(key);
    if (!core) return simdjson::SUCCESS;
    CoreReading& reading = CoreEntry(runtime, *core);
    return ForEachFieldOf(counters, [&](std::string_view name, od::value& value) -> error_code {
      if (name == "neuroncore_utilization") return ReadNumber(value, &reading.utilization);
      return simdjson::SUCCESS;
    });
  });
}

error_code ReadCoreMemory(od::value& per_core, RuntimeReading* runtime) {
  return ForEachFieldOf(per_core, [&](std::string_view key, od::value& usage) -> error_code {
    const auto core = ParseIndex(key);
    if (!core) return simdjson::SUCCESS;
    CoreMemory& memory = CoreEntry(runtime, *core).memory;
    return ForEachFieldOf(usage, [&](std::string_view name, od::value& value) -> error_code {
      if (name == "constants") return ReadNumber(value, &memory.constants);
      if (name == "model_code") return ReadNumber(value, &memory.model_code);
      if (name == "model_shared_scratchpad") return ReadNumber(value, &memory.model_shared_scratchpad);
      if (name == "runtime_memory") return ReadNumber(value, &memory.runtime_memory);
      if (name == "tensors") return ReadNumber(value, &memory.tensors);
      return simdjson::SUCCESS;
    });
  });
}

error_code ReadUsedBytes(od::value& used, RuntimeReading* runtime) {
  return ForEachFieldOf(used, [&](std::string_view key, od::value& value) -> error_code {
    if (key == "host") return ReadNumber(value, &runtime->host_bytes);
    if (key == "neuron_device") return ReadNumber(value, &runtime->device_bytes);
    if (key != "usage_breakdown") return simdjson::SUCCESS;
    return ForEachFieldOf(value, [&](std::string_view part, od::value& breakdown) -> error_code {
      if (part == "neuroncore_memory_usage") return ReadCoreMemory(breakdown, runtime);
      if (part != "host") return simdjson::SUCCESS;
      HostMemoryBreakdown& host = runtime->host_breakdown;
      return ForEachFieldOf(breakdown, [&](std::string_view name, od::value& bytes) -> error_code {
        if (name == "application_memory") return ReadNumber(bytes, &host.application_memory);
        if (name == "constants") return ReadNumber(bytes, &host.constants);
        if (name == "dma_buffers") return ReadNumber(bytes, &host.dma_buffers);
        if (name == "tensors") return ReadNumber(bytes, &host.tensors);
        return simdjson::SUCCESS;
      });
    });
  });
}

error_code ReadReport(od::value& report, RuntimeReading* runtime) {
  return ForEachFieldOf(report, [&](std::string_view group, od::value& value) -> error_code {
    if (group == "neuroncore_counters") {
      return ForEachFieldOf(value, [&](std::string_view key, od::value& in_use) -> error_code {
        return key == "neuroncores_in_use" ? ReadCoreCounters(in_use, runtime) : simdjson::SUCCESS;
      });
    }
    if (group == "memory_used") {
      return ForEachFieldOf(value, [&](std::string_view key, od::value& used) -> error_code {
        return key == "neuron_runtime_used_bytes" ? ReadUsedBytes(used, runtime) : simdjson::SUCCESS;
      });
    }
    if (group == "neuron_runtime_vcpu_usage") {
      return ForEachFieldOf(value, [&](std::string_view key, od::value& usage) -> error_code {
        if (key != "vcpu_usage") return simdjson::SUCCESS;
        return ForEachFieldOf(usage, [&](std::string_view mode, od::value& percent) -> error_code {
          if (mode == "user") return ReadNumber(percent, &runtime->vcpu_user);
          if (mode == "system") return ReadNumber(percent, &runtime->vcpu_system);
          return simdjson::SUCCESS;
        });
      });
    }
    return simdjson::SUCCESS;  // execution_stats and groups of newer releases
  });
}

error_code ReadRuntimes(od::value& entries, std::vector<RuntimeReading>* runtimes) {
  od::array array;
  if (auto error = entries.get_array().get(array)) return Recoverable(error) ? simdjson::SUCCESS : error;
  for (auto entry_result : array) {
    od::value entry;
    if (auto error = std::move(entry_result).get(entry)) return error;
    RuntimeReading runtime;
    bool is_object = true;
    od::object object;
    if (auto error = entry.get_object().get(object)) {
      if (!Recoverable(error)) return error;
      is_object = false;
    }
    if (!is_object) continue;
    const error_code error = ForEachField(object, [&](std::string_view key, od::value& value) -> error_code {
      if (key == "pid") {
        int64_t pid = 0;
        if (auto pid_error = value.get_int64().get(pid)) {
          return Recoverable(pid_error) ? simdjson::SUCCESS : pid_error;
        }
        if (pid > 0 && pid <= std::numeric_limits<int32_t>::max()) runtime.pid = static_cast<long>(pid);
        return simdjson::SUCCESS;
      }
      if (key == "report") return ReadReport(value, &runtime);
      return simdjson::SUCCESS;
    });
    if (error) return error;
    runtimes->push_back(std::move(runtime));
  }
  return simdjson::SUCCESS;
}

error_code ReadVcpu(od::value& usage, SystemReading* system) {
  return ForEachFieldOf(usage, [&](std::string_view key, od::value& value) -> error_code {
    if (key == "context_switch_count") return ReadNumber(value, &system->context_switches);
    if (key != "average_usage") return simdjson::SUCCESS;  // usage_data: per vCPU, not read
    VcpuUsage& vcpu = system->vcpu;
    return ForEachFieldOf(value, [&](std::string_view mode, od::value& percent) -> error_code {
      if (mode == "user") return ReadNumber(percent, &vcpu.user);
      if (mode == "nice") return ReadNumber(percent, &vcpu.nice);
      if (mode == "system") return ReadNumber(percent, &vcpu.system);
      if (mode == "idle") return ReadNumber(percent, &vcpu.idle);
      if (mode == "io_wait") return ReadNumber(percent, &vcpu.io_wait);
      if (mode == "irq") return ReadNumber(percent, &vcpu.irq);
      if (mode == "soft_irq") return ReadNumber(percent, &vcpu.soft_irq);
      return simdjson::SUCCESS;
    });
  });
}

error_code ReadHardwareCounters(od::value& counters, SystemReading* system) {
  return ForEachFieldOf(counters, [&](std::string_view key, od::value& value) -> error_code {
    if (key != "neuron_devices") return simdjson::SUCCESS;
    od::array devices;
    if (auto error = value.get_array().get(devices)) return Recoverable(error) ? simdjson::SUCCESS : error;
    for (auto device_result : devices) {
      od::value device;
      if (auto error = std::move(device_result).get(device)) return error;
      DeviceCounters entry;
      std::optional<double> index;
      const error_code error = ForEachFieldOf(device, [&](std::string_view name, od::value& count) {
        if (name == "neuron_device_index") return ReadNumber(count, &index);
        if (name == "mem_ecc_corrected") return ReadNumber(count, &entry.mem_ecc_corrected);
        if (name == "mem_ecc_uncorrected") return ReadNumber(count, &entry.mem_ecc_uncorrected);
        if (name == "sram_ecc_corrected") return ReadNumber(count, &entry.sram_ecc_corrected);
        if (name == "sram_ecc_uncorrected") return ReadNumber(count, &entry.sram_ecc_uncorrected);
        return simdjson::SUCCESS;
      });
      if (error) return error;
      // A device without a sound index cannot be named.
      if (index && *index >= 0 && *index <= kMaxIndex && std::floor(*index) == *index) {
        entry.device = static_cast<int>(*index);
        system->devices.push_back(entry);
      }
    }
    return simdjson::SUCCESS;
  });
}

error_code ReadSystem(od::value& system_data, SystemReading* system) {
  return ForEachFieldOf(system_data, [&](std::string_view group, od::value& value) -> error_code {
    if (group == "vcpu_usage") return ReadVcpu(value, system);
    if (group == "neuron_hw_counters") return ReadHardwareCounters(value, system);
    if (group != "memory_info") return simdjson::SUCCESS;
    return ForEachFieldOf(value, [&](std::string_view key, od::value& bytes) -> error_code {
      if (key == "memory_total_bytes") return ReadNumber(bytes, &system->memory_total_bytes);
      if (key == "memory_used_bytes") return ReadNumber(bytes, &system->memory_used_bytes);
      if (key == "swap_total_bytes") return ReadNumber(bytes, &system->swap_total_bytes);
      if (key == "swap_used_bytes") return ReadNumber(bytes, &system->swap_used_bytes);
      return simdjson::SUCCESS;
    });
  });
}

error_code ReadHardware(od::value& value, HardwareInfo* hardware) {
  return ForEachFieldOf(value, [&](std::string_view key, od::value& field) -> error_code {
    if (key == "neuron_device_count") return ReadNumber(field, &hardware->device_count);
    if (key == "neuroncore_per_device_count") return ReadNumber(field, &hardware->cores_per_device);
    if (key == "neuron_device_memory_size") return ReadNumber(field, &hardware->device_memory_bytes);
    if (key == "neuron_device_type") return ReadString(field, &hardware->device_type);
    if (key == "neuron_device_version") return ReadString(field, &hardware->device_version);
    if (key == "neuroncore_version") return ReadString(field, &hardware->core_version);
    if (key == "logical_neuroncore_config") {
      // A string in the guide; a number would be as meaningful, so both are kept as text.
      std::optional<double> number;
      if (auto error = ReadNumber(field, &number)) return error;
      if (number) {
        hardware->logical_core_config = fmt::format("{}", *number);
        return simdjson::SUCCESS;
      }
      return ReadString(field, &hardware->logical_core_config);
    }
    return simdjson::SUCCESS;
  });
}

error_code ReadInstance(od::value& value, InstanceInfo* instance) {
  return ForEachFieldOf(value, [&](std::string_view key, od::value& field) -> error_code {
    if (key == "instance_type") return ReadString(field, &instance->instance_type);
    if (key == "instance_id") return ReadString(field, &instance->instance_id);
    if (key == "instance_region") return ReadString(field, &instance->region);
    if (key == "instance_availability_zone") return ReadString(field, &instance->availability_zone);
    if (key == "ami_id") return ReadString(field, &instance->ami_id);
    return simdjson::SUCCESS;
  });
}

}  // namespace

NeuronDocumentParser::NeuronDocumentParser() : state_(std::make_unique<State>()) {}
NeuronDocumentParser::~NeuronDocumentParser() = default;

Result<NeuronDocument> NeuronDocumentParser::Parse(std::string_view line) {
  std::string& buffer = state_->buffer;
  buffer.reserve(line.size() + simdjson::SIMDJSON_PADDING);
  buffer.assign(line);
  od::document document;
  if (auto error = state_->parser.iterate(buffer.data(), buffer.size(), buffer.capacity()).get(document)) {
    return Error{fmt::format("not JSON: {}", simdjson::error_message(error))};
  }
  od::object top;
  if (auto error = document.get_object().get(top)) {
    return Error{Recoverable(error) ? std::string("not a JSON object")
                                    : fmt::format("not JSON: {}", simdjson::error_message(error))};
  }
  NeuronDocument parsed;
  bool has_section = false;
  const error_code error = ForEachField(top, [&](std::string_view key, od::value& value) -> error_code {
    if (key == "neuron_runtime_data") {
      has_section = true;
      return ReadRuntimes(value, &parsed.runtimes);
    }
    if (key == "system_data") {
      has_section = true;
      return ReadSystem(value, &parsed.system);
    }
    if (key == "neuron_hardware_info") {
      has_section = true;
      return ReadHardware(value, &parsed.hardware.emplace());
    }
    if (key == "instance_info") return ReadInstance(value, &parsed.instance.emplace());
    return simdjson::SUCCESS;
  });
  if (error) return Error{fmt::format("not JSON: {}", simdjson::error_message(error))};
  if (!document.current_location().error()) return Error{"not JSON: data after the document"};
  if (!has_section) return Error{"not a neuron-monitor document (no neuron_runtime_data)"};
  return parsed;
}

}  // namespace runmon::trainium
