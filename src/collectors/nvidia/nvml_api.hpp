// NVIDIA's NVML, loaded at run time with dlopen: no NVIDIA header or library is needed to build runmon.
// The few types runmon uses are declared here from NVML's documented C interface (x86-64 Linux layouts,
// checked by static_assert). Each function is resolved newest version first (_v3, _v2, plain); a function
// the installed driver lacks stays null and the metrics that need it are simply absent.
// The library is libnvidia-ml.so.1 (never the unversioned .so, which only development packages install),
// or the path the app takes from RUNMON_NVML_LIBRARY (nvidia_family.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/result.hpp"

namespace runmon::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kNoPermission = 4;
inline constexpr Return kNotFound = 6;
inline constexpr Return kInsufficientSize = 7;
inline constexpr Return kDriverNotLoaded = 9;
inline constexpr Return kFunctionNotFound = 13;
inline constexpr Return kGpuIsLost = 15;
inline constexpr Return kResetRequired = 16;
inline constexpr Return kDeprecated = 26;
inline constexpr Return kGpuNotFound = 28;

struct DeviceOpaque;
using Device = DeviceOpaque*;
struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;

struct Memory {  // nvmlMemory_t: used includes memory the driver reserves
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct MemoryV2 {  // nvmlMemory_v2_t: used excludes reserved (as nvidia-smi shows it)
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): sizeof | 2 << 24. The documented "2" fails with FUNCTION_NOT_FOUND.
inline constexpr unsigned kMemoryV2Version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);

struct TemperatureV1 {  // nvmlTemperature_v1_t, for nvmlDeviceGetTemperatureV (drivers from 2025 on)
  unsigned version;
  unsigned sensor_type;
  int temperature;
};
inline constexpr unsigned kTemperatureV1Version = static_cast<unsigned>(sizeof(TemperatureV1)) | (1u << 24);

struct Utilization {
  unsigned gpu;
  unsigned memory;
};
struct ProcessInfo {  // nvmlProcessInfo_v2_t, as the _v3 process-list functions fill it
  unsigned pid;
  unsigned long long used_gpu_memory;  // bytes; kValueNotAvailable when unknown
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
inline constexpr unsigned long long kValueNotAvailable = ~0ull;
struct ProcessUtilizationSample {
  unsigned pid;
  unsigned long long timestamp;  // µs
  unsigned sm_util;
  unsigned mem_util;
  unsigned enc_util;
  unsigned dec_util;
};
struct PciInfo {  // for nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];
};
struct GpmSupport {
  unsigned version;  // 1
  unsigned is_supported_device;
};
struct GpmMetric {
  unsigned metric_id;
  Return nvml_return;
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;
};
// Room for the metrics runmon asks for; the driver only touches metrics[0..num_metrics).
inline constexpr unsigned kGpmMetricsCapacity = 32;
struct GpmMetricsGet {
  unsigned version;  // 1
  unsigned num_metrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricsCapacity];
};

static_assert(sizeof(Memory) == 24);
static_assert(sizeof(MemoryV2) == 40 && offsetof(MemoryV2, total) == 8 && offsetof(MemoryV2, used) == 32);
static_assert(kMemoryV2Version == 0x02000028);
static_assert(sizeof(Utilization) == 8);
static_assert(sizeof(TemperatureV1) == 12 && kTemperatureV1Version == 0x0100000C);
static_assert(sizeof(ProcessInfo) == 24 && offsetof(ProcessInfo, used_gpu_memory) == 8 &&
              offsetof(ProcessInfo, compute_instance_id) == 20);
static_assert(sizeof(ProcessUtilizationSample) == 32 && offsetof(ProcessUtilizationSample, sm_util) == 16);
static_assert(sizeof(PciInfo) == 68 && offsetof(PciInfo, bus_id) == 36);
static_assert(sizeof(GpmSupport) == 8);
static_assert(sizeof(GpmMetric) == 40 && offsetof(GpmMetric, value) == 8);
static_assert(offsetof(GpmMetricsGet, metrics) == 24);

