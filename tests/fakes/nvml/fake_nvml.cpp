// A fake libnvidia-ml.so.1 for the test suite. It exports NVML's C entry points with the exact names,
// signatures and x86-64 struct layouts of spec ../shared/spec/accelerators.md §6, declared here from that
// spec (no NVIDIA header), and answers from the JSON scenario named by RUNMON_FAKE_NVML_SCENARIO, read at
// nvmlInit* (schema in README.md). Odd cases it reproduces on purpose, because real drivers do them:
// nvmlDeviceGetMemoryInfo_v2 fails with FUNCTION_NOT_FOUND unless version == 0x02000028 (not 2); v1 memory
// "used" includes reserved memory; process lists use the *infoCount = 0 sizing protocol and can grow between
// the sizing and the filling call; process utilisation only returns samples newer than lastSeenTimeStamp and
// NOT_FOUND when there are none; MIG slots can be empty (NOT_FOUND); utilisation, encoder and process
// utilisation are NOT_SUPPORTED on MIG handles and on a MIG-enabled parent; GPM needs two samples at least
// 100 ms apart. Tests inject failures and hangs per function and per device, and read call counts through
// fake_nvml_call_count. Built twice: "full", and "legacy" (FAKE_NVML_LEGACY) without the symbols that older
// drivers lack, so runmon's dlsym fallbacks are exercised.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

// ---- NVML types, declared from spec §6.3-6.8 (every enum's underlying type is a 4-byte int) -----
extern "C" {
typedef enum nvmlReturn_enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
typedef unsigned int nvmlDeviceArchitecture_t;
typedef enum nvmlTemperatureSensors_enum : int { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
typedef enum nvmlClockType_enum : int {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;
typedef enum nvmlMemoryErrorType_enum : int {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;
typedef enum nvmlEccCounterType_enum : int {
  NVML_VOLATILE_ECC = 0,
  NVML_AGGREGATE_ECC = 1
} nvmlEccCounterType_t;
typedef enum nvmlMemoryLocation_enum : int { NVML_MEMORY_LOCATION_DEVICE_MEMORY = 2 } nvmlMemoryLocation_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
  unsigned int version;
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

// The newest header's array size (333); the driver only touches metrics[0..numMetrics) (spec §6.6).
typedef struct {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[333];
} nvmlGpmMetricsGet_t;
}  // extern "C"

static_assert(sizeof(nvmlReturn_t) == 4 && sizeof(nvmlClockType_t) == 4);
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, domain) == 16 &&
              offsetof(nvmlPciInfo_t, pciSubSystemId) == 32 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlMemory_t) == 24 && offsetof(nvmlMemory_t, used) == 16);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8 &&
              offsetof(nvmlMemory_v2_t, reserved) == 16 && offsetof(nvmlMemory_v2_t, free) == 24 &&
              offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8 &&
              offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16 &&
              offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 &&
              offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8 &&
              offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16 &&
              offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28);
static_assert(sizeof(nvmlGpmSupport_t) == 8);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, nvmlReturn) == 4 &&
              offsetof(nvmlGpmMetric_t, value) == 8 && offsetof(nvmlGpmMetric_t, metricInfo) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8 && offsetof(nvmlGpmMetricsGet_t, sample2) == 16 &&
              offsetof(nvmlGpmMetricsGet_t, metrics) == 24 && sizeof(nvmlGpmMetricsGet_t) == 24 + 40 * 333);

// ---- Scenario state -----------------------------------------------------------------------------
namespace fake_nvml {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr unsigned kSystemScope = 0xFFFFFFFFu;  // fake_nvml_call_count index of calls without a device
constexpr unsigned kNoInstanceId = 0xFFFFFFFFu;
constexpr unsigned long long kValueNotAvailable = ~0ULL;
// NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | 2 << 24. The [[maybe_unused]] constants are
// only used by the full variant.
[[maybe_unused]] constexpr unsigned kMemoryV2Version = 0x02000028u;
[[maybe_unused]] constexpr unsigned kGpmSupportVersion = 1;
[[maybe_unused]] constexpr unsigned kGpmMetricsGetVersion = 1;
[[maybe_unused]] constexpr unsigned kGpmMetricMax = 333;
[[maybe_unused]] constexpr auto kGpmMinInterval = std::chrono::milliseconds(100);
constexpr unsigned kDefaultMaxMigDevices = 7;
constexpr unsigned kDefaultEncoderPeriodUs = 166667;

struct State;

// One device, MIG instance or the system: its part of the scenario, the series cursors and the call counts.
struct Scope {
  Json doc = Json::object();
  std::map<std::string, std::size_t> cursors;  // JSON pointer of a series -> next element
  std::map<std::string, unsigned long long, std::less<>> calls;
  std::set<std::string, std::less<>> insufficient_done;  // functions whose "insufficient_size_once" fired
};

}  // namespace fake_nvml

// A GPU or a MIG instance; the handle is its address.
struct nvmlDevice_st {
  fake_nvml::State* owner = nullptr;
  fake_nvml::Scope scope;
  nvmlDevice_st* parent = nullptr;  // set for MIG instances
  unsigned index = 0;               // NVML index of the GPU (of the parent for an instance)
  unsigned slot = 0;                // MIG slot of an instance
  unsigned gpu_instance_id = fake_nvml::kNoInstanceId;  // set for MIG instances
  unsigned compute_instance_id = fake_nvml::kNoInstanceId;
  std::map<unsigned, std::unique_ptr<nvmlDevice_st>> instances;  // by slot, on a parent
  bool IsMig() const { return parent != nullptr; }
  nvmlDevice_st& Gpu() { return parent != nullptr ? *parent : *this; }
};

struct nvmlGpmSample_st {
  nvmlDevice_st* target = nullptr;  // device or MIG instance the sample was taken on
  fake_nvml::Clock::time_point taken_at;
};

