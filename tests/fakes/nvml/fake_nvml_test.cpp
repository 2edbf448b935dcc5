// Self-test of the fake libnvidia-ml.so.1: loads each built variant by path with dlopen and calls it through
// dlsym, as runmon does, with NVML's types declared here independently of the fake (so a layout slip on
// either side shows). Covers the size protocols, the nvmlMemory_v2 version trap, series advancing per call,
// failure injection and hangs, MIG enumeration with an empty slot, the GPM 100 ms rule, the legacy variant's
// missing symbols, and nvmlInit without a scenario.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---- NVML declarations (spec accelerators.md §6), as a consumer writes them ---------------------
using nvmlDevice_t = void*;
using nvmlGpmSample_t = void*;
constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6,
              kInsufficientSize = 7, kDriverNotLoaded = 9, kFunctionNotFound = 13, kGpuIsLost = 15,
              kArgumentVersionMismatch = 25;
constexpr unsigned kNoId = 0xFFFFFFFFu;
constexpr unsigned kSystem = 0xFFFFFFFFu;

struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
struct Utilization {
  unsigned gpu, memory;
};
struct ProcessInfo {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
struct ProcessUtilizationSample {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
struct GpmSupport {
  unsigned version, isSupportedDevice;
};
struct GpmMetric {
  unsigned metricId;
  int nvmlReturn;
  double value;
  const char* names[3];
};
// A consumer's own, smaller array: the fake must only touch metrics[0..numMetrics).
struct GpmMetricsGet {
  unsigned version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  GpmMetric metrics[4];
};
static_assert(sizeof(PciInfo) == 68 && sizeof(MemoryV2) == 40 && sizeof(ProcessInfo) == 24 &&
              sizeof(ProcessUtilizationSample) == 32 && sizeof(GpmMetric) == 40);

// ---- loading ------------------------------------------------------------------------------------
class Library {
 public:
  explicit Library(const char* path) : handle_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) ADD_FAILURE() << "dlopen " << path << ": " << dlerror();
  }
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool Has(const char* name) const { return handle_ != nullptr && dlsym(handle_, name) != nullptr; }

  template <typename Fn>
  Fn* Get(const char* name) const {
    void* symbol = handle_ == nullptr ? nullptr : dlsym(handle_, name);
    if (symbol == nullptr) ADD_FAILURE() << "missing symbol " << name;
    return reinterpret_cast<Fn*>(symbol);
  }

  // The common calls, resolved once.
  int Init() const { return Get<int()>("nvmlInit_v2")(); }
  int Shutdown() const { return Get<int()>("nvmlShutdown")(); }
  nvmlDevice_t Handle(unsigned index, const char* fn = "nvmlDeviceGetHandleByIndex_v2") const {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(Get<int(unsigned, nvmlDevice_t*)>(fn)(index, &device), kSuccess);
    return device;
  }
  unsigned long long Calls(const char* fn, unsigned device) const {
    return Get<unsigned long long(const char*, unsigned)>("fake_nvml_call_count")(fn, device);
  }

 private:
  void* handle_;
};

std::string Scenario(const char* name) {
  return std::string(FAKE_NVML_SCENARIOS_DIR) + "/" + name;
}

// Writes `json` to a fresh file and points the fake at it.
void UseScenario(const std::string& json) {
  static int counter = 0;
  const std::string path = ::testing::TempDir() + "/fake_nvml_" + std::to_string(::getpid()) + "_" +
                           std::to_string(counter++) + ".json";
  std::ofstream(path) << json;
  ::setenv("RUNMON_FAKE_NVML_SCENARIO", path.c_str(), 1);
}

void UseScenarioFile(const char* name) {
  ::setenv("RUNMON_FAKE_NVML_SCENARIO", Scenario(name).c_str(), 1);
}

class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("RUNMON_FAKE_NVML_SCENARIO");
    lib_.Get<void()>("fake_nvml_reset")();
  }
  void TearDown() override { lib_.Get<void()>("fake_nvml_reset")(); }

  Library lib_{FAKE_NVML_FULL_PATH};
};

