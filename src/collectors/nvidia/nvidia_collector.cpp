// The NVML collector (see nvidia_collector.hpp). Every metric family is asked per device; NVML's answer
// decides what happens next:
//   - success: the value is reported;
//   - NOT_SUPPORTED, FUNCTION_NOT_FOUND, DEPRECATED, NO_PERMISSION: the family is switched off for that
//     device for good (no failing call every tick; MIG instances and passive-cooled boards hit this);
//   - GPU_IS_LOST, RESET_REQUIRED, GPU_NOT_FOUND: the device is gone; it is reported once (the collector
//     shows as degraded) and not asked again; the other devices carry on;
//   - anything else: nothing this tick, asked again next tick.
// A family whose function the driver lacks is never asked. Values that cannot be real (a memory total of
// 0) are left out, never replaced by a made-up number.
#include "collectors/nvidia/nvidia_collector.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/nvidia/cuda_devices.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

using nvml::Return;

enum Family : size_t {
  kUtilization,
  kMemory,
  kMemoryV2,
  kTemperature,
  kTemperatureV,
  kPower,
  kPowerLimit,
  kEnergy,
  kClockSm,
  kClockMem,
  kClockGraphics,
  kEccCorrected,
  kEccUncorrected,
  kEncoder,
  kFan,
  kClockReasons,
  kComputeProcesses,
  kGraphicsProcesses,
  kProcessUtilization,
  kGpm,
  kFamilyCount
};

enum class Outcome { kValue, kSwitchedOff, kLost, kRetry };

Outcome Classify(Return code) {
  switch (code) {
    case nvml::kSuccess:
      return Outcome::kValue;
    case nvml::kNotSupported:
    case nvml::kFunctionNotFound:
    case nvml::kDeprecated:
    case nvml::kNoPermission:
      return Outcome::kSwitchedOff;
    case nvml::kGpuIsLost:
    case nvml::kResetRequired:
    case nvml::kGpuNotFound:
      return Outcome::kLost;
    default:
      return Outcome::kRetry;
  }
}

std::string_view ArchitectureName(unsigned architecture) {
  switch (architecture) {
    case 2:
      return "Kepler";
    case 3:
      return "Maxwell";
    case 4:
      return "Pascal";
    case 5:
      return "Volta";
    case 6:
      return "Turing";
    case 7:
      return "Ampere";
    case 8:
      return "Ada";
    case 9:
      return "Hopper";
    case 10:
      return "Blackwell";
    default:
      return {};
  }
}

// GPM metrics: NVML id, key leaf, factor (PCIe and NVLink come in MiB/s; runmon reports bytes/s).
struct GpmKey {
  unsigned id;
  std::string_view leaf;
  double factor;
};
constexpr std::array kGpmKeys = {
    GpmKey{2, "smActive", 1.0},
    GpmKey{3, "smOccupancy", 1.0},
    GpmKey{5, "pipeTensorActive", 1.0},
    GpmKey{10, "dramActive", 1.0},
    GpmKey{11, "pipeFp64Active", 1.0},
    GpmKey{12, "pipeFp32Active", 1.0},
    GpmKey{13, "pipeFp16Active", 1.0},
    GpmKey{7, "pipeTensorHmmaActive", 1.0},
    GpmKey{20, "pcieTxBytes", 1048576.0},
    GpmKey{21, "pcieRxBytes", 1048576.0},
    GpmKey{61, "nvlinkTxBytes", 1048576.0},
    GpmKey{60, "nvlinkRxBytes", 1048576.0},
};
static_assert(kGpmKeys.size() <= nvml::kGpmMetricsCapacity);

struct GpuDevice {
  unsigned key_index = 0;        // i in gpu.{i}
  size_t identity_position = 0;  // in the list of every device NVML enumerated (for CUDA ordinals)
  nvml::Device handle = nullptr;
  NvmlDeviceIdentity identity;
  std::string name;
  std::string pci_bus_id;
  unsigned long long memory_total = 0;
  unsigned cuda_cores = 0;
  std::string architecture;
  std::bitset<kFamilyCount> off;
  bool lost = false;
  std::string lost_reason;
  std::optional<unsigned long long> energy_start_mj;
  unsigned long long process_samples_seen_us = 0;
  nvml::GpmSample gpm_previous = nullptr;
  nvml::GpmSample gpm_current = nullptr;
  std::chrono::steady_clock::time_point gpm_previous_time;
};