namespace fake_nvml {

struct State {
  std::string path;
  std::string content;
  Scope system;
  std::vector<std::unique_ptr<nvmlDevice_st>> devices;
};

struct Globals {
  std::mutex mu;
  State* current = nullptr;
  std::vector<std::unique_ptr<State>> states;  // never freed, so stale handles stay safe to look at
  int refcount = 0;
  std::set<const nvmlDevice_st*> handles;
  std::set<const nvmlGpmSample_st*> samples;
};

}  // namespace fake_nvml

// LeakSanitizer's hook, present only in sanitized processes.
extern "C" void __lsan_ignore_object(const void* p) __attribute__((weak));

namespace fake_nvml {

// Never destroyed: calls may still come during exit (a hung call's thread, a static that shuts NVML down).
// After dlclose nothing points at it any more, so it is marked for LeakSanitizer as deliberately kept.
Globals& G() {
  static Globals* globals = [] {
    auto* g = new Globals;
    if (__lsan_ignore_object != nullptr) __lsan_ignore_object(g);
    return g;
  }();
  return *globals;
}

using Lock = std::unique_lock<std::mutex>;

// ---- return codes -------------------------------------------------------------------------------
struct CodeInfo {
  const char* name;
  nvmlReturn_t code;
  const char* text;
};

constexpr CodeInfo kCodes[] = {
    {"SUCCESS", NVML_SUCCESS, "Success"},
    {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED, "Uninitialized"},
    {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument"},
    {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED, "Not Supported"},
    {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION, "Insufficient Permissions"},
    {"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED, "Already Initialized"},
    {"NOT_FOUND", NVML_ERROR_NOT_FOUND, "Not Found"},
    {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size"},
    {"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER, "Insufficient External Power"},
    {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded"},
    {"TIMEOUT", NVML_ERROR_TIMEOUT, "Timeout"},
    {"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE, "Interrupt Request Issue"},
    {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"},
    {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found"},
    {"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM"},
    {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST, "GPU is lost"},
    {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED, "GPU requires restart"},
    {"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM, "The operating system has blocked the request."},
    {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH,
     "RM has detected an NVML/RM version mismatch."},
    {"IN_USE", NVML_ERROR_IN_USE, "In use by another client"},
    {"MEMORY", NVML_ERROR_MEMORY, "Insufficient Memory"},
    {"NO_DATA", NVML_ERROR_NO_DATA, "No data"},
    {"VGPU_ECC_NOT_SUPPORTED", NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "ECC is not supported on vGPU"},
    {"INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES, "Insufficient resources"},
    {"FREQ_NOT_SUPPORTED", NVML_ERROR_FREQ_NOT_SUPPORTED, "Frequency not supported"},
    {"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch"},
    {"DEPRECATED", NVML_ERROR_DEPRECATED, "Deprecated"},
    {"NOT_READY", NVML_ERROR_NOT_READY, "Not ready"},
    {"GPU_NOT_FOUND", NVML_ERROR_GPU_NOT_FOUND, "GPU not found"},
    {"INVALID_STATE", NVML_ERROR_INVALID_STATE, "Invalid state"},
    {"RESET_TYPE_NOT_SUPPORTED", NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "Reset type not supported"},
    {"UNKNOWN", NVML_ERROR_UNKNOWN, "Unknown Error"},
};

// A code as the scenario writes it: an int, "NOT_SUPPORTED", "NVML_ERROR_NOT_SUPPORTED" or "NVML_SUCCESS".
nvmlReturn_t ParseCode(const Json& value) {
  if (value.is_number_integer()) return static_cast<nvmlReturn_t>(value.get<int>());
  if (!value.is_string()) throw std::runtime_error("a return code must be an int or a name: " + value.dump());
  std::string_view name = value.get_ref<const std::string&>();
  for (std::string_view prefix : {"NVML_ERROR_", "NVML_"}) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  for (const CodeInfo& info : kCodes) {
    if (name == info.name) return info.code;
  }
  throw std::runtime_error("unknown return code name: " + value.dump());
}

// ---- scenario values ---------------------------------------------------------------------------

// The value at a JSON pointer; an array is a series (successive reads give successive elements, the last one
// repeating) and `advance` moves its cursor. nullopt when absent or null.
std::optional<Json> Read(Scope& scope, const std::string& pointer, bool advance = true) {
  const Json::json_pointer ptr(pointer);
  if (!scope.doc.contains(ptr)) return std::nullopt;
  const Json& value = scope.doc.at(ptr);
  if (value.is_null()) return std::nullopt;
  if (!value.is_array()) return value;
  if (value.empty()) return std::nullopt;
  std::size_t& cursor = scope.cursors[pointer];
  const Json& element = value[std::min(cursor, value.size() - 1)];
  if (advance && cursor < value.size()) ++cursor;
  return element;
}

std::optional<Json> Peek(Scope& scope, const std::string& pointer) {
  return Read(scope, pointer, false);
}

// Integers may be written as numbers, "0x..." strings, or "N/A" (NVML_VALUE_NOT_AVAILABLE); -1 is N/A too.
unsigned long long ToU64(const Json& value) {
  if (value.is_number_unsigned()) return value.get<unsigned long long>();
  if (value.is_number_integer()) {
    const long long v = value.get<long long>();
    return v < 0 ? kValueNotAvailable : static_cast<unsigned long long>(v);
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    return v <= 0 ? 0ULL : static_cast<unsigned long long>(v);
  }
  if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == "N/A") return kValueNotAvailable;
    return std::stoull(s, nullptr, 0);
  }
  throw std::runtime_error("not a number: " + value.dump());
}

unsigned ToU32(const Json& value) {
  return static_cast<unsigned>(ToU64(value));
}

double ToDouble(const Json& value) {
  if (value.is_number()) return value.get<double>();
  return static_cast<double>(ToU64(value));
}

std::string ToString(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

template <typename T>
nvmlReturn_t ReadInto(Scope& scope, const std::string& pointer, T* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::optional<Json> value = Read(scope, pointer);
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  if constexpr (sizeof(T) == 8) {
    *out = static_cast<T>(ToU64(*value));
  } else {
    *out = static_cast<T>(ToU32(*value));
  }
  return NVML_SUCCESS;
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

// Copies `s` into a fixed-size field, always NUL-terminated (truncating if needed).
template <std::size_t N>
void CopyTruncated(const std::string& s, char (&out)[N]) {
  const std::size_t n = std::min(s.size(), N - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

nvmlReturn_t ReadString(Scope& scope, const std::string& pointer, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::optional<Json> value = Read(scope, pointer);
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  return CopyString(ToString(*value), out, length);
}

// ---- failure injection --------------------------------------------------------------------------
struct Injection {
  std::optional<nvmlReturn_t> code;
  double hang_seconds = 0;
};

std::vector<Json> FailEntries(const Scope& scope, std::string_view function) {
  std::vector<Json> entries;
  const auto fail = scope.doc.find("fail");
  if (fail == scope.doc.end() || !fail->is_object()) return entries;
  const auto it = fail->find(std::string(function));
  if (it == fail->end()) return entries;
  if (it->is_array()) {
    for (const Json& e : *it) entries.push_back(e);
  } else {
    entries.push_back(*it);
  }
  return entries;
}

// The entries whose window [after_calls + 1, after_calls + times] holds call number `n` (1-based).
Injection FindInjection(const Scope& scope, std::string_view function, unsigned long long n) {
  Injection injection;
  for (const Json& entry : FailEntries(scope, function)) {
    const unsigned long long after = entry.contains("after_calls") ? ToU64(entry.at("after_calls")) : 0;
    if (n <= after) continue;
    if (entry.contains("times") && n > after + ToU64(entry.at("times"))) continue;
    if (entry.contains("hang_seconds") && injection.hang_seconds == 0) {
      injection.hang_seconds = ToDouble(entry.at("hang_seconds"));
    }
    if (entry.contains("code") && !injection.code) injection.code = ParseCode(entry.at("code"));
  }
  return injection;
}

// Extra count reported by the one-time INSUFFICIENT_SIZE of a sized call, if it is still due.
std::optional<unsigned> TakeInsufficientOnce(Scope& scope, std::string_view function) {
  if (scope.insufficient_done.contains(function)) return std::nullopt;
  for (const Json& entry : FailEntries(scope, function)) {
    const auto it = entry.find("insufficient_size_once");
    if (it == entry.end() || (it->is_boolean() && !it->get<bool>())) continue;
    scope.insufficient_done.emplace(function);
    return it->is_boolean() ? 1u : std::max(1u, ToU32(*it));
  }
  return std::nullopt;
}

// Counts the call, applies the injected hang (without holding the lock) and code, then runs `body`.
template <typename Body>
nvmlReturn_t Run(Lock& lock, State* state, Scope& scope, const char* function, bool needs_init, Body&& body) {
  try {
    const unsigned long long n = ++scope.calls[function];
    const Injection injection = FindInjection(scope, function, n);
    if (injection.hang_seconds > 0) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::duration<double>(injection.hang_seconds));
      lock.lock();
      if (G().current != state || (needs_init && G().refcount == 0)) return NVML_ERROR_UNINITIALIZED;
    }
    if (injection.code) return *injection.code;
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: %s: %s\n", function, e.what());
    return NVML_ERROR_UNKNOWN;
  }
}

template <typename Body>
nvmlReturn_t SystemCall(const char* function, Body&& body) {
  Lock lock(G().mu);
  if (G().refcount == 0 || G().current == nullptr) return NVML_ERROR_UNINITIALIZED;
  State* state = G().current;
  return Run(lock, state, state->system, function, true, body);
}

template <typename Body>
nvmlReturn_t DeviceCall(const char* function, nvmlDevice_t device, Body&& body) {
  Lock lock(G().mu);
  if (G().refcount == 0 || G().current == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || !G().handles.contains(device) || device->owner != G().current) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return Run(lock, device->owner, device->scope, function, true, [&] { return body(*device); });
}

// ---- loading ------------------------------------------------------------------------------------
void Require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

std::unique_ptr<State> LoadState(const std::string& path, const std::string& content) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->content = content;
  Json doc = Json::parse(content);
  Require(doc.is_object(), "the scenario must be a JSON object");
  Json devices = doc.contains("devices") ? doc.at("devices") : Json::array();
  Require(devices.is_array(), "\"devices\" must be an array");
  doc.erase("devices");
  state->system.doc = std::move(doc);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Json& device_doc = devices[i];
    Require(device_doc.is_object(), "each device must be an object");
    auto device = std::make_unique<nvmlDevice_st>();
    device->owner = state.get();
    device->index = static_cast<unsigned>(i);
    const Json mig = device_doc.value("mig", Json::object());
    Require(mig.is_object(), "\"mig\" must be an object");
    const unsigned max_devices =
        mig.contains("max_devices") ? ToU32(mig.at("max_devices")) : kDefaultMaxMigDevices;
    const Json instances = mig.value("instances", Json::array());
    Require(instances.is_array(), "\"mig.instances\" must be an array");
    for (std::size_t k = 0; k < instances.size(); ++k) {
      const Json& instance_doc = instances[k];
      Require(instance_doc.is_object(), "each MIG instance must be an object");
      auto instance = std::make_unique<nvmlDevice_st>();
      instance->owner = state.get();
      instance->parent = device.get();
      instance->index = device->index;
      instance->slot =
          instance_doc.contains("slot") ? ToU32(instance_doc.at("slot")) : static_cast<unsigned>(k);
      instance->gpu_instance_id = instance_doc.contains("gpu_instance_id")
                                      ? ToU32(instance_doc.at("gpu_instance_id"))
                                      : instance->slot + 1;
      instance->compute_instance_id =
          instance_doc.contains("compute_instance_id") ? ToU32(instance_doc.at("compute_instance_id")) : 0;
      instance->scope.doc = instance_doc;
      Require(instance->slot < max_devices, "MIG slot beyond mig.max_devices");
      Require(!device->instances.contains(instance->slot), "two MIG instances in one slot");
      device->instances.emplace(instance->slot, std::move(instance));
    }
    device->scope.doc = std::move(device_doc);
    state->devices.push_back(std::move(device));
  }
  return state;
}

void RegisterHandles(const State& state) {
  for (const auto& device : state.devices) {
    G().handles.insert(device.get());
    for (const auto& [slot, instance] : device->instances) G().handles.insert(instance.get());
  }
}

nvmlReturn_t Init(const char* function) {
  Lock lock(G().mu);
  if (G().refcount == 0) {
    const char* path = std::getenv("RUNMON_FAKE_NVML_SCENARIO");
    if (path == nullptr || *path == '\0') return NVML_ERROR_DRIVER_NOT_LOADED;
    std::ifstream in(path, std::ios::binary);
    if (!in) return NVML_ERROR_DRIVER_NOT_LOADED;
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) return NVML_ERROR_DRIVER_NOT_LOADED;
    // The same file keeps its state (series cursors, call counts) across shutdown and re-init, like a driver
    // that stays loaded; another path or content starts afresh.
    State* current = G().current;
    if (current == nullptr || current->path != path || current->content != content.str()) {
      try {
        G().states.push_back(LoadState(path, content.str()));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fake_nvml: bad scenario %s: %s\n", path, e.what());
        return NVML_ERROR_UNKNOWN;
      }
      G().current = G().states.back().get();
      RegisterHandles(*G().current);
    }
  }
  State* state = G().current;
  return Run(lock, state, state->system, function, false, [&] {
    const std::optional<Json> result = Read(state->system, "/init_result");
    const nvmlReturn_t code = result ? ParseCode(*result) : NVML_SUCCESS;
    if (code == NVML_SUCCESS) ++G().refcount;
    return code;
  });
}

// ---- device helpers -----------------------------------------------------------------------------
bool MigEnabled(nvmlDevice_st& gpu) {
  if (gpu.IsMig() || !gpu.scope.doc.contains("mig")) return false;
  const std::optional<Json> current = Peek(gpu.scope, "/mig/current");
  return current ? ToU32(*current) == 1 : !gpu.instances.empty();
}

// Utilisation-type queries: not on MIG handles, not on MIG-enabled parents (spec §6.7).
bool MigBlocksUtilization(nvmlDevice_st& d) {
  return d.IsMig() || MigEnabled(d);
}

unsigned ParseArchitecture(const Json& value) {
  static const std::map<std::string, unsigned, std::less<>> kNames = {
      {"KEPLER", 2}, {"MAXWELL", 3}, {"PASCAL", 4},     {"VOLTA", 5}, {"TURING", 6},           {"AMPERE", 7},
      {"ADA", 8},    {"HOPPER", 9},  {"BLACKWELL", 10}, {"T23X", 11}, {"UNKNOWN", 0xFFFFFFFFu}};
  if (value.is_string()) {
    const auto it = kNames.find(value.get_ref<const std::string&>());
    if (it != kNames.end()) return it->second;
  }
  return ToU32(value);
}

struct ProcessRef {
  Scope* scope;
  std::string pointer;  // of the process object
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

void AppendProcesses(nvmlDevice_st& d, const std::string& key, std::vector<ProcessRef>& out) {
  const auto it = d.scope.doc.find(key);
  if (it == d.scope.doc.end() || !it->is_array()) return;
  for (std::size_t i = 0; i < it->size(); ++i) {
    out.push_back({&d.scope, "/" + key + "/" + std::to_string(i), d.gpu_instance_id, d.compute_instance_id});
  }
}

// A MIG handle lists its own processes; a MIG-enabled parent lists its own plus every instance's (the
// aggregate view root gets); a plain GPU lists its own.
std::vector<ProcessRef> Processes(nvmlDevice_st& d, const std::string& key) {
  std::vector<ProcessRef> out;
  AppendProcesses(d, key, out);
  if (!d.IsMig() && MigEnabled(d)) {
    for (auto& [slot, instance] : d.instances) AppendProcesses(*instance, key, out);
  }
  return out;
}

unsigned U32Or(Scope& scope, const std::string& pointer, unsigned fallback) {
  const std::optional<Json> value = Read(scope, pointer);
  return value ? ToU32(*value) : fallback;
}

nvmlReturn_t ProcessList(nvmlDevice_st& d, const char* function, const std::string& key, unsigned* count,
                         nvmlProcessInfo_t* infos) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::vector<ProcessRef> processes = Processes(d, key);
  const auto needed = static_cast<unsigned>(processes.size());
  if (*count == 0) {
    *count = needed;
    return needed == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (infos == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (const std::optional<unsigned> extra = TakeInsufficientOnce(d.scope, function)) {
    *count = needed + *extra;  // the list "grew" between the sizing call and this one
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (*count < needed) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < needed; ++i) {
    const ProcessRef& p = processes[i];
    nvmlProcessInfo_t& info = infos[i];
    info.pid = U32Or(*p.scope, p.pointer + "/pid", 0);
    const std::optional<Json> used = Read(*p.scope, p.pointer + "/used_memory");
    info.usedGpuMemory = used ? ToU64(*used) : kValueNotAvailable;
    info.gpuInstanceId = U32Or(*p.scope, p.pointer + "/gpu_instance_id", p.gpu_instance_id);
    info.computeInstanceId = U32Or(*p.scope, p.pointer + "/compute_instance_id", p.compute_instance_id);
  }
  *count = needed;
  return NVML_SUCCESS;
}

nvmlReturn_t ReadMemory(nvmlDevice_st& d, unsigned long long& total, unsigned long long& reserved,
                        unsigned long long& free, unsigned long long& used) {
  const std::optional<Json> total_value = Read(d.scope, "/memory/total");
  if (!total_value) return NVML_ERROR_NOT_SUPPORTED;
  total = ToU64(*total_value);
  const std::optional<Json> reserved_value = Read(d.scope, "/memory/reserved");
  const std::optional<Json> used_value = Read(d.scope, "/memory/used");
  const std::optional<Json> free_value = Read(d.scope, "/memory/free");
  reserved = reserved_value ? ToU64(*reserved_value) : 0;
  used = used_value ? ToU64(*used_value) : 0;
  const unsigned long long taken = used + reserved;
  free = free_value ? ToU64(*free_value) : (taken >= total ? 0 : total - taken);
  return NVML_SUCCESS;
}

bool GpmSupported(nvmlDevice_st& d) {
  nvmlDevice_st& gpu = d.Gpu();
  if (!gpu.scope.doc.contains("gpm")) return false;
  const std::optional<Json> supported = Peek(gpu.scope, "/gpm/supported");
  return supported ? ToU64(*supported) != 0 : true;
}

// Names for the metric ids of spec §6.6 that tests are likely to ask for; others get NULL names.
struct MetricName {
  unsigned id;
  const char* short_name;
  const char* unit;
};
[[maybe_unused]] constexpr MetricName kMetricNames[] = {
    {1, "gr_util", "%"},          {2, "sm_util", "%"},          {3, "sm_occupancy", "%"},
    {4, "int_util", "%"},         {5, "any_tensor_util", "%"},  {6, "dfma_tensor_util", "%"},
    {7, "hmma_tensor_util", "%"}, {8, "dmma_tensor_util", "%"}, {9, "imma_tensor_util", "%"},
    {10, "dram_bw_util", "%"},    {11, "fp64_util", "%"},       {12, "fp32_util", "%"},
    {13, "fp16_util", "%"},       {20, "pcie_tx", "MiB/s"},     {21, "pcie_rx", "MiB/s"},
    {60, "nvlink_rx", "MiB/s"},   {61, "nvlink_tx", "MiB/s"},
};

bool ValidSample(nvmlGpmSample_t sample) {
  return sample != nullptr && G().samples.contains(sample);
}

}  // namespace fake_nvml

using namespace fake_nvml;  // NOLINT(build/namespaces): the exported C functions below use it throughout

// ---- initialisation -----------------------------------------------------------------------------
FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return Init(__func__);
}

// The v1 call; the real one also fails when one GPU is in a bad state (inject that with "fail").
FAKE_NVML_EXPORT nvmlReturn_t nvmlInit(void) {
  return Init(__func__);
}

// Flags (NO_GPUS 1, NO_ATTACH 2, FORCE_INIT 4) are accepted and ignored.
FAKE_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags([[maybe_unused]] unsigned int flags) {
  return Init(__func__);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  return SystemCall(__func__, [] {
    --G().refcount;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  for (const CodeInfo& info : kCodes) {
    if (info.code == result) return info.text;
  }
  return "Unknown Error";
}

// ---- system -------------------------------------------------------------------------------------
FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return SystemCall(__func__,
                    [&] { return ReadString(G().current->system, "/driver_version", version, length); });
}

// Falls back to the scenario's version even when libcuda is "missing", as the real v1 call does.
FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  return SystemCall(__func__,
                    [&] { return ReadInto(G().current->system, "/cuda_driver_version", cudaDriverVersion); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return SystemCall(__func__, [&] {
    const std::optional<Json> libcuda = Peek(G().current->system, "/libcuda");
    if (libcuda && ToU64(*libcuda) == 0) return NVML_ERROR_LIBRARY_NOT_FOUND;
    return ReadInto(G().current->system, "/cuda_driver_version", cudaDriverVersion);
  });
}

namespace fake_nvml {

nvmlReturn_t GetCount(const char* function, unsigned* count) {
  return SystemCall(function, [&] {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = static_cast<unsigned>(G().current->devices.size());
    return NVML_SUCCESS;
  });
}

// Counted (and failed) per device when the index names one, else in the system scope.
nvmlReturn_t GetHandleByIndex(const char* function, unsigned index, nvmlDevice_t* device) {
  Lock lock(G().mu);
  if (G().refcount == 0 || G().current == nullptr) return NVML_ERROR_UNINITIALIZED;
  State* state = G().current;
  if (index >= state->devices.size()) {
    return Run(lock, state, state->system, function, true, [] { return NVML_ERROR_INVALID_ARGUMENT; });
  }
  nvmlDevice_st* d = state->devices[index].get();
  return Run(lock, state, d->scope, function, true, [&] {
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *device = d;
    return NVML_SUCCESS;
  });
}

}  // namespace fake_nvml

#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  return GetCount(__func__, deviceCount);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return GetHandleByIndex(__func__, index, device);
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) {
  return GetCount(__func__, deviceCount);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return GetHandleByIndex(__func__, index, device);
}

// ---- identity ----------------------------------------------------------------------------------

// A MIG handle answers with its parent's index.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = d.index;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return DeviceCall(__func__, device,
                    [&](nvmlDevice_st& d) { return ReadString(d.scope, "/name", name, length); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return DeviceCall(__func__, device,
                    [&](nvmlDevice_st& d) { return ReadString(d.scope, "/uuid", uuid, length); });
}

// bus_id and/or domain/bus/device; whichever is missing is derived from the other. A MIG handle gives its
// parent's PCI information.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    Scope& scope = d.Gpu().scope;
    if (!scope.doc.contains("pci")) return NVML_ERROR_NOT_SUPPORTED;
    unsigned domain = U32Or(scope, "/pci/domain", 0);
    unsigned bus = U32Or(scope, "/pci/bus", 0);
    unsigned dev = U32Or(scope, "/pci/device", 0);
    std::string bus_id;
    if (const std::optional<Json> id = Read(scope, "/pci/bus_id")) {
      bus_id = ToString(*id);
      unsigned parsed_domain = 0, parsed_bus = 0, parsed_device = 0;
      if (std::sscanf(bus_id.c_str(), "%x:%x:%x", &parsed_domain, &parsed_bus, &parsed_device) == 3) {
        if (!scope.doc["pci"].contains("domain")) domain = parsed_domain;
        if (!scope.doc["pci"].contains("bus")) bus = parsed_bus;
        if (!scope.doc["pci"].contains("device")) dev = parsed_device;
      }
    }
    char text[64];
    if (bus_id.empty()) {
      std::snprintf(text, sizeof(text), "%08X:%02X:%02X.0", domain, bus, dev);
      bus_id = text;
    }
    std::snprintf(text, sizeof(text), "%04X:%02X:%02X.0", domain, bus, dev);
    std::memset(pci, 0, sizeof(*pci));
    CopyTruncated(text, pci->busIdLegacy);
    CopyTruncated(bus_id, pci->busId);
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = U32Or(scope, "/pci/device_id", 0);
    pci->pciSubSystemId = U32Or(scope, "/pci/subsystem_id", 0);
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const std::optional<Json> value = Read(d.Gpu().scope, "/architecture");
    if (!value) return NVML_ERROR_NOT_SUPPORTED;
    *arch = ParseArchitecture(*value);
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* numCores) {
  return DeviceCall(__func__, device,
                    [&](nvmlDevice_st& d) { return ReadInto(d.scope, "/cuda_cores", numCores); });
}

// ---- memory ------------------------------------------------------------------------------------

// v1: "used" includes reserved memory.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long total = 0, reserved = 0, free = 0, used = 0;
    const nvmlReturn_t rc = ReadMemory(d, total, reserved, free, used);
    if (rc != NVML_SUCCESS) return rc;
    memory->total = total;
    memory->free = free;
    memory->used = used + reserved;
    return NVML_SUCCESS;
  });
}

#ifndef FAKE_NVML_LEGACY
// Only version 0x02000028 is accepted; version = 2 fails with FUNCTION_NOT_FOUND, as on real drivers.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != kMemoryV2Version) return NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned long long total = 0, reserved = 0, free = 0, used = 0;
    const nvmlReturn_t rc = ReadMemory(d, total, reserved, free, used);
    if (rc != NVML_SUCCESS) return rc;
    memory->total = total;
    memory->reserved = reserved;
    memory->free = free;
    memory->used = used;
    return NVML_SUCCESS;
  });
}
#endif

// ---- utilisation, sensors, power ----------------------------------------------------------------
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                            nvmlUtilization_t* utilization) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (MigBlocksUtilization(d)) return NVML_ERROR_NOT_SUPPORTED;
    const std::optional<Json> gpu = Read(d.scope, "/utilization/gpu");
    const std::optional<Json> memory = Read(d.scope, "/utilization/memory");
    if (!gpu && !memory) return NVML_ERROR_NOT_SUPPORTED;
    utilization->gpu = gpu ? ToU32(*gpu) : 0;
    utilization->memory = memory ? ToU32(*memory) : 0;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                       nvmlTemperatureSensors_t sensorType,
                                                       unsigned int* temp) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (sensorType != NVML_TEMPERATURE_GPU || temp == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    return ReadInto(d.scope, "/temperature", temp);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    return ReadInto(d.scope, "/power_mw", power);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    return ReadInto(d.scope, "/power_limit_mw", limit);
  });
}