// ---- tests --------------------------------------------------------------------------------------
TEST_F(FakeNvmlTest, InitFailsWithoutScenario) {
  EXPECT_STREQ(lib_.Get<const char*(int)>("nvmlErrorString")(kDriverNotLoaded), "Driver Not Loaded");
  EXPECT_EQ(lib_.Init(), kDriverNotLoaded);
  EXPECT_EQ(lib_.Get<int()>("nvmlInit")(), kDriverNotLoaded);
  ::setenv("RUNMON_FAKE_NVML_SCENARIO", "/nonexistent/scenario.json", 1);
  EXPECT_EQ(lib_.Get<int(unsigned)>("nvmlInitWithFlags")(0), kDriverNotLoaded);
  unsigned count = 0;
  EXPECT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), kUninitialized);
  EXPECT_EQ(lib_.Shutdown(), kUninitialized);
}

TEST_F(FakeNvmlTest, InitResultSeriesAndRefcount) {
  UseScenario(R"({"init_result": ["DRIVER_NOT_LOADED", "NVML_SUCCESS"], "devices": []})");
  EXPECT_EQ(lib_.Init(), kDriverNotLoaded);
  EXPECT_EQ(lib_.Init(), kSuccess);
  EXPECT_EQ(lib_.Get<int()>("nvmlInit")(), kSuccess);  // refcount 2
  EXPECT_EQ(lib_.Shutdown(), kSuccess);
  unsigned count = 7;
  EXPECT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), kSuccess);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(lib_.Shutdown(), kSuccess);
  EXPECT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), kUninitialized);
  EXPECT_EQ(lib_.Calls("nvmlInit_v2", kSystem), 2u);
}

TEST_F(FakeNvmlTest, H100ScenarioIdentityAndReadings) {
  UseScenarioFile("h100x2.json");
  ASSERT_EQ(lib_.Init(), kSuccess);
  unsigned count = 0;
  ASSERT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), kSuccess);
  ASSERT_EQ(count, 2u);
  char text[96];
  ASSERT_EQ(lib_.Get<int(char*, unsigned)>("nvmlSystemGetDriverVersion")(text, 80), kSuccess);
  EXPECT_STREQ(text, "550.90.07");
  EXPECT_EQ(lib_.Get<int(char*, unsigned)>("nvmlSystemGetDriverVersion")(text, 5), kInsufficientSize);
  int cuda = 0;
  ASSERT_EQ(lib_.Get<int(int*)>("nvmlSystemGetCudaDriverVersion_v2")(&cuda), kSuccess);
  EXPECT_EQ(cuda, 12040);

  nvmlDevice_t d0 = lib_.Handle(0);
  nvmlDevice_t d1 = lib_.Handle(1);
  ASSERT_NE(d0, d1);
  unsigned index = 9;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetIndex")(d1, &index), kSuccess);
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetName")(d0, text, 96), kSuccess);
  EXPECT_STREQ(text, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetUUID")(d0, text, 96), kSuccess);
  EXPECT_STREQ(text, "GPU-5b6f2a8e-91c4-4d1e-b7f3-0c2a9e4d7f11");

  PciInfo pci{};
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, PciInfo*)>("nvmlDeviceGetPciInfo_v3")(d1, &pci), kSuccess);
  EXPECT_STREQ(pci.busId, "00000000:3B:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:3B:00.0");
  EXPECT_EQ(pci.bus, 0x3Bu);
  EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);

  unsigned value = 0;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetArchitecture")(d0, &value), kSuccess);
  EXPECT_EQ(value, 9u);  // NVML_DEVICE_ARCH_HOPPER
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetNumGpuCores")(d0, &value), kSuccess);
  EXPECT_EQ(value, 16896u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")(d0, 0, &value), kSuccess);
  EXPECT_EQ(value, 54u);
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")(d0, 1, &value),
            kInvalidArgument);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetClockInfo")(d0, 2, &value), kSuccess);
  EXPECT_EQ(value, 2619u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetEnforcedPowerLimit")(d0, &value), kSuccess);
  EXPECT_EQ(value, 700000u);
  Utilization util{};
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, Utilization*)>("nvmlDeviceGetUtilizationRates")(d0, &util), kSuccess);
  EXPECT_EQ(util.gpu, 97u);
  EXPECT_EQ(util.memory, 61u);
  unsigned long long ull = 1;
  auto ecc =
      lib_.Get<int(nvmlDevice_t, int, int, int, unsigned long long*)>("nvmlDeviceGetMemoryErrorCounter");
  ASSERT_EQ(ecc(d0, 0, 1, 2, &ull), kSuccess);  // corrected, aggregate, DRAM
  EXPECT_EQ(ull, 3u);
  EXPECT_EQ(ecc(d0, 0, 0, 1, &ull), kNotSupported);  // L2 cache
  unsigned period = 0;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetEncoderUtilization")(d1, &value,
                                                                                                 &period),
            kSuccess);
  EXPECT_EQ(period, 166667u);
  // No fan in the scenario: NOT_SUPPORTED, as on fanless data-centre boards.
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, unsigned, unsigned*)>("nvmlDeviceGetFanSpeed_v2")(d0, 0, &value),
            kNotSupported);
  auto reasons = lib_.Get<int(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetCurrentClocksEventReasons");
  ASSERT_EQ(reasons(d1, &ull), kSuccess);
  EXPECT_EQ(ull, 1u);  // GpuIdle
  unsigned current = 5, pending = 5;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")(d0, &current, &pending),
            kSuccess);
  EXPECT_EQ(current, 0u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetMaxMigDeviceCount")(d0, &value), kSuccess);
  EXPECT_EQ(value, 0u);
  // A handle that is not the fake's.
  int bogus = 0;
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetIndex")(&bogus, &value), kInvalidArgument);
  EXPECT_EQ(lib_.Shutdown(), kSuccess);
}