inline constexpr unsigned kTemperatureGpu = 0;
inline constexpr unsigned kClockGraphics = 0, kClockSm = 1, kClockMem = 2;
inline constexpr unsigned kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1;
inline constexpr unsigned kVolatileEcc = 0;
inline constexpr unsigned kMemoryLocationDevice = 2;

// The entry points runmon calls; null when the library lacks every version of one.
struct Functions {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned) = nullptr;
  Return (*system_get_cuda_driver_version)(int*) = nullptr;
  Return (*device_get_count)(unsigned*) = nullptr;
  Return (*device_get_handle_by_index)(unsigned, Device*) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*device_get_pci_info)(Device, PciInfo*) = nullptr;
  Return (*device_get_architecture)(Device, unsigned*) = nullptr;
  Return (*device_get_num_gpu_cores)(Device, unsigned*) = nullptr;
  Return (*device_get_memory_info)(Device, Memory*) = nullptr;
  Return (*device_get_memory_info_v2)(Device, MemoryV2*) = nullptr;
  Return (*device_get_utilization_rates)(Device, Utilization*) = nullptr;
  Return (*device_get_temperature)(Device, unsigned, unsigned*) = nullptr;  // deprecated in NVML 13
  Return (*device_get_temperature_v)(Device, TemperatureV1*) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned*) = nullptr;
  Return (*device_get_enforced_power_limit)(Device, unsigned*) = nullptr;
  Return (*device_get_total_energy_consumption)(Device, unsigned long long*) = nullptr;
  Return (*device_get_clock_info)(Device, unsigned, unsigned*) = nullptr;
  Return (*device_get_memory_error_counter)(Device, unsigned, unsigned, unsigned,
                                            unsigned long long*) = nullptr;
  Return (*device_get_encoder_utilization)(Device, unsigned*, unsigned*) = nullptr;
  Return (*device_get_fan_speed_v2)(Device, unsigned, unsigned*) = nullptr;
  Return (*device_get_fan_speed)(Device, unsigned*) = nullptr;  // the only fan, on drivers without _v2
  Return (*device_get_clocks_event_reasons)(Device, unsigned long long*) = nullptr;
  Return (*device_get_compute_running_processes)(Device, unsigned*, ProcessInfo*) = nullptr;
  Return (*device_get_graphics_running_processes)(Device, unsigned*, ProcessInfo*) = nullptr;
  Return (*device_get_process_utilization)(Device, ProcessUtilizationSample*, unsigned*,
                                           unsigned long long) = nullptr;
  Return (*device_get_mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  Return (*device_get_max_mig_device_count)(Device, unsigned*) = nullptr;
  Return (*device_get_mig_device_handle_by_index)(Device, unsigned, Device*) = nullptr;
  Return (*device_get_gpu_instance_id)(Device, unsigned*) = nullptr;
  Return (*device_get_compute_instance_id)(Device, unsigned*) = nullptr;
  Return (*gpm_query_device_support)(Device, GpmSupport*) = nullptr;
  Return (*gpm_sample_alloc)(GpmSample*) = nullptr;
  Return (*gpm_sample_free)(GpmSample) = nullptr;
  Return (*gpm_sample_get)(Device, GpmSample) = nullptr;
  Return (*gpm_metrics_get)(GpmMetricsGet*) = nullptr;
};

// A loaded and initialised NVML. Shut down and unloaded when destroyed.
class Library {
 public:
  // Opens the library at `path` (empty: libnvidia-ml.so.1) and resolves its
  // functions; quick, no driver call. Errors say why in words: not installed, not a library, not NVML.
  static Result<std::unique_ptr<Library>> Open(const std::string& path = {});
  // nvmlInit: the first driver call, which can be slow (or hang, with a wedged driver). Errors carry
  // NVML's reason (driver/library version mismatch, no driver loaded, ...).
  Status Init();
  // Open and Init.
  static Result<std::unique_ptr<Library>> Load(const std::string& path = {});
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Functions& api() const { return api_; }
  std::string ErrorString(Return code) const;
  const std::string& path() const { return path_; }

 private:
  Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
  Functions api_;
  bool initialized_ = false;
};

}  // namespace runmon::nvml