#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                                  unsigned long long* energy) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    return ReadInto(d.scope, "/energy_mj", energy);
  });
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                     unsigned int* clock) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    static constexpr const char* kKeys[] = {"/clocks/graphics", "/clocks/sm", "/clocks/mem", "/clocks/video"};
    if (type < NVML_CLOCK_GRAPHICS || type > NVML_CLOCK_VIDEO || clock == nullptr) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    return ReadInto(d.scope, kKeys[static_cast<int>(type)], clock);
  });
}

// Only the device-memory (DRAM) location has counters; other locations are NOT_SUPPORTED.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device,
                                                              nvmlMemoryErrorType_t errorType,
                                                              nvmlEccCounterType_t counterType,
                                                              nvmlMemoryLocation_t locationType,
                                                              unsigned long long* count) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    const bool corrected = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    const bool is_volatile = counterType == NVML_VOLATILE_ECC;
    if ((!corrected && errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
        (!is_volatile && counterType != NVML_AGGREGATE_ECC) || count == nullptr) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (d.IsMig() || locationType != NVML_MEMORY_LOCATION_DEVICE_MEMORY) return NVML_ERROR_NOT_SUPPORTED;
    const std::string key = std::string("/ecc/") + (is_volatile ? "volatile_" : "aggregate_") +
                            (corrected ? "corrected" : "uncorrected");
    return ReadInto(d.scope, key, count);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                                              unsigned int* samplingPeriodUs) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (utilization == nullptr || samplingPeriodUs == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (MigBlocksUtilization(d)) return NVML_ERROR_NOT_SUPPORTED;
    const nvmlReturn_t rc = ReadInto(d.scope, "/encoder/utilization", utilization);
    if (rc != NVML_SUCCESS) return rc;
    *samplingPeriodUs = U32Or(d.scope, "/encoder/sampling_period_us", kDefaultEncoderPeriodUs);
    return NVML_SUCCESS;
  });
}