TEST_F(FakeNvmlTest, MemoryV2NeedsTheStructVersionAndExcludesReserved) {
  UseScenario(R"({"devices": [{"memory": {"total": 1000, "reserved": 100, "used": 300}}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  nvmlDevice_t d = lib_.Handle(0);
  auto v2 = lib_.Get<int(nvmlDevice_t, MemoryV2*)>("nvmlDeviceGetMemoryInfo_v2");
  MemoryV2 m2{};
  m2.version = 2;  // what the docs' wording and nvtop suggest
  EXPECT_EQ(v2(d, &m2), kFunctionNotFound);
  m2.version = 0x02000028;
  ASSERT_EQ(v2(d, &m2), kSuccess);
  EXPECT_EQ(m2.total, 1000u);
  EXPECT_EQ(m2.reserved, 100u);
  EXPECT_EQ(m2.used, 300u);
  EXPECT_EQ(m2.free, 600u);
  Memory m1{};
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, Memory*)>("nvmlDeviceGetMemoryInfo")(d, &m1), kSuccess);
  EXPECT_EQ(m1.used, 400u);  // v1 includes reserved
  EXPECT_EQ(m1.free, 600u);
}

TEST_F(FakeNvmlTest, ArraysAdvancePerCallAndTheLastRepeats) {
  UseScenario(R"({"devices": [{"energy_mj": [100, 200, 300], "power_mw": 5000}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  nvmlDevice_t d = lib_.Handle(0);
  auto energy = lib_.Get<int(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetTotalEnergyConsumption");
  std::vector<unsigned long long> seen;
  for (int i = 0; i < 5; ++i) {
    unsigned long long mj = 0;
    ASSERT_EQ(energy(d, &mj), kSuccess);
    seen.push_back(mj);
  }
  EXPECT_EQ(seen, (std::vector<unsigned long long>{100, 200, 300, 300, 300}));
  unsigned mw = 0;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPowerUsage")(d, &mw), kSuccess);
  EXPECT_EQ(mw, 5000u);
  // Absent from the scenario: NOT_SUPPORTED.
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")(d, 0, &mw),
            kNotSupported);
}

TEST_F(FakeNvmlTest, ProcessListSizeProtocol) {
  UseScenarioFile("h100x2.json");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto compute =
      lib_.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v3");
  auto graphics =
      lib_.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetGraphicsRunningProcesses_v3");
  nvmlDevice_t d0 = lib_.Handle(0);
  unsigned count = 0;
  EXPECT_EQ(compute(d0, &count, nullptr), kInsufficientSize);
  EXPECT_EQ(count, 2u);
  ProcessInfo infos[4] = {};
  count = 1;
  EXPECT_EQ(compute(d0, &count, infos), kInsufficientSize);
  EXPECT_EQ(count, 2u);
  count = 4;
  ASSERT_EQ(compute(d0, &count, infos), kSuccess);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(infos[0].pid, 4242u);
  EXPECT_EQ(infos[0].usedGpuMemory, 38ULL << 30);
  EXPECT_EQ(infos[0].gpuInstanceId, kNoId);
  EXPECT_EQ(infos[0].computeInstanceId, kNoId);
  EXPECT_EQ(infos[1].pid, 4310u);
  count = 4;
  ASSERT_EQ(compute(d0, &count, infos), kSuccess);
  EXPECT_EQ(infos[0].usedGpuMemory, 39ULL << 30);  // a series, advanced by the filling call only
  count = 0;
  EXPECT_EQ(graphics(d0, &count, nullptr), kSuccess);  // none: SUCCESS with 0
  EXPECT_EQ(count, 0u);
  // The _v2 symbol takes the same 24-byte struct.
  count = 4;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v2")(
                d0, &count, infos),
            kSuccess);
  EXPECT_EQ(count, 2u);
}