class NvidiaCollector final : public Collector {
 public:
  NvidiaCollector(std::unique_ptr<nvml::Library> library, NvidiaOptions options)
      : library_(std::move(library)), api_(library_->api()), options_(std::move(options)) {}

  ~NvidiaCollector() override {
    for (auto& device : devices_) {
      for (auto sample : {device.gpm_previous, device.gpm_current}) {
        if (sample != nullptr && api_.gpm_sample_free != nullptr) api_.gpm_sample_free(sample);
      }
    }
  }

  std::string_view Name() const override { return "nvidia"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (!started_) {
      if (auto status = Start(); !status) return status;
    }
    ancestors_this_tick_.clear();
    gpu_processes_this_tick_.clear();
    for (auto& device : devices_) {
      if (device.lost) continue;
      CollectDevice(device, out);
      if (device.lost) lost_reasons_.push_back(LostMessage(device));
    }
    // Membership is kept for the processes still on a GPU; a PID that left every list is forgotten (so a
    // reused PID is looked at afresh).
    std::erase_if(membership_,
                  [&](const auto& entry) { return gpu_processes_this_tick_.count(entry.first) == 0; });
    if (!lost_reasons_.empty()) {
      std::string message;
      for (const auto& reason : lost_reasons_) message += (message.empty() ? "" : "; ") + reason;
      return Error{message};
    }
    return OkStatus();
  }

  // The device walk: GPUs in NVML order, then the MIG instances of GPUs in MIG mode.
  Status Start() {
    if (auto status = library_->Init(); !status) return status;
    unsigned count = 0;
    if (const Return code = api_.device_get_count(&count); code != nvml::kSuccess) {
      return Error{fmt::format("NVML device count: {}", library_->ErrorString(code))};
    }
    std::vector<GpuDevice> gpus;
    std::vector<GpuDevice> instances;
    for (unsigned index = 0; index < count; ++index) {
      nvml::Device handle = nullptr;
      if (api_.device_get_handle_by_index(index, &handle) != nvml::kSuccess) continue;
      const bool selected = !options_.device_ids ||
                            std::find(options_.device_ids->begin(), options_.device_ids->end(), index) !=
                                options_.device_ids->end();
      GpuDevice gpu = Describe(handle, index);
      gpu.key_index = index;
      gpu.identity_position = all_identities_.size();
      all_identities_.push_back(gpu.identity);
      const size_t gpu_position = gpu.identity_position;
      if (api_.device_get_mig_mode != nullptr && api_.device_get_max_mig_device_count != nullptr &&
          api_.device_get_mig_device_handle_by_index != nullptr) {
        unsigned current = 0, pending = 0, slots = 0;
        if (api_.device_get_mig_mode(handle, &current, &pending) == nvml::kSuccess && current == 1 &&
            api_.device_get_max_mig_device_count(handle, &slots) == nvml::kSuccess) {
          all_identities_[gpu_position].mig_enabled = true;
          gpu.identity.mig_enabled = true;
          for (unsigned slot = 0; slot < slots; ++slot) {
            nvml::Device mig = nullptr;
            if (api_.device_get_mig_device_handle_by_index(handle, slot, &mig) != nvml::kSuccess) continue;
            GpuDevice instance = Describe(mig, index);
            instance.identity.is_mig = true;
            instance.identity.parent_uuid = gpu.identity.uuid;
            unsigned id = 0;
            if (api_.device_get_gpu_instance_id != nullptr &&
                api_.device_get_gpu_instance_id(mig, &id) == nvml::kSuccess) {
              instance.identity.gpu_instance = id;
            }
            if (api_.device_get_compute_instance_id != nullptr &&
                api_.device_get_compute_instance_id(mig, &id) == nvml::kSuccess) {
              instance.identity.compute_instance = id;
            }
            instance.identity_position = all_identities_.size();
            all_identities_.push_back(instance.identity);
            if (selected) instances.push_back(std::move(instance));
          }
        }
      }
      if (selected) gpus.push_back(std::move(gpu));
    }
    unsigned next_index = count;
    for (auto& instance : instances) instance.key_index = next_index++;
    devices_ = std::move(gpus);
    for (auto& instance : instances) devices_.push_back(std::move(instance));
    for (const auto& device : devices_) {
      if (device.lost) lost_reasons_.push_back(LostMessage(device));  // lost during the walk itself
    }
    started_ = true;
    if (options_.publish_metadata) options_.publish_metadata(Metadata());
    return OkStatus();
  }