namespace fake_nvml {

// "fans": [fan0, fan1, ...] or "fan_speed": fan0.
nvmlReturn_t FanSpeed(nvmlDevice_st& d, unsigned fan, unsigned* speed) {
  if (speed == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
  const auto fans = d.scope.doc.find("fans");
  if (fans != d.scope.doc.end() && fans->is_array()) {
    if (fan >= fans->size()) return NVML_ERROR_INVALID_ARGUMENT;
    return ReadInto(d.scope, "/fans/" + std::to_string(fan), speed);
  }
  if (!d.scope.doc.contains("fan_speed")) return NVML_ERROR_NOT_SUPPORTED;
  if (fan != 0) return NVML_ERROR_INVALID_ARGUMENT;
  return ReadInto(d.scope, "/fan_speed", speed);
}

nvmlReturn_t ClockReasons(nvmlDevice_st& d, unsigned long long* reasons) {
  if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
  return ReadInto(d.scope, "/clocks_event_reasons", reasons);
}

}  // namespace fake_nvml

#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan,
                                                       unsigned int* speed) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) { return FanSpeed(d, fan, speed); });
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) { return FanSpeed(d, 0, speed); });
}

#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                     unsigned long long* clocksEventReasons) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) { return ClockReasons(d, clocksEventReasons); });
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* clocksThrottleReasons) {
  return DeviceCall(__func__, device,
                    [&](nvmlDevice_st& d) { return ClockReasons(d, clocksThrottleReasons); });
}