TEST_F(FakeNvmlTest, InsufficientSizeOnceReportsALargerCount) {
  UseScenario(R"({"devices": [{
    "compute_processes": [{"pid": 1}, {"pid": 2}],
    "fail": {"nvmlDeviceGetComputeRunningProcesses_v3": {"insufficient_size_once": 3}}}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto compute =
      lib_.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v3");
  nvmlDevice_t d = lib_.Handle(0);
  unsigned count = 0;
  ASSERT_EQ(compute(d, &count, nullptr), kInsufficientSize);
  ASSERT_EQ(count, 2u);
  std::vector<ProcessInfo> infos(count);
  EXPECT_EQ(compute(d, &count, infos.data()), kInsufficientSize);  // the list "grew"
  EXPECT_EQ(count, 5u);
  infos.resize(count);
  ASSERT_EQ(compute(d, &count, infos.data()), kSuccess);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(infos[1].pid, 2u);
  EXPECT_EQ(infos[1].usedGpuMemory, ~0ULL);  // no used_memory: NVML_VALUE_NOT_AVAILABLE
}

TEST_F(FakeNvmlTest, ProcessUtilizationHonoursLastSeenTimestamp) {
  UseScenario(R"({"devices": [
    {"process_utilization": [{"pid": 10, "sm": 40, "timestamp": 1000},
                             {"pid": 11, "sm": [50, 60], "mem": 7, "timestamp": 2000}]},
    {"process_utilization": [{"pid": 12, "sm": 1, "timestamp": "now"}]},
    {"name": "no samples"}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto get = lib_.Get<int(nvmlDevice_t, ProcessUtilizationSample*, unsigned*, unsigned long long)>(
      "nvmlDeviceGetProcessUtilization");
  nvmlDevice_t d = lib_.Handle(0);
  unsigned count = 0;
  ASSERT_EQ(get(d, nullptr, &count, 0), kInsufficientSize);
  EXPECT_EQ(count, 2u);
  ProcessUtilizationSample samples[4] = {};
  count = 1;
  EXPECT_EQ(get(d, samples, &count, 0), kInsufficientSize);
  EXPECT_EQ(count, 2u);
  count = 4;
  ASSERT_EQ(get(d, samples, &count, 1000), kSuccess);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(samples[0].pid, 11u);
  EXPECT_EQ(samples[0].timeStamp, 2000u);
  EXPECT_EQ(samples[0].smUtil, 50u);
  EXPECT_EQ(samples[0].memUtil, 7u);
  count = 4;
  EXPECT_EQ(get(d, samples, &count, 2000), kNotFound);
  EXPECT_EQ(get(d, nullptr, &count, 2000), kNotFound);
  count = 4;
  ASSERT_EQ(get(d, samples, &count, 0), kSuccess);
  EXPECT_EQ(samples[1].smUtil, 60u);

  nvmlDevice_t live = lib_.Handle(1);
  count = 4;
  ASSERT_EQ(get(live, samples, &count, 0), kSuccess);
  const unsigned long long first = samples[0].timeStamp;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  count = 4;
  ASSERT_EQ(get(live, samples, &count, first), kSuccess);  // "now" is always newer
  EXPECT_GT(samples[0].timeStamp, first);
  EXPECT_EQ(get(lib_.Handle(2), samples, &count, 0), kNotSupported);
}

TEST_F(FakeNvmlTest, FailureInjectionAfterCallsAndCallCounts) {
  UseScenario(R"({
    "devices": [
      {"power_mw": 100, "temperature": 40, "fan_speed": 30,
       "fail": {"nvmlDeviceGetPowerUsage": {"code": "GPU_IS_LOST", "after_calls": 2},
                "nvmlDeviceGetTemperature": {"code": 3},
                "nvmlDeviceGetFanSpeed": {"code": "NVML_ERROR_NOT_SUPPORTED", "times": 1}}},
      {"power_mw": 200}],
    "fail": {"nvmlDeviceGetCount_v2": {"code": "UNKNOWN", "after_calls": 1}}})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto power = lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPowerUsage");
  nvmlDevice_t d0 = lib_.Handle(0);
  nvmlDevice_t d1 = lib_.Handle(1);
  unsigned mw = 0;
  EXPECT_EQ(power(d0, &mw), kSuccess);
  EXPECT_EQ(power(d0, &mw), kSuccess);
  EXPECT_EQ(power(d0, &mw), kGpuIsLost);
  EXPECT_EQ(power(d0, &mw), kGpuIsLost);
  EXPECT_EQ(power(d1, &mw), kSuccess);  // per device
  EXPECT_EQ(mw, 200u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetPowerUsage", 0), 4u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetPowerUsage", 1), 1u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetHandleByIndex_v2", 1), 1u);
  unsigned value = 0;
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")(d0, 0, &value),
            kNotSupported);
  auto fan = lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetFanSpeed");
  EXPECT_EQ(fan(d0, &value), kNotSupported);
  EXPECT_EQ(fan(d0, &value), kSuccess);  // "times": 1
  EXPECT_EQ(value, 30u);
  unsigned count = 0;
  EXPECT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), kSuccess);
  EXPECT_EQ(lib_.Get<int(unsigned*)>("nvmlDeviceGetCount_v2")(&count), 999);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetCount_v2", kSystem), 2u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetCount_v2", 0), 0u);
}

