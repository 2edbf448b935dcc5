// One neuron-monitor document (one line of its stdout, a complete JSON report; accelerators.md §2.3)
// parsed into what runmon reads of it: per Neuron runtime its pid, NeuronCore utilisation and memory
// breakdown, host and device memory and vCPU share; the instance's vCPU, memory and the devices' ECC
// counters (system_data); the hardware and instance facts for the metadata. Everything else (loaded
// models, per-vCPU figures, latency) is skipped without being decoded. A trn2.48xlarge writes documents of
// several MiB, so the parser is simdjson's On-Demand one, which reads only the fields it is asked for;
// it needs the input in a buffer with SIMDJSON_PADDING spare bytes, which the parser object keeps and
// reuses (so parsing allocates nothing once it has seen the largest document).
// A field of the wrong type (a string or null where a number belongs: W&B's mock writes none, a newer
// neuron-monitor might) leaves that one value out; malformed JSON, a document that is not an object, or one
// with none of neuron-monitor's sections is an error. Core indices are the decimal strings neuron-monitor
// writes ("0", "17"), at most kMaxCoreIndex; other keys there are skipped. A section or a device given
// twice is the later one (as JSON readers take a repeated key); -0 is read as 0. What a document makes the
// parser hold is bounded by what can be true: runtime entries without a pid and cores without a reading are
// not kept, nor runtimes beyond kMaxCoreIndex + 1 (each holds a core of its own).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::trainium {

// The largest core (and device) index read: eight times a trn2.48xlarge's 128 cores. A document naming
// more (a hostile one may name 100k) has the rest skipped, so that what one document costs is bounded.
constexpr int kMaxCoreIndex = 1023;

struct CoreMemory {
  std::optional<double> constants, model_code, model_shared_scratchpad, runtime_memory, tensors;
};

struct CoreReading {
  int core = 0;
  std::optional<double> utilization = {};  // %
  CoreMemory memory = {};                  // bytes
};

struct HostMemoryBreakdown {
  std::optional<double> application_memory, constants, dma_buffers, tensors;  // bytes
};

struct RuntimeReading {
  long pid = 0;                         // always > 0: an entry without a usable pid is not kept
  std::vector<CoreReading> cores = {};  // in the document's order, one per core index that has a reading
  std::optional<double> host_bytes = {}, device_bytes = {};
  HostMemoryBreakdown host_breakdown = {};
  std::optional<double> vcpu_user = {}, vcpu_system = {};  // %
};

struct VcpuUsage {
  std::optional<double> user, nice, system, idle, io_wait, irq, soft_irq;  // %
};

struct DeviceCounters {
  int device = 0;
  std::optional<double> mem_ecc_corrected = {}, mem_ecc_uncorrected = {}, sram_ecc_corrected = {},
                        sram_ecc_uncorrected = {};
};

struct SystemReading {
  VcpuUsage vcpu = {};
  std::optional<double> context_switches = {};
  std::optional<double> memory_total_bytes = {}, memory_used_bytes = {}, swap_total_bytes = {},
                        swap_used_bytes = {};
  std::vector<DeviceCounters> devices = {};
};

struct HardwareInfo {
  std::optional<double> device_count = {}, cores_per_device = {}, device_memory_bytes = {};
  std::string device_type = {}, device_version = {}, core_version = {}, logical_core_config = {};
};

struct InstanceInfo {
  std::string instance_type = {}, instance_id = {}, region = {}, availability_zone = {}, ami_id = {};
};

struct NeuronDocument {
  std::vector<RuntimeReading> runtimes = {};
  SystemReading system = {};
  std::optional<HardwareInfo> hardware = {};  // when the document has neuron_hardware_info
  std::optional<InstanceInfo> instance = {};  // when it has instance_info
};

// Parses documents one after another, keeping simdjson's buffers between them. Not thread-safe: one per
// reader.
class NeuronDocumentParser {
 public:
  NeuronDocumentParser();
  ~NeuronDocumentParser();
  NeuronDocumentParser(const NeuronDocumentParser&) = delete;
  NeuronDocumentParser& operator=(const NeuronDocumentParser&) = delete;

  Result<NeuronDocument> Parse(std::string_view line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace runmon::trainium
