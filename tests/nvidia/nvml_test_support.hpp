// Helpers for tests that drive the NVIDIA collector against the fake libnvidia-ml.so.1 (tests/fakes/nvml):
// the fake's test hooks (looked up with dlopen on the same path the collector loads, so both share one copy
// and one scenario state), a temporary directory that holds the scenario files a test writes, and a
// generous default device (every family the collector reads, constant values).
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::test {

using Json = nlohmann::json;

inline std::string FakeFullPath() {
  return RUNMON_FAKE_NVML_FULL_PATH;
}
inline std::string FakeLegacyPath() {
  return RUNMON_FAKE_NVML_LEGACY_PATH;
}
inline std::filesystem::path FakeScenariosDir() {
  return RUNMON_FAKE_NVML_SCENARIOS_DIR;
}

// The fake's extern "C" test entry points, from the copy the collector loads (never unloaded: the collector
// does not dlclose NVML either).
class FakeHooks {
 public:
  explicit FakeHooks(const std::string& path) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("cannot load the fake NVML " + path);
    call_count_ = reinterpret_cast<CallCount>(::dlsym(handle_, "fake_nvml_call_count"));
    mig_call_count_ = reinterpret_cast<MigCallCount>(::dlsym(handle_, "fake_nvml_mig_call_count"));
    reset_ = reinterpret_cast<Reset>(::dlsym(handle_, "fake_nvml_reset"));
    if (call_count_ == nullptr || mig_call_count_ == nullptr || reset_ == nullptr) {
      throw std::runtime_error("the fake NVML lacks its test hooks: " + path);
    }
  }
  static FakeHooks& Full() {
    static FakeHooks* hooks = new FakeHooks(FakeFullPath());
    return *hooks;
  }
  static FakeHooks& Legacy() {
    static FakeHooks* hooks = new FakeHooks(FakeLegacyPath());
    return *hooks;
  }

  // Calls of `function` made with device `device`'s own handle (kSystem: calls without a device).
  unsigned long long Calls(const char* function, unsigned device) const {
    return call_count_(function, device);
  }
  unsigned long long MigCalls(const char* function, unsigned device, unsigned slot) const {
    return mig_call_count_(function, device, slot);
  }
  // Forgets the scenario; the next nvmlInit reads the file again.
  void ResetState() const { reset_(); }

  static constexpr unsigned kSystem = 0xFFFFFFFFu;

 private:
  using CallCount = unsigned long long (*)(const char*, unsigned);
  using MigCallCount = unsigned long long (*)(const char*, unsigned, unsigned);
  using Reset = void (*)();
  void* handle_ = nullptr;
  CallCount call_count_ = nullptr;
  MigCallCount mig_call_count_ = nullptr;
  Reset reset_ = nullptr;
};

// A temporary directory for scenario files, removed at the end.
class ScenarioDir {
 public:
  ScenarioDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "runmon-nvml-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  ScenarioDir(const ScenarioDir&) = delete;
  ScenarioDir& operator=(const ScenarioDir&) = delete;
  ~ScenarioDir() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  const std::filesystem::path& root() const { return root_; }

  // Writes `scenario` as `name` and returns its path.
  std::string Write(const Json& scenario, const std::string& name = "scenario.json") const {
    return WriteText(scenario.dump(2), name);
  }
  std::string WriteText(const std::string& text, const std::string& name) const {
    const auto path = root_ / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
    return path.string();
  }

 private:
  std::filesystem::path root_;
};

// Values of the default device, so tests can compute what the collector should report.
inline constexpr unsigned long long kMemoryTotal = 85520809984ull;
inline constexpr unsigned long long kMemoryReserved = 567279616ull;
inline constexpr unsigned long long kMemoryUsed = 42949672960ull;
inline constexpr unsigned kPowerMilliwatts = 612345;
inline constexpr unsigned kPowerLimitMilliwatts = 700000;
inline constexpr unsigned long long kEnergyFirstMj = 183245120ull;
inline constexpr unsigned long long kEnergySecondMj = 183857465ull;

inline std::string DeviceUuid(unsigned index) {
  return fmt::format("GPU-{:08x}-91c4-4d1e-b7f3-{:012x}", 0x5b6f2a00u + index, 0x0c2a9e4d7f00ull + index);
}

// An H100 with every family the collector reads (fan and GPM included); constant values except energy and
// clock event reasons, which are series (first sample, then the second one, repeated).
inline Json DefaultDevice(unsigned index) {
  return Json{
      {"name", "NVIDIA H100 80GB HBM3"},
      {"uuid", DeviceUuid(index)},
      {"pci",
       {{"bus_id", fmt::format("00000000:{:02X}:00.0", 0x10 + index)},
        {"device_id", "0x233010DE"},
        {"subsystem_id", "0x16C110DE"}}},
      {"architecture", "HOPPER"},
      {"cuda_cores", 16896},
      {"memory", {{"total", kMemoryTotal}, {"reserved", kMemoryReserved}, {"used", kMemoryUsed}}},
      {"utilization", {{"gpu", 97}, {"memory", 61}}},
      {"temperature", 54},
      {"power_mw", kPowerMilliwatts},
      {"power_limit_mw", kPowerLimitMilliwatts},
      {"energy_mj", Json::array({kEnergyFirstMj, kEnergySecondMj})},
      {"clocks", {{"graphics", 1980}, {"sm", 1755}, {"mem", 2619}, {"video", 1545}}},
      {"ecc",
       {{"volatile_corrected", 2},
        {"volatile_uncorrected", 1},
        {"aggregate_corrected", 30},
        {"aggregate_uncorrected", 10}}},
      {"encoder", {{"utilization", 7}}},
      {"fan_speed", 45},
      {"clocks_event_reasons", Json::array({0, 4})},
      {"gpm",
       {{"supported", true},
        {"metrics",
         {{"1", 97.5},
          {"2", 93.25},
          {"3", 61.0},
          {"5", 71.5},
          {"7", 70.75},
          {"10", 58.5},
          {"11", 1.5},
          {"12", 12.5},
          {"13", 2.25},
          {"20", 1520.5},
          {"21", 880.25},
          {"60", 24576.0},
          {"61", 24310.0}}}}},
      {"mig", {{"current", 0}, {"pending", 0}}},
  };
}

// A scenario of `count` default devices.
inline Json DefaultScenario(unsigned count) {
  Json devices = Json::array();
  for (unsigned i = 0; i < count; ++i) devices.push_back(DefaultDevice(i));
  return Json{{"driver_version", "550.90.07"}, {"cuda_driver_version", 12040}, {"devices", devices}};
}

}  // namespace runmon::test