TEST_F(FakeNvmlTest, HangSleepsThenAnswersWithoutBlockingOtherCalls) {
  UseScenario(R"({"devices": [{"power_mw": 100, "temperature": 40,
    "fail": {"nvmlDeviceGetPowerUsage": {"hang_seconds": 1, "after_calls": 1}}}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto power = lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPowerUsage");
  auto temperature = lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature");
  nvmlDevice_t d = lib_.Handle(0);
  unsigned mw = 0;
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(power(d, &mw), kSuccess);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));

  std::atomic<bool> done{false};
  int rc = -1;
  start = std::chrono::steady_clock::now();
  std::thread hung([&] {
    rc = power(d, &mw);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  unsigned celsius = 0;
  EXPECT_EQ(temperature(d, 0, &celsius), kSuccess);  // not blocked by the hung call
  EXPECT_FALSE(done.load());
  hung.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_EQ(rc, kSuccess);
  EXPECT_EQ(mw, 100u);
}

TEST_F(FakeNvmlTest, MigEnumerationSkipsTheEmptySlot) {
  UseScenarioFile("a100_mig.json");
  ASSERT_EQ(lib_.Init(), kSuccess);
  nvmlDevice_t gpu = lib_.Handle(0);
  unsigned current = 0, pending = 0, max = 0;
  ASSERT_EQ(
      lib_.Get<int(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")(gpu, &current, &pending),
      kSuccess);
  EXPECT_EQ(current, 1u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetMaxMigDeviceCount")(gpu, &max), kSuccess);
  ASSERT_EQ(max, 7u);
  auto by_index = lib_.Get<int(nvmlDevice_t, unsigned, nvmlDevice_t*)>("nvmlDeviceGetMigDeviceHandleByIndex");
  std::vector<unsigned> found;
  std::vector<nvmlDevice_t> migs;
  for (unsigned slot = 0; slot < max; ++slot) {
    nvmlDevice_t mig = nullptr;
    const int rc = by_index(gpu, slot, &mig);
    if (rc == kNotFound) continue;
    ASSERT_EQ(rc, kSuccess);
    found.push_back(slot);
    migs.push_back(mig);
  }
  EXPECT_EQ(found, (std::vector<unsigned>{0, 1, 3}));
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(by_index(gpu, 7, &mig), kInvalidArgument);

  unsigned value = 0;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceIsMigDeviceHandle")(migs[2], &value), kSuccess);
  EXPECT_EQ(value, 1u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceIsMigDeviceHandle")(gpu, &value), kSuccess);
  EXPECT_EQ(value, 0u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetGpuInstanceId")(migs[2], &value), kSuccess);
  EXPECT_EQ(value, 9u);
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, unsigned*)>("nvmlDeviceGetComputeInstanceId")(migs[2], &value),
            kSuccess);
  EXPECT_EQ(value, 0u);
  nvmlDevice_t parent = nullptr;
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, nvmlDevice_t*)>("nvmlDeviceGetDeviceHandleFromMigDeviceHandle")(
                migs[1], &parent),
            kSuccess);
  EXPECT_EQ(parent, gpu);
  char text[96];
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetUUID")(migs[0], text, 96), kSuccess);
  EXPECT_STREQ(text, "MIG-1a9c4e27-5b3d-5f08-8c61-2e7b9d0a4f35");
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetName")(migs[0], text, 96), kSuccess);
  EXPECT_STREQ(text, "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  Memory memory{};
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, Memory*)>("nvmlDeviceGetMemoryInfo")(migs[1], &memory), kSuccess);
  EXPECT_EQ(memory.total, 9728ULL << 20);

  auto compute =
      lib_.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v3");
  ProcessInfo infos[4] = {};
  unsigned count = 4;
  ASSERT_EQ(compute(migs[1], &count, infos), kSuccess);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(infos[0].pid, 7002u);
  EXPECT_EQ(infos[0].gpuInstanceId, 3u);
  EXPECT_EQ(infos[0].computeInstanceId, 0u);
  count = 4;
  ASSERT_EQ(compute(gpu, &count, infos), kSuccess);  // the parent aggregates its instances
  EXPECT_EQ(count, 2u);

  // Utilisation-type queries are NOT_SUPPORTED on the MIG-enabled parent and on MIG handles.
  Utilization util{};
  auto rates = lib_.Get<int(nvmlDevice_t, Utilization*)>("nvmlDeviceGetUtilizationRates");
  EXPECT_EQ(rates(gpu, &util), kNotSupported);
  EXPECT_EQ(rates(migs[0], &util), kNotSupported);
  unsigned period = 0;
  auto encoder = lib_.Get<int(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetEncoderUtilization");
  EXPECT_EQ(encoder(gpu, &value, &period), kNotSupported);
  EXPECT_EQ(encoder(migs[0], &value, &period), kNotSupported);
  auto proc_util = lib_.Get<int(nvmlDevice_t, ProcessUtilizationSample*, unsigned*, unsigned long long)>(
      "nvmlDeviceGetProcessUtilization");
  EXPECT_EQ(proc_util(gpu, nullptr, &count, 0), kNotSupported);
  EXPECT_EQ(proc_util(migs[0], nullptr, &count, 0), kNotSupported);
  // Device-level readings still work on the parent.
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, int, unsigned*)>("nvmlDeviceGetTemperature")(gpu, 0, &value),
            kSuccess);
  EXPECT_EQ(value, 47u);

  auto mig_calls = lib_.Get<unsigned long long(const char*, unsigned, unsigned)>("fake_nvml_mig_call_count");
  EXPECT_EQ(mig_calls("nvmlDeviceGetUtilizationRates", 0, 0), 1u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetUtilizationRates", 0), 1u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetMigDeviceHandleByIndex", 0), 8u);
}