// ---- processes ----------------------------------------------------------------------------------
#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                      unsigned int* infoCount,
                                                                      nvmlProcessInfo_t* infos) {
  return DeviceCall(__func__, device, [&, function = __func__](nvmlDevice_st& d) {
    return ProcessList(d, function, "compute_processes", infoCount, infos);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                                       unsigned int* infoCount,
                                                                       nvmlProcessInfo_t* infos) {
  return DeviceCall(__func__, device, [&, function = __func__](nvmlDevice_st& d) {
    return ProcessList(d, function, "graphics_processes", infoCount, infos);
  });
}
#endif

// The _v2 variants take nvmlProcessInfo_v2_t, the same 24-byte layout; older drivers have only these.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                      unsigned int* infoCount,
                                                                      nvmlProcessInfo_t* infos) {
  return DeviceCall(__func__, device, [&, function = __func__](nvmlDevice_st& d) {
    return ProcessList(d, function, "compute_processes", infoCount, infos);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                                       unsigned int* infoCount,
                                                                       nvmlProcessInfo_t* infos) {
  return DeviceCall(__func__, device, [&, function = __func__](nvmlDevice_st& d) {
    return ProcessList(d, function, "graphics_processes", infoCount, infos);
  });
}

#ifndef FAKE_NVML_LEGACY
// Samples with timeStamp > lastSeenTimeStamp; "timestamp": "now" is the wall clock in µs at each call.
// A NULL buffer sizes (INSUFFICIENT_SIZE with the count); NOT_FOUND when nothing is newer.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                              nvmlProcessUtilizationSample_t* utilization,
                                                              unsigned int* processSamplesCount,
                                                              unsigned long long lastSeenTimeStamp) {
  return DeviceCall(__func__, device, [&, function = __func__](nvmlDevice_st& d) {
    if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (MigBlocksUtilization(d)) return NVML_ERROR_NOT_SUPPORTED;
    const auto list = d.scope.doc.find("process_utilization");
    if (list == d.scope.doc.end() || !list->is_array()) return NVML_ERROR_NOT_SUPPORTED;
    const auto now_us =
        static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
    auto timestamp = [&](const std::string& base, bool advance) {
      const std::optional<Json> ts = Read(d.scope, base + "/timestamp", advance);
      if (!ts) return 0ULL;
      return ts->is_string() && ts->get_ref<const std::string&>() == "now" ? now_us : ToU64(*ts);
    };
    std::vector<std::string> newer;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string base = "/process_utilization/" + std::to_string(i);
      if (timestamp(base, false) > lastSeenTimeStamp) newer.push_back(base);
    }
    const auto needed = static_cast<unsigned>(newer.size());
    if (needed == 0) {
      *processSamplesCount = 0;
      return NVML_ERROR_NOT_FOUND;
    }
    if (utilization == nullptr) {
      *processSamplesCount = needed;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (const std::optional<unsigned> extra = TakeInsufficientOnce(d.scope, function)) {
      *processSamplesCount = needed + *extra;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (*processSamplesCount < needed) {
      *processSamplesCount = needed;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < needed; ++i) {
      const std::string& base = newer[i];
      nvmlProcessUtilizationSample_t& sample = utilization[i];
      sample.pid = U32Or(d.scope, base + "/pid", 0);
      sample.timeStamp = timestamp(base, true);
      sample.smUtil = U32Or(d.scope, base + "/sm", 0);
      sample.memUtil = U32Or(d.scope, base + "/mem", 0);
      sample.encUtil = U32Or(d.scope, base + "/enc", 0);
      sample.decUtil = U32Or(d.scope, base + "/dec", 0);
    }
    *processSamplesCount = needed;
    return NVML_SUCCESS;
  });
}
#endif

// ---- MIG ----------------------------------------------------------------------------------------
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode,
                                                   unsigned int* pendingMode) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (currentMode == nullptr || pendingMode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (d.IsMig() || !d.scope.doc.contains("mig")) return NVML_ERROR_NOT_SUPPORTED;
    *currentMode = MigEnabled(d) ? 1 : 0;
    const std::optional<Json> pending = Peek(d.scope, "/mig/pending");
    *pendingMode = pending ? ToU32(*pending) : *currentMode;
    return NVML_SUCCESS;
  });
}