  nlohmann::json Metadata() const {
    nlohmann::json meta = nlohmann::json::object();
    const auto& identities = all_identities_;
    const auto ordinals = MapCudaOrdinals(
        ParseCudaVisibleDevices(options_.cuda_visible_devices
                                    ? std::optional<std::string_view>(*options_.cuda_visible_devices)
                                    : std::nullopt),
        identities);
    nlohmann::json gpu_nvidia = nlohmann::json::array();
    nlohmann::json described = nlohmann::json::array();
    unsigned gpu_count = 0;
    for (size_t i = 0; i < devices_.size(); ++i) {
      const GpuDevice& device = devices_[i];
      nlohmann::json entry = {{"key", fmt::format("gpu.{}", device.key_index)},
                              {"nvmlIndex", device.identity.nvml_index}};
      if (!device.name.empty()) entry["name"] = device.name;
      if (!device.identity.uuid.empty()) entry["uuid"] = device.identity.uuid;
      if (!device.pci_bus_id.empty()) entry["pciBusId"] = device.pci_bus_id;
      if (device.memory_total > 0) entry["memoryTotal"] = std::to_string(device.memory_total);
      if (const size_t at = device.identity_position; at < ordinals.size() && ordinals[at]) {
        entry["cudaOrdinal"] = *ordinals[at];
      }
      if (device.identity.mig_enabled) entry["migMode"] = true;
      if (device.identity.is_mig) {
        nlohmann::json mig = {{"parentUuid", device.identity.parent_uuid}};
        if (device.identity.gpu_instance) mig["gpuInstance"] = *device.identity.gpu_instance;
        if (device.identity.compute_instance) mig["computeInstance"] = *device.identity.compute_instance;
        entry["mig"] = mig;
      } else {
        ++gpu_count;
        nlohmann::json info = nlohmann::json::object();
        if (!device.name.empty()) info["name"] = device.name;
        if (device.memory_total > 0) info["memoryTotal"] = std::to_string(device.memory_total);
        if (device.cuda_cores > 0) info["cudaCores"] = device.cuda_cores;
        if (!device.architecture.empty()) info["architecture"] = device.architecture;
        if (!device.identity.uuid.empty()) info["uuid"] = device.identity.uuid;
        gpu_nvidia.push_back(info);
      }
      described.push_back(entry);
    }
    if (gpu_count > 0) {
      meta["gpu_count"] = gpu_count;
      if (!devices_.front().name.empty()) meta["gpu"] = devices_.front().name;
      meta["gpu_nvidia"] = gpu_nvidia;
    }
    nlohmann::json nvidia = {{"devices", described}, {"library", library_->path()}};
    char driver[96] = {};
    if (api_.system_get_driver_version != nullptr &&
        api_.system_get_driver_version(driver, sizeof(driver)) == nvml::kSuccess) {
      nvidia["driverVersion"] = std::string(driver, strnlen(driver, sizeof(driver)));
    }
    int cuda = 0;
    if (api_.system_get_cuda_driver_version != nullptr &&
        api_.system_get_cuda_driver_version(&cuda) == nvml::kSuccess && cuda > 0) {
      meta["cuda_version"] = fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
    }
    if (options_.cuda_visible_devices) nvidia["cudaVisibleDevices"] = *options_.cuda_visible_devices;
    meta["runmon"] = {{"nvidia", nvidia}};
    return meta;
  }