TEST_F(FakeNvmlTest, GpmNeedsSamples100MsApart) {
  UseScenarioFile("h100x2.json");
  ASSERT_EQ(lib_.Init(), kSuccess);
  nvmlDevice_t d = lib_.Handle(0);
  GpmSupport support{1, 0};
  ASSERT_EQ(lib_.Get<int(nvmlDevice_t, GpmSupport*)>("nvmlGpmQueryDeviceSupport")(d, &support), kSuccess);
  EXPECT_EQ(support.isSupportedDevice, 1u);
  support.version = 2;
  EXPECT_EQ(lib_.Get<int(nvmlDevice_t, GpmSupport*)>("nvmlGpmQueryDeviceSupport")(d, &support),
            kArgumentVersionMismatch);

  auto alloc = lib_.Get<int(nvmlGpmSample_t*)>("nvmlGpmSampleAlloc");
  auto free_sample = lib_.Get<int(nvmlGpmSample_t)>("nvmlGpmSampleFree");
  auto sample_get = lib_.Get<int(nvmlDevice_t, nvmlGpmSample_t)>("nvmlGpmSampleGet");
  auto metrics_get = lib_.Get<int(GpmMetricsGet*)>("nvmlGpmMetricsGet");
  nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(alloc(&s1), kSuccess);
  ASSERT_EQ(alloc(&s2), kSuccess);
  ASSERT_EQ(sample_get(d, s1), kSuccess);
  ASSERT_EQ(sample_get(d, s2), kSuccess);
  GpmMetricsGet get{};
  get.version = 1;
  get.numMetrics = 3;
  get.sample1 = s1;
  get.sample2 = s2;
  get.metrics[0].metricId = 2;   // SM_UTIL
  get.metrics[1].metricId = 20;  // PCIE_TX_PER_SEC
  get.metrics[2].metricId = 4;   // INTEGER_UTIL: not in the scenario
  get.metrics[3].metricId = 77;  // beyond numMetrics: untouched
  get.metrics[3].nvmlReturn = 42;
  EXPECT_NE(metrics_get(&get), kSuccess);  // too close together
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  ASSERT_EQ(sample_get(d, s2), kSuccess);
  get.version = 2;
  EXPECT_EQ(metrics_get(&get), kArgumentVersionMismatch);
  get.version = 1;
  ASSERT_EQ(metrics_get(&get), kSuccess);
  EXPECT_EQ(get.metrics[0].nvmlReturn, kSuccess);
  EXPECT_DOUBLE_EQ(get.metrics[0].value, 93.2);
  EXPECT_EQ(get.metrics[1].nvmlReturn, kSuccess);
  EXPECT_DOUBLE_EQ(get.metrics[1].value, 1520.5);
  EXPECT_EQ(get.metrics[2].nvmlReturn, kNotSupported);
  EXPECT_EQ(get.metrics[3].nvmlReturn, 42);
  ASSERT_EQ(metrics_get(&get), kSuccess);
  EXPECT_DOUBLE_EQ(get.metrics[0].value, 95.8);  // series advance per call
  EXPECT_EQ(free_sample(s1), kSuccess);
  EXPECT_EQ(free_sample(s2), kSuccess);
  EXPECT_EQ(free_sample(s2), kInvalidArgument);
}