// 0 when MIG is unsupported or off.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    *count = MigEnabled(d) ? U32Or(d.scope, "/mig/max_devices", kDefaultMaxMigDevices) : 0;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                                  nvmlDevice_t* migDevice) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (migDevice == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    if (!MigEnabled(d))
      return d.scope.doc.contains("mig") ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
    if (index >= U32Or(d.scope, "/mig/max_devices", kDefaultMaxMigDevices))
      return NVML_ERROR_INVALID_ARGUMENT;
    const auto it = d.instances.find(index);
    if (it == d.instances.end()) return NVML_ERROR_NOT_FOUND;  // an empty slot
    *migDevice = it->second.get();
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* isMigDevice) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (isMigDevice == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *isMigDevice = d.IsMig() ? 1 : 0;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    *id = d.gpu_instance_id;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    *id = d.compute_instance_id;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                                           nvmlDevice_t* device) {
  return DeviceCall(__func__, migDevice, [&](nvmlDevice_st& d) {
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.IsMig()) return NVML_ERROR_NOT_SUPPORTED;
    *device = d.parent;
    return NVML_SUCCESS;
  });
}

// ---- GPM ----------------------------------------------------------------------------------------
#ifndef FAKE_NVML_LEGACY
FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (gpmSupport == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (gpmSupport->version != kGpmSupportVersion) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    gpmSupport->isSupportedDevice = GpmSupported(d) ? 1 : 0;
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  return SystemCall(__func__, [&] {
    if (gpmSample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *gpmSample = new nvmlGpmSample_st;
    G().samples.insert(*gpmSample);
    return NVML_SUCCESS;
  });
}

// Works after nvmlShutdown too, so callers can always release their buffers.
FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  Lock lock(G().mu);
  if (G().current != nullptr) ++G().current->system.calls[__func__];
  if (!ValidSample(gpmSample)) return NVML_ERROR_INVALID_ARGUMENT;
  G().samples.erase(gpmSample);
  delete gpmSample;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (!ValidSample(gpmSample)) return NVML_ERROR_INVALID_ARGUMENT;
    if (!GpmSupported(d)) return NVML_ERROR_NOT_SUPPORTED;
    gpmSample->target = &d;
    gpmSample->taken_at = Clock::now();
    return NVML_SUCCESS;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId,
                                                  nvmlGpmSample_t gpmSample) {
  return DeviceCall(__func__, device, [&](nvmlDevice_st& d) {
    if (!ValidSample(gpmSample) || d.IsMig()) return NVML_ERROR_INVALID_ARGUMENT;
    if (!GpmSupported(d)) return NVML_ERROR_NOT_SUPPORTED;
    if (!MigEnabled(d)) return NVML_ERROR_INVALID_ARGUMENT;
    for (auto& [slot, instance] : d.instances) {
      if (instance->gpu_instance_id != gpuInstanceId) continue;
      gpmSample->target = instance.get();
      gpmSample->taken_at = Clock::now();
      return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
  });
}

// Counted and failed in the scope of the device (or MIG instance) the samples were taken on. Samples less
// than 100 ms apart give INVALID_ARGUMENT (the docs require > 100 ms without naming the error).
FAKE_NVML_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metricsGet) {
  Lock lock(G().mu);
  if (G().refcount == 0 || G().current == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (metricsGet == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (metricsGet->version != kGpmMetricsGetVersion) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlGpmSample_st* s1 = metricsGet->sample1;
  nvmlGpmSample_st* s2 = metricsGet->sample2;
  if (!ValidSample(s1) || !ValidSample(s2) || s1->target == nullptr || s1->target != s2->target ||
      s1->target->owner != G().current) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  nvmlDevice_st& d = *s1->target;
  return Run(lock, d.owner, d.scope, __func__, true, [&] {
    if (metricsGet->numMetrics > kGpmMetricMax) return NVML_ERROR_INVALID_ARGUMENT;
    const auto apart =
        s1->taken_at > s2->taken_at ? s1->taken_at - s2->taken_at : s2->taken_at - s1->taken_at;
    if (apart < kGpmMinInterval) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < metricsGet->numMetrics; ++i) {
      nvmlGpmMetric_t& metric = metricsGet->metrics[i];
      metric.metricInfo.shortName = nullptr;
      metric.metricInfo.longName = nullptr;
      metric.metricInfo.unit = nullptr;
      for (const MetricName& name : kMetricNames) {
        if (name.id != metric.metricId) continue;
        metric.metricInfo.shortName = const_cast<char*>(name.short_name);
        metric.metricInfo.longName = const_cast<char*>(name.short_name);
        metric.metricInfo.unit = const_cast<char*>(name.unit);
      }
      const std::optional<Json> value = Read(d.scope, "/gpm/metrics/" + std::to_string(metric.metricId));
      metric.nvmlReturn = value ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
      metric.value = value ? ToDouble(*value) : 0.0;
    }
    return NVML_SUCCESS;
  });
}
#endif

// ---- test-only entry points --------------------------------------------------------------------

// Calls of `function` on device `device_index` (its parent handle; kSystemScope = 0xFFFFFFFF for calls
// without a device) since the scenario was loaded. 0 when nothing is loaded.
FAKE_NVML_EXPORT unsigned long long fake_nvml_call_count(const char* function, unsigned device_index) {
  Lock lock(G().mu);
  const State* state = G().current;
  if (state == nullptr || function == nullptr) return 0;
  const Scope* scope = nullptr;
  if (device_index == kSystemScope) {
    scope = &state->system;
  } else if (device_index < state->devices.size()) {
    scope = &state->devices[device_index]->scope;
  }
  if (scope == nullptr) return 0;
  const auto it = scope->calls.find(std::string_view(function));
  return it == scope->calls.end() ? 0 : it->second;
}

// Calls of `function` on the MIG instance in `slot` of device `device_index`.
FAKE_NVML_EXPORT unsigned long long fake_nvml_mig_call_count(const char* function, unsigned device_index,
                                                             unsigned slot) {
  Lock lock(G().mu);
  const State* state = G().current;
  if (state == nullptr || function == nullptr || device_index >= state->devices.size()) return 0;
  const auto& instances = state->devices[device_index]->instances;
  const auto instance = instances.find(slot);
  if (instance == instances.end()) return 0;
  const auto it = instance->second->scope.calls.find(std::string_view(function));
  return it == instance->second->scope.calls.end() ? 0 : it->second;
}

// Forgets the loaded scenario (the next nvmlInit* reads the file afresh) and drops every reference.
FAKE_NVML_EXPORT void fake_nvml_reset(void) {
  Lock lock(G().mu);
  G().current = nullptr;
  G().refcount = 0;
}