 private:
  GpuDevice Describe(nvml::Device handle, unsigned nvml_index) {
    GpuDevice device;
    device.handle = handle;
    device.identity.nvml_index = nvml_index;
    char text[96] = {};
    if (api_.device_get_name != nullptr &&
        api_.device_get_name(handle, text, sizeof(text)) == nvml::kSuccess) {
      device.name = std::string(text, strnlen(text, sizeof(text)));
    }
    std::memset(text, 0, sizeof(text));
    if (api_.device_get_uuid != nullptr &&
        api_.device_get_uuid(handle, text, sizeof(text)) == nvml::kSuccess) {
      device.identity.uuid = std::string(text, strnlen(text, sizeof(text)));
    }
    nvml::PciInfo pci{};
    if (api_.device_get_pci_info != nullptr && api_.device_get_pci_info(handle, &pci) == nvml::kSuccess) {
      device.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof(pci.bus_id)));
    }
    if (auto memory = ReadMemory(device)) device.memory_total = memory->total;
    unsigned value = 0;
    if (api_.device_get_num_gpu_cores != nullptr &&
        api_.device_get_num_gpu_cores(handle, &value) == nvml::kSuccess) {
      device.cuda_cores = value;
    }
    if (api_.device_get_architecture != nullptr &&
        api_.device_get_architecture(handle, &value) == nvml::kSuccess) {
      device.architecture = std::string(ArchitectureName(value));
    }
    if (api_.gpm_query_device_support != nullptr) {
      nvml::GpmSupport support{1, 0};
      if (api_.gpm_query_device_support(handle, &support) != nvml::kSuccess ||
          support.is_supported_device == 0) {
        device.off.set(kGpm);
      }
    } else {
      device.off.set(kGpm);
    }
    return device;
  }

  // Memory: v2 (used without the driver's reservation, as nvidia-smi shows it) when the driver has it.
  struct MemoryReading {
    unsigned long long total;
    unsigned long long used;
  };
  std::optional<MemoryReading> ReadMemory(GpuDevice& device) {
    if (!device.off.test(kMemoryV2) && api_.device_get_memory_info_v2 != nullptr) {
      nvml::MemoryV2 memory{};
      memory.version = nvml::kMemoryV2Version;
      const Return code = api_.device_get_memory_info_v2(device.handle, &memory);
      if (Handle(device, kMemoryV2, code, "memory")) return MemoryReading{memory.total, memory.used};
      if (device.lost || !device.off.test(kMemoryV2)) return std::nullopt;
    }
    if (device.off.test(kMemory) || api_.device_get_memory_info == nullptr) return std::nullopt;
    nvml::Memory memory{};
    if (Handle(device, kMemory, api_.device_get_memory_info(device.handle, &memory), "memory")) {
      return MemoryReading{memory.total, memory.used};
    }
    return std::nullopt;
  }

  // True when `code` is success; otherwise switches the family off, marks the device lost, or leaves it
  // for the next tick.
  bool Handle(GpuDevice& device, Family family, Return code, std::string_view what) {
    switch (Classify(code)) {
      case Outcome::kValue:
        return true;
      case Outcome::kSwitchedOff:
        device.off.set(family);
        return false;
      case Outcome::kLost:
        device.lost = true;
        device.lost_reason = fmt::format("{} answered: {}", what, library_->ErrorString(code));
        return false;
      case Outcome::kRetry:
        return false;
    }
    return false;
  }

  // Whether `family` should be asked: the driver has the function and the device has not said no.
  template <typename Function>
  bool Ask(const GpuDevice& device, Family family, Function function) const {
    return function != nullptr && !device.off.test(family) && !device.lost;
  }

  void CollectDevice(GpuDevice& device, MetricBatch& out) {
    const std::string prefix = fmt::format("gpu.{}.", device.key_index);
    const auto add = [&](std::string_view leaf, double value) { out.Add(prefix + std::string(leaf), value); };
    DeviceValues values;

    if (Ask(device, kUtilization, api_.device_get_utilization_rates)) {
      nvml::Utilization utilization{};
      if (Handle(device, kUtilization, api_.device_get_utilization_rates(device.handle, &utilization),
                 "utilization")) {
        values.gpu = utilization.gpu;
        values.memory = utilization.memory;
      }
    }
    if (!device.lost) {
      if (auto memory = ReadMemory(device); memory && memory->total > 0) {
        values.memory_total = memory->total;
        values.memory_used = memory->used;
      }
    }
    if (Ask(device, kTemperature, api_.device_get_temperature)) {
      unsigned temperature = 0;
      if (Handle(device, kTemperature,
                 api_.device_get_temperature(device.handle, nvml::kTemperatureGpu, &temperature),
                 "temperature")) {
        values.temp = temperature;
      }
    }
    if (Ask(device, kPower, api_.device_get_power_usage)) {
      unsigned milliwatts = 0;
      if (Handle(device, kPower, api_.device_get_power_usage(device.handle, &milliwatts), "power")) {
        values.power_watts = milliwatts / 1000.0;
      }
    }
    if (Ask(device, kPowerLimit, api_.device_get_enforced_power_limit)) {
      unsigned milliwatts = 0;
      if (Handle(device, kPowerLimit, api_.device_get_enforced_power_limit(device.handle, &milliwatts),
                 "power limit") &&
          milliwatts > 0) {
        values.power_limit_watts = milliwatts / 1000.0;
      }
    }

    if (values.gpu) add("gpu", *values.gpu);
    if (values.memory) add("memory", *values.memory);
    if (values.memory_total) {
      add("memoryAllocated",
          100.0 * static_cast<double>(*values.memory_used) / static_cast<double>(*values.memory_total));
      add("memoryAllocatedBytes", static_cast<double>(*values.memory_used));
    }
    if (values.temp) add("temp", *values.temp);
    if (values.power_watts) add("powerWatts", *values.power_watts);
    if (values.power_limit_watts) add("enforcedPowerLimitWatts", *values.power_limit_watts);
    if (values.power_watts && values.power_limit_watts) {
      add("powerPercent", 100.0 * *values.power_watts / *values.power_limit_watts);
    }

    static constexpr std::array<std::tuple<Family, unsigned, std::string_view>, 3> kClocks = {
        std::tuple{kClockSm, nvml::kClockSm, "smClock"},
        std::tuple{kClockMem, nvml::kClockMem, "memoryClock"},
        std::tuple{kClockGraphics, nvml::kClockGraphics, "graphicsClock"}};
    for (const auto& [family, clock, leaf] : kClocks) {
      if (!Ask(device, family, api_.device_get_clock_info)) continue;
      unsigned mhz = 0;
      if (Handle(device, family, api_.device_get_clock_info(device.handle, clock, &mhz), leaf))
        add(leaf, mhz);
    }
    static constexpr std::array<std::tuple<Family, unsigned, std::string_view>, 2> kEcc = {
        std::tuple{kEccCorrected, nvml::kMemoryErrorCorrected, "correctedMemoryErrors"},
        std::tuple{kEccUncorrected, nvml::kMemoryErrorUncorrected, "unCorrectedMemoryErrors"}};
    for (const auto& [family, type, leaf] : kEcc) {
      if (!Ask(device, family, api_.device_get_memory_error_counter)) continue;
      unsigned long long count = 0;
      // Volatile (since the driver loaded) device memory errors, as W&B reads them.
      if (Handle(device, family,
                 api_.device_get_memory_error_counter(device.handle, type, nvml::kVolatileEcc,
                                                      nvml::kMemoryLocationDevice, &count),
                 leaf)) {
        add(leaf, static_cast<double>(count));
      }
    }
    if (Ask(device, kEncoder, api_.device_get_encoder_utilization)) {
      unsigned utilization = 0, period = 0;
      if (Handle(device, kEncoder, api_.device_get_encoder_utilization(device.handle, &utilization, &period),
                 "encoder")) {
        add("encoderUtilization", utilization);
      }
    }
    if (api_.device_get_fan_speed_v2 != nullptr || api_.device_get_fan_speed != nullptr) {
      if (!device.off.test(kFan) && !device.lost) {
        unsigned percent = 0;
        const Return code = api_.device_get_fan_speed_v2 != nullptr
                                ? api_.device_get_fan_speed_v2(device.handle, 0, &percent)
                                : api_.device_get_fan_speed(device.handle, &percent);
        if (Handle(device, kFan, code, "fan")) add("fanSpeed", percent);
      }
    }
    if (Ask(device, kClockReasons, api_.device_get_clocks_event_reasons)) {
      unsigned long long reasons = 0;
      if (Handle(device, kClockReasons, api_.device_get_clocks_event_reasons(device.handle, &reasons),
                 "clock event reasons")) {
        add("clocksEventReasons", static_cast<double>(reasons));
      }
    }
    if (Ask(device, kEnergy, api_.device_get_total_energy_consumption)) {
      unsigned long long millijoules = 0;
      if (Handle(device, kEnergy, api_.device_get_total_energy_consumption(device.handle, &millijoules),
                 "energy")) {
        if (!device.energy_start_mj || millijoules < *device.energy_start_mj)
          device.energy_start_mj = millijoules;
        add("energyJoules", static_cast<double>(millijoules - *device.energy_start_mj) / 1000.0);
      }
    }
    CollectGpm(device, prefix, out);
    CollectProcesses(device, values, out);
  }

  struct DeviceValues {
    std::optional<double> gpu, memory, temp, power_watts, power_limit_watts;
    std::optional<unsigned long long> memory_total, memory_used;
  };

  // Rolling GPM: each tick's sample is compared with the previous tick's (NVML needs > 100 ms between
  // them), so no tick waits for a measurement window.
  void CollectGpm(GpuDevice& device, const std::string& prefix, MetricBatch& out) {
    if (device.off.test(kGpm) || device.lost || api_.gpm_sample_alloc == nullptr ||
        api_.gpm_sample_get == nullptr || api_.gpm_metrics_get == nullptr) {
      return;
    }
    for (auto* sample : {&device.gpm_previous, &device.gpm_current}) {
      if (*sample == nullptr && !Handle(device, kGpm, api_.gpm_sample_alloc(sample), "GPM")) return;
    }
    if (!Handle(device, kGpm, api_.gpm_sample_get(device.handle, device.gpm_current), "GPM")) return;
    const auto now = std::chrono::steady_clock::now();
    const bool have_previous = device.gpm_previous_time.time_since_epoch().count() != 0;
    if (have_previous && now - device.gpm_previous_time > std::chrono::milliseconds(100)) {
      nvml::GpmMetricsGet request{};
      request.version = 1;
      request.num_metrics = static_cast<unsigned>(kGpmKeys.size());
      request.sample1 = device.gpm_previous;
      request.sample2 = device.gpm_current;
      for (size_t i = 0; i < kGpmKeys.size(); ++i) request.metrics[i].metric_id = kGpmKeys[i].id;
      if (Handle(device, kGpm, api_.gpm_metrics_get(&request), "GPM")) {
        for (size_t i = 0; i < kGpmKeys.size(); ++i) {
          if (request.metrics[i].nvml_return != nvml::kSuccess) continue;
          out.Add(prefix + std::string(kGpmKeys[i].leaf), request.metrics[i].value * kGpmKeys[i].factor);
        }
      }
    }
    if (!have_previous || now - device.gpm_previous_time > std::chrono::milliseconds(100)) {
      std::swap(device.gpm_previous, device.gpm_current);
      device.gpm_previous_time = now;
    }
  }

  static std::string LostMessage(const GpuDevice& device) {
    return fmt::format("GPU {} ({}) is gone ({}); it is no longer sampled", device.key_index,
                       device.identity.uuid, device.lost_reason);
  }

  // Whether `pid` is the monitored process or one of its descendants: its parent chain, read from
  // /proc/PID/stat, reaches the root. The answer is kept while the PID stays in a GPU's process list, so a
  // steady run reads nothing from /proc; ancestors walked through are remembered for the tick.
  bool InTree(long pid) {
    if (!options_.pid || *options_.pid <= 0) return false;
    gpu_processes_this_tick_.insert(pid);
    if (auto it = membership_.find(pid); it != membership_.end()) return it->second;
    const long root = *options_.pid;
    if (!options_.whole_tree) return pid == root;
    std::vector<long> walked;
    bool known = true;  // false when a /proc read failed: the answer is not kept
    long current = pid;
    bool member = false;
    for (int depth = 0; depth < 256; ++depth) {
      if (current == root) {
        member = true;
        break;
      }
      if (auto it = ancestors_this_tick_.find(current); it != ancestors_this_tick_.end()) {
        member = it->second;
        break;
      }
      if (current <= 1) break;
      walked.push_back(current);
      auto text = ReadFileToString(options_.paths.Proc(std::to_string(current) + "/stat"));
      std::optional<PidStat> stat;
      if (text) {
        if (auto parsed = ParsePidStat(*text)) stat = *parsed;
      }
      if (!stat) {
        // Gone (not ours, for this tick) or unreadable for now: decided again next tick.
        known = false;
        break;
      }
      if (stat->ppid == current) break;
      current = stat->ppid;
    }
    for (long visited : walked) ancestors_this_tick_[visited] = member;
    if (known) membership_[pid] = member;
    return member;
  }

  // Both process lists, with NVML's sizing protocol (the list can grow between the two calls).
  bool ReadProcesses(GpuDevice& device, Family family,
                     Return (*list)(nvml::Device, unsigned*, nvml::ProcessInfo*),
                     std::vector<nvml::ProcessInfo>& into) {
    if (list == nullptr || device.off.test(family) || device.lost) return false;
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned count = static_cast<unsigned>(scratch_processes_.size());
      const Return code = list(device.handle, &count, scratch_processes_.data());
      if (code == nvml::kSuccess) {
        into.insert(into.end(), scratch_processes_.begin(),
                    scratch_processes_.begin() + std::min<size_t>(count, scratch_processes_.size()));
        return true;
      }
      if (code != nvml::kInsufficientSize) return Handle(device, family, code, "running processes");
      scratch_processes_.resize(
          std::min<size_t>(std::max<size_t>(count, scratch_processes_.size()) * 2 + 8, 1u << 16));
    }
    return false;
  }

  void CollectProcesses(GpuDevice& device, const DeviceValues& values, MetricBatch& out) {
    if (!options_.pid || *options_.pid <= 0 || device.lost) return;
    // Each list stands alone: a board without graphics processes still has its compute list.
    std::vector<nvml::ProcessInfo> processes;
    const bool compute =
        ReadProcesses(device, kComputeProcesses, api_.device_get_compute_running_processes, processes);
    const bool graphics =
        ReadProcesses(device, kGraphicsProcesses, api_.device_get_graphics_running_processes, processes);
    if (!compute && !graphics) return;
    std::set<unsigned> ours;
    unsigned long long memory = 0;
    bool memory_known = false;
    for (const auto& process : processes) {
      if (!InTree(static_cast<long>(process.pid))) continue;
      // A process in both lists counts once.
      if (!ours.insert(process.pid).second) continue;
      if (process.used_gpu_memory != nvml::kValueNotAvailable) {
        memory += process.used_gpu_memory;
        memory_known = true;
      }
    }
    if (ours.empty()) return;
    const std::string prefix = fmt::format("gpu.process.{}.", device.key_index);
    const auto add = [&](std::string_view leaf, double value) { out.Add(prefix + std::string(leaf), value); };
    if (auto utilization = TreeSmUtilization(device, ours)) add("gpu", *utilization);
    if (values.memory) add("memory", *values.memory);
    if (memory_known) {
      if (values.memory_total)
        add("memoryAllocated",
            100.0 * static_cast<double>(memory) / static_cast<double>(*values.memory_total));
      add("memoryAllocatedBytes", static_cast<double>(memory));
    }
    if (values.temp) add("temp", *values.temp);
    if (values.power_watts) add("powerWatts", *values.power_watts);
    if (values.power_limit_watts) add("enforcedPowerLimitWatts", *values.power_limit_watts);
    if (values.power_watts && values.power_limit_watts)
      add("powerPercent", 100.0 * *values.power_watts / *values.power_limit_watts);
  }

  // The tree's SM utilisation since the last tick: per process, the mean of NVML's samples newer than the
  // last one seen; summed over the tree's processes (at most 100).
  std::optional<double> TreeSmUtilization(GpuDevice& device, const std::set<unsigned>& ours) {
    if (!Ask(device, kProcessUtilization, api_.device_get_process_utilization)) return std::nullopt;
    unsigned count = 0;
    Return code =
        api_.device_get_process_utilization(device.handle, nullptr, &count, device.process_samples_seen_us);
    if (code == nvml::kNotFound) return std::nullopt;  // no samples since the last tick
    if (code != nvml::kInsufficientSize && code != nvml::kSuccess) {
      Handle(device, kProcessUtilization, code, "process utilization");
      return std::nullopt;
    }
    if (count == 0) return std::nullopt;
    scratch_utilization_.resize(std::min<size_t>(count + 16, 1u << 16));
    count = static_cast<unsigned>(scratch_utilization_.size());
    code = api_.device_get_process_utilization(device.handle, scratch_utilization_.data(), &count,
                                               device.process_samples_seen_us);
    if (!Handle(device, kProcessUtilization, code, "process utilization")) return std::nullopt;
    std::map<unsigned, std::pair<double, unsigned>> per_process;
    for (unsigned i = 0; i < std::min<size_t>(count, scratch_utilization_.size()); ++i) {
      const auto& sample = scratch_utilization_[i];
      device.process_samples_seen_us = std::max(device.process_samples_seen_us, sample.timestamp);
      if (ours.count(sample.pid) == 0) continue;
      auto& [sum, n] = per_process[sample.pid];
      sum += sample.sm_util;
      ++n;
    }
    if (per_process.empty()) return std::nullopt;
    double total = 0;
    for (const auto& [pid, entry] : per_process) total += entry.first / entry.second;
    return std::min(total, 100.0);
  }

  std::unique_ptr<nvml::Library> library_;
  const nvml::Functions& api_;
  NvidiaOptions options_;
  bool started_ = false;
  std::vector<GpuDevice> devices_;
  std::vector<NvmlDeviceIdentity> all_identities_;  // every device NVML enumerated, reported or not
  std::vector<std::string> lost_reasons_;
  std::unordered_map<long, bool> membership_;           // GPU processes still listed: in the tree?
  std::unordered_map<long, bool> ancestors_this_tick_;  // processes walked through this tick
  std::set<long> gpu_processes_this_tick_;
  std::vector<nvml::ProcessInfo> scratch_processes_ = std::vector<nvml::ProcessInfo>(64);
  std::vector<nvml::ProcessUtilizationSample> scratch_utilization_;
};

}  // namespace

std::unique_ptr<Collector> MakeNvidiaCollector(NvidiaOptions options, std::string* why_not) {
  auto library = nvml::Library::Open(options.library_path);
  if (!library) {
    if (why_not != nullptr) *why_not = library.error();
    return nullptr;
  }
  return std::make_unique<NvidiaCollector>(std::move(*library), std::move(options));
}

Result<nlohmann::json> ProbeNvidiaMetadata(const NvidiaOptions& options) {
  auto library = nvml::Library::Open(options.library_path);
  if (!library) return Error{library.error()};
  NvidiaOptions quiet = options;
  quiet.publish_metadata = nullptr;
  NvidiaCollector collector(std::move(*library), quiet);
  if (auto status = collector.Start(); !status) return Error{status.error()};
  return collector.Metadata();
}

}  // namespace runmon