TEST_F(FakeNvmlTest, GpmPerMigInstance) {
  UseScenario(R"({"devices": [{"gpm": {"supported": true},
    "mig": {"current": 1,
            "instances": [{"slot": 0, "gpu_instance_id": 1, "gpm": {"metrics": {"1": 12.5}}}]}}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  nvmlDevice_t gpu = lib_.Handle(0);
  auto alloc = lib_.Get<int(nvmlGpmSample_t*)>("nvmlGpmSampleAlloc");
  auto mig_sample = lib_.Get<int(nvmlDevice_t, unsigned, nvmlGpmSample_t)>("nvmlGpmMigSampleGet");
  nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(alloc(&s1), kSuccess);
  ASSERT_EQ(alloc(&s2), kSuccess);
  EXPECT_EQ(mig_sample(gpu, 5, s1), kInvalidArgument);  // no such GPU instance
  ASSERT_EQ(mig_sample(gpu, 1, s1), kSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  ASSERT_EQ(mig_sample(gpu, 1, s2), kSuccess);
  GpmMetricsGet get{};
  get.version = 1;
  get.numMetrics = 1;
  get.sample1 = s1;
  get.sample2 = s2;
  get.metrics[0].metricId = 1;
  ASSERT_EQ(lib_.Get<int(GpmMetricsGet*)>("nvmlGpmMetricsGet")(&get), kSuccess);
  EXPECT_DOUBLE_EQ(get.metrics[0].value, 12.5);
  lib_.Get<int(nvmlGpmSample_t)>("nvmlGpmSampleFree")(s1);
  lib_.Get<int(nvmlGpmSample_t)>("nvmlGpmSampleFree")(s2);
}

TEST_F(FakeNvmlTest, StateSurvivesShutdownAndReinitOfTheSameScenario) {
  UseScenario(R"({"devices": [{"energy_mj": [1, 2, 3]}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  auto energy = lib_.Get<int(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetTotalEnergyConsumption");
  nvmlDevice_t d = lib_.Handle(0);
  unsigned long long mj = 0;
  ASSERT_EQ(energy(d, &mj), kSuccess);
  ASSERT_EQ(lib_.Shutdown(), kSuccess);
  EXPECT_EQ(energy(d, &mj), kUninitialized);
  ASSERT_EQ(lib_.Init(), kSuccess);
  ASSERT_EQ(energy(lib_.Handle(0), &mj), kSuccess);
  EXPECT_EQ(mj, 2u);
  EXPECT_EQ(lib_.Calls("nvmlDeviceGetTotalEnergyConsumption", 0),
            2u);  // the uninitialised call does not count
  // Another scenario starts afresh, and the old handle is rejected.
  ASSERT_EQ(lib_.Shutdown(), kSuccess);
  UseScenario(R"({"devices": [{"energy_mj": 50}]})");
  ASSERT_EQ(lib_.Init(), kSuccess);
  EXPECT_EQ(energy(d, &mj), kInvalidArgument);
  ASSERT_EQ(energy(lib_.Handle(0), &mj), kSuccess);
  EXPECT_EQ(mj, 50u);
}

TEST_F(FakeNvmlTest, BadScenarioFailsInitWithUnknown) {
  UseScenario(R"({"devices": 3})");
  EXPECT_EQ(lib_.Init(), 999);
}

TEST(FakeNvmlLegacyTest, LacksTheNewerSymbols) {
  Library legacy(FAKE_NVML_LEGACY_PATH);
  for (const char* name :
       {"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetCurrentClocksEventReasons", "nvmlGpmQueryDeviceSupport",
        "nvmlGpmSampleAlloc", "nvmlGpmSampleFree", "nvmlGpmSampleGet", "nvmlGpmMigSampleGet",
        "nvmlGpmMetricsGet", "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetTotalEnergyConsumption",
        "nvmlDeviceGetFanSpeed_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3"}) {
    EXPECT_FALSE(legacy.Has(name)) << name;
  }
  for (const char* name :
       {"nvmlInit_v2", "nvmlInit", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetCount",
        "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetCurrentClocksThrottleReasons",
        "nvmlDeviceGetFanSpeed", "nvmlDeviceGetComputeRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetPciInfo_v3", "fake_nvml_call_count"}) {
    EXPECT_TRUE(legacy.Has(name)) << name;
  }
  // Only NVML's names (and the test hooks) are exported.
  EXPECT_FALSE(legacy.Has("_ZN9fake_nvml1GEv"));

  // The plain calls work.
  UseScenarioFile("h100x2.json");
  ASSERT_EQ(legacy.Init(), kSuccess);
  unsigned count = 0;
  ASSERT_EQ(legacy.Get<int(unsigned*)>("nvmlDeviceGetCount")(&count), kSuccess);
  EXPECT_EQ(count, 2u);
  nvmlDevice_t d = legacy.Handle(0, "nvmlDeviceGetHandleByIndex");
  unsigned long long reasons = 9;
  ASSERT_EQ(legacy.Get<int(nvmlDevice_t, unsigned long long*)>("nvmlDeviceGetCurrentClocksThrottleReasons")(
                d, &reasons),
            kSuccess);
  EXPECT_EQ(reasons, 0u);
  ProcessInfo infos[4] = {};
  count = 4;
  ASSERT_EQ(legacy.Get<int(nvmlDevice_t, unsigned*, ProcessInfo*)>("nvmlDeviceGetComputeRunningProcesses_v2")(
                d, &count, infos),
            kSuccess);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(legacy.Calls("nvmlDeviceGetComputeRunningProcesses_v2", 0), 1u);
  EXPECT_EQ(legacy.Shutdown(), kSuccess);
}

TEST(FakeNvmlLegacyTest, VariantsInOneProcessKeepSeparateState) {
  Library full(FAKE_NVML_FULL_PATH);
  Library legacy(FAKE_NVML_LEGACY_PATH);
  UseScenarioFile("h100x2.json");
  ASSERT_EQ(full.Init(), kSuccess);
  unsigned count = 0;
  EXPECT_EQ(legacy.Get<int(unsigned*)>("nvmlDeviceGetCount")(&count), kUninitialized);
  EXPECT_EQ(full.Get<int(unsigned*)>("nvmlDeviceGetCount")(&count), kSuccess);
  EXPECT_EQ(full.Shutdown(), kSuccess);
}

}  // namespace
