// The NVIDIA collector against the fake libnvidia-ml.so.1 (tests/fakes/nvml), loaded through the real
// dlopen path: every gpu.{i}.* key of the catalog with its unit conversion, memory v2 and v1 (the legacy
// variant lacks v2 and the newer families), NOT_SUPPORTED and friends switching a family off (proved with
// the fake's call counts), transient errors retried, a GPU lost mid-run, MIG, the run's share
// (gpu.process.{i}.*) on a fixture /proc tree, the published metadata and CUDA ordinals, device selection,
// 0 and 64 devices, nvmlInit failures, a library that is absent or not a library, ProbeNvidiaMetadata.
// The sampler-level checks (a hanging NVML call, a lost GPU shown as degraded) are in nvidia_sampler_test.
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/nvidia/nvidia_collector.hpp"
#include "core/catalog.hpp"
#include "fixture_tree.hpp"
#include "nvml_test_support.hpp"

namespace runmon {
namespace {

using namespace std::chrono_literals;
using test::Collected;
using test::CollectTick;
using test::DefaultDevice;
using test::DefaultScenario;
using test::FakeHooks;
using test::Json;

constexpr double kMiB = 1048576.0;

class NvidiaCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeHooks::Full().ResetState();
    FakeHooks::Legacy().ResetState();
  }
  void TearDown() override { ::unsetenv("RUNMON_FAKE_NVML_SCENARIO"); }

  // Writes the scenario and points the fake at it.
  void UseScenario(const Json& scenario) { UseScenarioFile(dir_.Write(scenario)); }
  static void UseScenarioFile(const std::string& path) {
    ::setenv("RUNMON_FAKE_NVML_SCENARIO", path.c_str(), 1);
  }

  // Options on the full fake, publishing metadata into `published_`.
  NvidiaOptions Options(const std::string& library = test::FakeFullPath()) {
    NvidiaOptions options;
    options.library_path = library;
    options.publish_metadata = [this](const Json& metadata) { published_.push_back(metadata); };
    return options;
  }
  std::unique_ptr<Collector> Make(NvidiaOptions options) {
    std::string why_not;
    auto collector = MakeNvidiaCollector(std::move(options), &why_not);
    EXPECT_NE(collector, nullptr) << why_not;
    return collector;
  }
  static std::set<std::string> Keys(const Collected& c, std::string_view prefix) {
    std::set<std::string> keys;
    for (const auto& key : c.Keys()) {
      if (key.starts_with(prefix)) keys.insert(key);
    }
    return keys;
  }

  test::ScenarioDir dir_;
  std::vector<Json> published_;
};

// ---- every key, units ---------------------------------------------------------------------------

TEST_F(NvidiaCollectorTest, EveryCatalogKeyWithItsUnit) {
  UseScenario(DefaultScenario(1));
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  EXPECT_EQ(collector->Name(), "nvidia");

  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_EQ(t0["gpu.0.gpu"], 97);
  EXPECT_EQ(t0["gpu.0.memory"], 61);
  // Memory v2: used without the driver's reservation.
  EXPECT_EQ(t0["gpu.0.memoryAllocatedBytes"], static_cast<double>(test::kMemoryUsed));
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryAllocated"],
                   100.0 * static_cast<double>(test::kMemoryUsed) / static_cast<double>(test::kMemoryTotal));
  EXPECT_EQ(t0["gpu.0.temp"], 54);
  // mW -> W.
  EXPECT_DOUBLE_EQ(t0["gpu.0.powerWatts"], 612.345);
  EXPECT_DOUBLE_EQ(t0["gpu.0.enforcedPowerLimitWatts"], 700.0);
  EXPECT_DOUBLE_EQ(t0["gpu.0.powerPercent"], 100.0 * 612.345 / 700.0);
  EXPECT_EQ(t0["gpu.0.smClock"], 1755);
  EXPECT_EQ(t0["gpu.0.memoryClock"], 2619);
  EXPECT_EQ(t0["gpu.0.graphicsClock"], 1980);
  // Volatile device-memory counters, not the aggregate ones.
  EXPECT_EQ(t0["gpu.0.correctedMemoryErrors"], 2);
  EXPECT_EQ(t0["gpu.0.unCorrectedMemoryErrors"], 1);
  EXPECT_EQ(t0["gpu.0.encoderUtilization"], 7);
  EXPECT_EQ(t0["gpu.0.fanSpeed"], 45);
  EXPECT_EQ(t0["gpu.0.clocksEventReasons"], 0);
  EXPECT_EQ(t0["gpu.0.energyJoules"], 0);  // counted from the first sample
  // GPM needs two samples more than 100 ms apart: nothing at the first tick.
  EXPECT_FALSE(t0.Has("gpu.0.smActive"));
  EXPECT_FALSE(t0.Has("gpu.0.pcieTxBytes"));
  // No monitored process: no gpu.process.* keys.
  EXPECT_TRUE(Keys(t0, "gpu.process.").empty());
  // The v1 memory call is not needed when v2 answers.
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetMemoryInfo", 0), 0u);

  std::this_thread::sleep_for(150ms);
  const Collected t1 = CollectTick(*collector, 1);
  ASSERT_TRUE(t1.status.ok()) << t1.status.error();
  EXPECT_DOUBLE_EQ(t1["gpu.0.energyJoules"],
                   static_cast<double>(test::kEnergySecondMj - test::kEnergyFirstMj) / 1000.0);
  EXPECT_EQ(t1["gpu.0.clocksEventReasons"], 4);  // software power cap
  EXPECT_DOUBLE_EQ(t1["gpu.0.smActive"], 93.25);
  EXPECT_DOUBLE_EQ(t1["gpu.0.smOccupancy"], 61.0);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pipeTensorActive"], 71.5);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pipeTensorHmmaActive"], 70.75);
  EXPECT_DOUBLE_EQ(t1["gpu.0.dramActive"], 58.5);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pipeFp64Active"], 1.5);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pipeFp32Active"], 12.5);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pipeFp16Active"], 2.25);
  // MiB/s -> bytes/s; NVLink RX is metric 60, TX 61.
  EXPECT_DOUBLE_EQ(t1["gpu.0.pcieTxBytes"], 1520.5 * kMiB);
  EXPECT_DOUBLE_EQ(t1["gpu.0.pcieRxBytes"], 880.25 * kMiB);
  EXPECT_DOUBLE_EQ(t1["gpu.0.nvlinkRxBytes"], 24576.0 * kMiB);
  EXPECT_DOUBLE_EQ(t1["gpu.0.nvlinkTxBytes"], 24310.0 * kMiB);

  // Every gpu.{i}.* pattern of the catalog that NVIDIA GPUs have (NVIDIA's own and the keys every GPU family
  // shares) is produced, and every key produced is in the catalog, as one of those.
  const auto nvidia_or_shared = [](std::string_view source) { return source == "nvidia" || source == "gpu"; };
  std::set<std::string> produced;
  for (const auto* c : {&t0, &t1}) {
    for (const auto& key : c->Keys()) produced.insert(key);
  }
  size_t patterns = 0;
  for (const auto& definition : MetricCatalog()) {
    if (!definition.pattern.starts_with("gpu.{i}.") || !nvidia_or_shared(definition.source)) continue;
    ++patterns;
    const std::string key = "gpu.0." + std::string(definition.pattern.substr(8));
    EXPECT_TRUE(produced.count(key)) << "not produced: " << key;
  }
  EXPECT_EQ(patterns, 29u);
  for (const auto& key : produced) {
    const MetricDefinition* definition = FindMetricDefinition(key);
    ASSERT_NE(definition, nullptr) << key;
    EXPECT_TRUE(nvidia_or_shared(definition->source)) << key << ": " << definition->source;
  }
}

TEST_F(NvidiaCollectorTest, GpmComparesSamplesMoreThan100MsApart) {
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["gpm"]["metrics"]["2"] = Json::array({10.0, 20.0, 30.0});
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  EXPECT_FALSE(CollectTick(*collector, 0).Has("gpu.0.smActive"));
  // Right after the first: too close to compare, no value and no NVML metrics call.
  EXPECT_FALSE(CollectTick(*collector, 1).Has("gpu.0.smActive"));
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlGpmMetricsGet", 0), 0u);
  std::this_thread::sleep_for(120ms);
  const Collected t2 = CollectTick(*collector, 2);
  EXPECT_EQ(t2["gpu.0.smActive"], 10.0);
  std::this_thread::sleep_for(120ms);
  EXPECT_EQ(CollectTick(*collector, 3)["gpu.0.smActive"], 20.0);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlGpmMetricsGet", 0), 2u);
}

TEST_F(NvidiaCollectorTest, GpmUnsupportedDeviceIsNeverSampled) {
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["gpm"] = {{"supported", false}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 2; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    EXPECT_FALSE(c.Has("gpu.0.smActive"));
    EXPECT_TRUE(c.Has("gpu.0.temp"));
    std::this_thread::sleep_for(110ms);
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlGpmSampleGet", 0), 0u);
}

// The legacy driver: no _v2 memory (v1's used includes the reservation), no energy, no GPM; fan and clock
// reasons through the older entry points. Nothing crashes, the rest is there.
TEST_F(NvidiaCollectorTest, LegacyDriverMissingSymbols) {
  UseScenario(DefaultScenario(1));
  auto collector = Make(Options(test::FakeLegacyPath()));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  const double used_v1 = static_cast<double>(test::kMemoryUsed + test::kMemoryReserved);
  EXPECT_EQ(t0["gpu.0.memoryAllocatedBytes"], used_v1);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryAllocated"], 100.0 * used_v1 / static_cast<double>(test::kMemoryTotal));
  EXPECT_EQ(t0["gpu.0.fanSpeed"], 45);
  EXPECT_EQ(t0["gpu.0.clocksEventReasons"], 0);
  for (const char* key : {"gpu.0.gpu", "gpu.0.temp", "gpu.0.powerWatts", "gpu.0.smClock",
                          "gpu.0.correctedMemoryErrors", "gpu.0.encoderUtilization"}) {
    EXPECT_TRUE(t0.Has(key)) << key;
  }
  std::this_thread::sleep_for(120ms);
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_EQ(t1["gpu.0.clocksEventReasons"], 4);
  for (const auto* c : {&t0, &t1}) {
    for (const char* key :
         {"gpu.0.energyJoules", "gpu.0.smActive", "gpu.0.pcieTxBytes", "gpu.0.nvlinkRxBytes"}) {
      EXPECT_FALSE(c->Has(key)) << key;
    }
  }
  EXPECT_EQ(FakeHooks::Legacy().Calls("nvmlDeviceGetMemoryInfo", 0), 3u);  // the walk, then each tick
  EXPECT_EQ(FakeHooks::Legacy().Calls("nvmlDeviceGetCurrentClocksThrottleReasons", 0), 2u);
  EXPECT_EQ(FakeHooks::Legacy().Calls("nvmlDeviceGetFanSpeed", 0), 2u);
  EXPECT_EQ(FakeHooks::Legacy().Calls("nvmlDeviceGetCount", FakeHooks::kSystem), 1u);
  EXPECT_EQ(FakeHooks::Legacy().Calls("nvmlDeviceGetHandleByIndex", 0), 1u);
}

// ---- how answers steer the next tick -----------------------------------------------------------------

TEST_F(NvidiaCollectorTest, NotSupportedAndFriendsSwitchAFamilyOffForGood) {
  Json scenario = DefaultScenario(2);
  Json& d0 = scenario["devices"][0];
  d0.erase("fan_speed");  // a passively cooled board: NOT_SUPPORTED
  d0["fail"] = {{"nvmlDeviceGetTemperature", {{"code", "NOT_SUPPORTED"}}},
                {"nvmlDeviceGetEncoderUtilization", {{"code", "NO_PERMISSION"}}},
                {"nvmlDeviceGetMemoryErrorCounter", {{"code", "FUNCTION_NOT_FOUND"}}},
                {"nvmlDeviceGetTotalEnergyConsumption", {{"code", "DEPRECATED"}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 4; ++tick) {
    SCOPED_TRACE(tick);
    const Collected c = CollectTick(*collector, tick);
    EXPECT_TRUE(c.status.ok()) << c.status.error();
    for (const char* key :
         {"gpu.0.temp", "gpu.0.fanSpeed", "gpu.0.encoderUtilization", "gpu.0.correctedMemoryErrors",
          "gpu.0.unCorrectedMemoryErrors", "gpu.0.energyJoules"}) {
      EXPECT_FALSE(c.Has(key)) << key;
    }
    for (const char* key :
         {"gpu.0.gpu", "gpu.0.powerWatts", "gpu.0.smClock", "gpu.1.temp", "gpu.1.fanSpeed",
          "gpu.1.encoderUtilization", "gpu.1.correctedMemoryErrors", "gpu.1.energyJoules"}) {
      EXPECT_TRUE(c.Has(key)) << key;
    }
  }
  const FakeHooks& fake = FakeHooks::Full();
  // Asked once, never again; the other device is asked every tick.
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTemperature", 0), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetFanSpeed_v2", 0), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetEncoderUtilization", 0), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTotalEnergyConsumption", 0), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMemoryErrorCounter", 0), 2u);  // corrected and uncorrected, once each
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTemperature", 1), 4u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetFanSpeed_v2", 1), 4u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMemoryErrorCounter", 1), 8u);
}

TEST_F(NvidiaCollectorTest, TransientErrorsAreRetriedNextTick) {
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["fail"] = {
      {"nvmlDeviceGetPowerUsage", {{"code", "TIMEOUT"}, {"times", 1}}},
      {"nvmlDeviceGetTemperature", {{"code", "UNKNOWN"}, {"times", 2}}},
      {"nvmlDeviceGetUtilizationRates", {{"code", 999}, {"after_calls", 1}, {"times", 1}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_TRUE(t0.status.ok()) << t0.status.error();  // nothing this tick, but no error for the collector
  EXPECT_FALSE(t0.Has("gpu.0.powerWatts"));
  EXPECT_FALSE(t0.Has("gpu.0.powerPercent"));
  EXPECT_TRUE(t0.Has("gpu.0.enforcedPowerLimitWatts"));
  EXPECT_FALSE(t0.Has("gpu.0.temp"));
  EXPECT_TRUE(t0.Has("gpu.0.gpu"));
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(t1["gpu.0.powerWatts"], 612.345);
  EXPECT_FALSE(t1.Has("gpu.0.temp"));
  EXPECT_FALSE(t1.Has("gpu.0.gpu"));
  const Collected t2 = CollectTick(*collector, 2);
  EXPECT_EQ(t2["gpu.0.temp"], 54);
  EXPECT_EQ(t2["gpu.0.gpu"], 97);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetPowerUsage", 0), 3u);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetTemperature", 0), 3u);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetUtilizationRates", 0), 3u);
}

// A memory v2 call that fails with anything but "unsupported" is retried; one that says unsupported falls
// back to v1 for good.
TEST_F(NvidiaCollectorTest, MemoryV2UnsupportedFallsBackToV1) {
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["fail"] = {{"nvmlDeviceGetMemoryInfo_v2", {{"code", "NOT_SUPPORTED"}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 3; ++tick) {
    EXPECT_EQ(CollectTick(*collector, tick)["gpu.0.memoryAllocatedBytes"],
              static_cast<double>(test::kMemoryUsed + test::kMemoryReserved));
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetMemoryInfo_v2", 0), 1u);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetMemoryInfo", 0), 4u);
}

// ---- a GPU lost mid-run ------------------------------------------------------------------------------

struct LostCase {
  const char* code;
  const char* text;  // nvmlErrorString
};

class GpuLostTest : public NvidiaCollectorTest, public ::testing::WithParamInterface<LostCase> {};

TEST_P(GpuLostTest, ThatDeviceStopsAndTheOtherCarriesOn) {
  Json scenario = DefaultScenario(2);
  scenario["devices"][1]["fail"] = {
      {"nvmlDeviceGetPowerUsage", {{"code", GetParam().code}, {"after_calls", 2}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 2; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    EXPECT_TRUE(c.status.ok()) << c.status.error();
    EXPECT_TRUE(c.Has("gpu.1.powerWatts"));
  }
  const FakeHooks& fake = FakeHooks::Full();
  std::string first_message;
  for (uint64_t tick = 2; tick < 5; ++tick) {
    SCOPED_TRACE(tick);
    const Collected c = CollectTick(*collector, tick);
    ASSERT_FALSE(c.status.ok());
    const std::string& message = c.status.error();
    EXPECT_NE(message.find("GPU 1"), std::string::npos) << message;
    EXPECT_NE(message.find(test::DeviceUuid(1)), std::string::npos) << message;
    EXPECT_NE(message.find(GetParam().text), std::string::npos) << message;
    if (tick == 2) first_message = message;
    EXPECT_EQ(message, first_message);  // the same message every tick, not one more per tick
    // The other device's values are still there.
    EXPECT_EQ(c["gpu.0.temp"], 54);
    EXPECT_DOUBLE_EQ(c["gpu.0.powerWatts"], 612.345);
    if (tick > 2) {
      EXPECT_TRUE(Keys(c, "gpu.1.").empty());
    }
  }
  // Device 1 is not asked again after the call that found it gone; device 0 is asked every tick.
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPowerUsage", 1), 3u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTemperature", 1), 3u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetUtilizationRates", 1), 3u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetClockInfo", 1), 6u);  // ticks 0 and 1: SM, memory, graphics
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPowerUsage", 0), 5u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetClockInfo", 0), 15u);
}

INSTANTIATE_TEST_SUITE_P(Codes, GpuLostTest,
                         ::testing::Values(LostCase{"GPU_IS_LOST", "GPU is lost"},
                                           LostCase{"RESET_REQUIRED", "GPU requires restart"},
                                           LostCase{"GPU_NOT_FOUND", "GPU not found"}),
                         [](const ::testing::TestParamInfo<LostCase>& c) {
                           return std::string(c.param.code);
                         });

// A GPU already gone when the lane walks the devices (its first memory query says GPU_IS_LOST) is reported
// like one lost later: the collector says which GPU, it is not asked again, the others carry on.
TEST_F(NvidiaCollectorTest, GpuLostDuringTheDeviceWalkIsReported) {
  Json scenario = DefaultScenario(2);
  scenario["devices"][1]["fail"] = {{"nvmlDeviceGetMemoryInfo_v2", {{"code", "GPU_IS_LOST"}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 2; ++tick) {
    SCOPED_TRACE(tick);
    const Collected c = CollectTick(*collector, tick);
    EXPECT_TRUE(c.Has("gpu.0.temp"));
    EXPECT_TRUE(Keys(c, "gpu.1.").empty());
    ASSERT_FALSE(c.status.ok()) << "GPU 1 was lost during the walk, and nothing says so";
    EXPECT_NE(c.status.error().find("GPU 1"), std::string::npos) << c.status.error();
    EXPECT_NE(c.status.error().find("GPU is lost"), std::string::npos) << c.status.error();
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetTemperature", 1), 0u);
}

// ---- MIG -------------------------------------------------------------------------------------------

Json MigInstance(unsigned slot, const std::string& uuid, unsigned gi, unsigned long long total,
                 unsigned long long used) {
  return Json{{"slot", slot},
              {"name", "NVIDIA A100-SXM4-40GB MIG"},
              {"uuid", uuid},
              {"gpu_instance_id", gi},
              {"compute_instance_id", 0},
              {"memory", {{"total", total}, {"used", used}}},
              {"compute_processes", Json::array()},
              {"graphics_processes", Json::array()}};
}

constexpr const char* kMigUuid0 = "MIG-1a9c4e27-5b3d-5f08-8c61-2e7b9d0a4f35";
constexpr const char* kMigUuid1 = "MIG-7e3b0f91-2c6a-5d47-b9e8-4a1d6c2f8e70";
constexpr const char* kMigUuid3 = "MIG-c5d82a16-9f4e-5b13-a7c0-3e6f1b9d2a84";

// One A100 in MIG mode with instances in slots 0, 1 and 3 (slot 2 empty), GPM on (instances have their own).
Json MigScenario() {
  Json gpu = DefaultDevice(0);
  gpu["name"] = "NVIDIA A100-SXM4-40GB";
  gpu["architecture"] = "AMPERE";
  gpu["memory"] = {{"total", 42949672960ull}, {"reserved", 0}, {"used", 13528727552ull}};
  gpu["process_utilization"] = Json::array({{{"pid", 7001}, {"sm", 50}, {"timestamp", "now"}}});
  Json slot0 = MigInstance(0, kMigUuid0, 2, 20937965568ull, 9663676416ull);
  slot0["compute_processes"] = Json::array({{{"pid", 7001}, {"used_memory", 9437184000ull}}});
  slot0["gpm"] = {{"metrics", {{"2", 12.5}}}};
  Json slot1 = MigInstance(1, kMigUuid1, 3, 10200547328ull, 3758096384ull);
  slot1["compute_processes"] = Json::array({{{"pid", 7002}, {"used_memory", 3565158400ull}}});
  gpu["mig"] = {{"current", 1},
                {"pending", 1},
                {"max_devices", 7},
                {"instances", Json::array({slot0, slot1, MigInstance(3, kMigUuid3, 9, 5100273664ull, 0)})}};
  return Json{
      {"driver_version", "535.183.01"}, {"cuda_driver_version", 12020}, {"devices", Json::array({gpu})}};
}

TEST_F(NvidiaCollectorTest, MigParentKeepsDeviceWideValuesAndInstancesFollow) {
  UseScenario(MigScenario());
  test::FixtureTree tree;
  tree.Write("proc/7001/stat", test::PidStatLine(7001, "python", 'S', 1, 0, 0, 1, 100));
  tree.Write("proc/7002/stat", test::PidStatLine(7002, "other", 'S', 1, 0, 0, 1, 100));
  NvidiaOptions options = Options();
  options.pid = 7001;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();

  // The parent: device-wide values under its own key; no utilisation (NVML has none in MIG mode).
  EXPECT_EQ(t0["gpu.0.temp"], 54);
  EXPECT_DOUBLE_EQ(t0["gpu.0.powerWatts"], 612.345);
  EXPECT_EQ(t0["gpu.0.smClock"], 1755);
  EXPECT_EQ(t0["gpu.0.memoryAllocatedBytes"], 13528727552.0);
  EXPECT_FALSE(t0.Has("gpu.0.gpu"));
  EXPECT_FALSE(t0.Has("gpu.0.memory"));
  EXPECT_FALSE(t0.Has("gpu.0.encoderUtilization"));
  // Instances, numbered after the last GPU, the empty slot skipped: memory per instance, nothing else.
  EXPECT_EQ(t0["gpu.1.memoryAllocatedBytes"], 9663676416.0);
  EXPECT_DOUBLE_EQ(t0["gpu.1.memoryAllocated"], 100.0 * 9663676416.0 / 20937965568.0);
  EXPECT_EQ(t0["gpu.2.memoryAllocatedBytes"], 3758096384.0);
  EXPECT_EQ(t0["gpu.3.memoryAllocatedBytes"], 0.0);
  EXPECT_TRUE(Keys(t0, "gpu.4.").empty());
  for (const char* instance : {"gpu.1.", "gpu.2.", "gpu.3."}) {
    EXPECT_EQ(Keys(t0, instance), (std::set<std::string>{std::string(instance) + "memoryAllocated",
                                                         std::string(instance) + "memoryAllocatedBytes"}))
        << instance;
  }
  // The run's share on its instance: its own memory, no SM utilisation (none per process under MIG).
  EXPECT_EQ(t0["gpu.process.1.memoryAllocatedBytes"], 9437184000.0);
  EXPECT_DOUBLE_EQ(t0["gpu.process.1.memoryAllocated"], 100.0 * 9437184000.0 / 20937965568.0);
  EXPECT_FALSE(t0.Has("gpu.process.1.gpu"));
  EXPECT_TRUE(Keys(t0, "gpu.process.2.").empty());  // 7002 is not in the tree
  EXPECT_TRUE(Keys(t0, "gpu.process.3.").empty());

  std::this_thread::sleep_for(120ms);
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_EQ(t1["gpu.1.smActive"], 12.5);  // GPM per MIG handle
  EXPECT_FALSE(t1.Has("gpu.2.smActive"));
  // Families NVML refuses on MIG handles were asked once.
  const FakeHooks& fake = FakeHooks::Full();
  EXPECT_EQ(fake.MigCalls("nvmlDeviceGetTemperature", 0, 0), 1u);
  EXPECT_EQ(fake.MigCalls("nvmlDeviceGetUtilizationRates", 0, 0), 1u);
  EXPECT_EQ(fake.MigCalls("nvmlDeviceGetPowerUsage", 0, 1), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetUtilizationRates", 0), 1u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTemperature", 0), 2u);

  // Metadata: one GPU for W&B, four devices for runmon with the instances' MIG identity.
  ASSERT_EQ(published_.size(), 1u);
  const Json& meta = published_[0];
  EXPECT_EQ(meta["gpu_count"], 1);
  EXPECT_EQ(meta["gpu"], "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(meta["cuda_version"], "12.2");
  ASSERT_EQ(meta["gpu_nvidia"].size(), 1u);
  EXPECT_EQ(meta["gpu_nvidia"][0]["architecture"], "Ampere");
  const Json& devices = meta["runmon"]["nvidia"]["devices"];
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_FALSE(devices[0].contains("mig"));
  const std::vector<std::pair<std::string, unsigned>> expected = {
      {kMigUuid0, 2}, {kMigUuid1, 3}, {kMigUuid3, 9}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const Json& d = devices[i + 1];
    EXPECT_EQ(d["key"], "gpu." + std::to_string(i + 1));
    EXPECT_EQ(d["nvmlIndex"], 0);
    EXPECT_EQ(d["uuid"], expected[i].first);
    EXPECT_EQ(d["mig"]["parentUuid"], test::DeviceUuid(0));
    EXPECT_EQ(d["mig"]["gpuInstance"], expected[i].second);
    EXPECT_EQ(d["mig"]["computeInstance"], 0);
  }
}

// With two GPUs and MIG on the second, the instances come after both GPUs.
TEST_F(NvidiaCollectorTest, MigInstancesAreNumberedAfterTheLastGpu) {
  Json scenario = MigScenario();
  scenario["devices"].insert(scenario["devices"].begin(), DefaultDevice(5));
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_EQ(t0["gpu.0.gpu"], 97);
  EXPECT_TRUE(t0.Has("gpu.1.temp"));
  EXPECT_EQ(t0["gpu.2.memoryAllocatedBytes"], 9663676416.0);
  EXPECT_EQ(t0["gpu.3.memoryAllocatedBytes"], 3758096384.0);
  EXPECT_TRUE(t0.Has("gpu.4.memoryAllocatedBytes"));
  EXPECT_TRUE(Keys(t0, "gpu.5.").empty());
}

// ---- the run's share: gpu.process.{i}.* ----------------------------------------------------------------

TEST_F(NvidiaCollectorTest, ProcessTreeShareIsTheTreesOwn) {
  // The tree: 4000 (root) -> 4001 -> 4002. Unrelated: 5000 -> 5001, and 6000 (no /proc entry).
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  tree.Write("proc/4001/stat", test::PidStatLine(4001, "worker", 'S', 4000, 0, 0, 1, 100));
  tree.Write("proc/4002/stat", test::PidStatLine(4002, "render", 'S', 4001, 0, 0, 1, 100));
  tree.Write("proc/5000/stat", test::PidStatLine(5000, "other", 'S', 1, 0, 0, 1, 100));
  tree.Write("proc/5001/stat", test::PidStatLine(5001, "other-child", 'S', 5000, 0, 0, 1, 100));

  constexpr unsigned long long kGiB = 1ull << 30;
  const auto now_us = static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                          std::chrono::system_clock::now().time_since_epoch())
                                                          .count());
  Json scenario = DefaultScenario(2);
  Json& d0 = scenario["devices"][0];
  d0["compute_processes"] = Json::array({{{"pid", 4000}, {"used_memory", kGiB}},
                                         {{"pid", 4001}, {"used_memory", 2 * kGiB}},
                                         {{"pid", 5000}, {"used_memory", 8 * kGiB}},
                                         {{"pid", 6000}, {"used_memory", kGiB}}});
  d0["graphics_processes"] = Json::array({{{"pid", 4002}, {"used_memory", kGiB / 2}},
                                          {{"pid", 4001}, {"used_memory", 2 * kGiB}},  // in both lists
                                          {{"pid", 5001}, {"used_memory", kGiB}}});
  d0["process_utilization"] =
      Json::array({{{"pid", 4000}, {"sm", 90}, {"timestamp", now_us - 500000}},  // before the first tick
                   {{"pid", 4000}, {"sm", 10}, {"timestamp", "now"}},
                   {{"pid", 4001}, {"sm", 20}, {"timestamp", "now"}},
                   {{"pid", 4002}, {"sm", 5}, {"timestamp", "now"}},
                   {{"pid", 5000}, {"sm", 60}, {"timestamp", "now"}}});
  // The lists grow between NVML's sizing call and the filling call once.
  d0["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"insufficient_size_once", 3}}}};
  Json& d1 = scenario["devices"][1];
  d1["compute_processes"] = Json::array({{{"pid", 5000}, {"used_memory", kGiB}}});
  d1["process_utilization"] = Json::array({{{"pid", 5000}, {"sm", 60}, {"timestamp", "now"}}});
  UseScenario(scenario);

  NvidiaOptions options = Options();
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  const double tree_memory = static_cast<double>(kGiB + 2 * kGiB + kGiB / 2);
  EXPECT_EQ(t0["gpu.process.0.memoryAllocatedBytes"], tree_memory);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.memoryAllocated"],
                   100.0 * tree_memory / static_cast<double>(test::kMemoryTotal));
  // SM: per process the mean of its samples since the last tick, summed over the tree: (90+10)/2 + 20 + 5.
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.gpu"], 75.0);
  // Device-wide values, copied.
  EXPECT_EQ(t0["gpu.process.0.memory"], 61);
  EXPECT_EQ(t0["gpu.process.0.temp"], 54);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.powerWatts"], 612.345);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.enforcedPowerLimitWatts"], 700.0);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.powerPercent"], 100.0 * 612.345 / 700.0);
  // GPU 1 runs only an unrelated process.
  EXPECT_TRUE(Keys(t0, "gpu.process.1.").empty());
  for (const auto& key : Keys(t0, "gpu.process.")) {
    const MetricDefinition* definition = FindMetricDefinition(key);
    ASSERT_NE(definition, nullptr) << key;
    EXPECT_TRUE(definition->pattern.starts_with("gpu.process.")) << key;
  }

  // The next tick only counts samples newer than those already seen: the old 90 is gone.
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(t1["gpu.process.0.gpu"], 35.0);
  EXPECT_EQ(t1["gpu.process.0.memoryAllocatedBytes"], tree_memory);
}

TEST_F(NvidiaCollectorTest, ProcessTreeRootAloneCounts) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] = Json::array({{{"pid", 4000}, {"used_memory", 1000000}}});
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_EQ(t0["gpu.process.0.memoryAllocatedBytes"], 1000000.0);
  EXPECT_FALSE(t0.Has("gpu.process.0.gpu"));  // the scenario has no per-process samples
}

// Monitoring PID 1 (the whole system, or a container's init with the host's PID namespace): PID 1 and its
// descendants are the tree.
TEST_F(NvidiaCollectorTest, ProcessTreeRootedAtPidOne) {
  test::FixtureTree tree;
  tree.Write("proc/1/stat", test::PidStatLine(1, "init", 'S', 0, 0, 0, 1, 1));
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] =
      Json::array({{{"pid", 1}, {"used_memory", 1000}}, {{"pid", 4000}, {"used_memory", 2000}}});
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 1;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.Has("gpu.process.0.memoryAllocatedBytes")) << "PID 1 and its child are not counted";
  EXPECT_EQ(t0["gpu.process.0.memoryAllocatedBytes"], 3000.0);
}

// A driver without the _v3 process lists (the legacy variant keeps the _v2 ones, same 24-byte entries)
// still gives the run's share.
TEST_F(NvidiaCollectorTest, LegacyDriverProcessListsV2) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] = Json::array({{{"pid", 4000}, {"used_memory", 1000000}}});
  UseScenario(scenario);
  NvidiaOptions options = Options(test::FakeLegacyPath());
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_TRUE(t0.Has("gpu.0.temp"));
  ASSERT_TRUE(t0.Has("gpu.process.0.memoryAllocatedBytes"))
      << "no gpu.process.* with a driver that has only nvmlDeviceGetComputeRunningProcesses_v2";
  EXPECT_EQ(t0["gpu.process.0.memoryAllocatedBytes"], 1000000.0);
  EXPECT_GE(FakeHooks::Legacy().Calls("nvmlDeviceGetComputeRunningProcesses_v2", 0), 1u);
}

TEST_F(NvidiaCollectorTest, ProcessListNotSupportedIsAskedOnce) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"code", "NO_PERMISSION"}}}};
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 3; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    EXPECT_TRUE(c.status.ok());
    EXPECT_TRUE(Keys(c, "gpu.process.").empty());
    EXPECT_TRUE(c.Has("gpu.0.temp"));
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1u);
}

// One list failing leaves the other: a board that refuses the graphics list still gives the compute
// list's share, every tick.
TEST_F(NvidiaCollectorTest, GraphicsListNotSupportedKeepsTheComputeList) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] = Json::array({{{"pid", 4000}, {"used_memory", 1000000}}});
  scenario["devices"][0]["fail"] = {
      {"nvmlDeviceGetGraphicsRunningProcesses_v3", {{"code", "NOT_SUPPORTED"}}}};
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 3; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    EXPECT_EQ(c["gpu.process.0.memoryAllocatedBytes"], 1000000.0) << "tick " << tick;
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetGraphicsRunningProcesses_v3", 0), 1u);
}

// --no-process-tree: the root process alone is the run, on the GPU as in /proc.
TEST_F(NvidiaCollectorTest, WithoutTheTreeOnlyTheRootCounts) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  tree.Write("proc/4001/stat", test::PidStatLine(4001, "worker", 'S', 4000, 0, 0, 1, 110));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] =
      Json::array({{{"pid", 4000}, {"used_memory", 1000}}, {{"pid", 4001}, {"used_memory", 2000}}});
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 4000;
  options.whole_tree = false;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  EXPECT_EQ(CollectTick(*collector, 0)["gpu.process.0.memoryAllocatedBytes"], 1000.0);
}

// A process whose /proc entry cannot be read yet is decided again next tick, not written off for good.
TEST_F(NvidiaCollectorTest, AnUnreadableProcessIsLookedAtAgain) {
  test::FixtureTree tree;
  tree.Write("proc/4000/stat", test::PidStatLine(4000, "python", 'S', 1, 0, 0, 1, 100));
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["compute_processes"] = Json::array({{{"pid", 4001}, {"used_memory", 2000}}});
  UseScenario(scenario);
  NvidiaOptions options = Options();
  options.pid = 4000;
  options.paths = tree.paths();
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  EXPECT_TRUE(Keys(CollectTick(*collector, 0), "gpu.process.").empty());
  tree.Write("proc/4001/stat", test::PidStatLine(4001, "worker", 'S', 4000, 0, 0, 1, 110));
  EXPECT_EQ(CollectTick(*collector, 1)["gpu.process.0.memoryAllocatedBytes"], 2000.0);
}

// CUDA ordinals count every GPU NVML has, not only the ones x_stats_gpu_device_ids reports.
TEST_F(NvidiaCollectorTest, CudaOrdinalsIgnoreTheDeviceSelection) {
  UseScenario(DefaultScenario(2));
  NvidiaOptions options = Options();
  options.device_ids = std::vector<unsigned>{1};
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  (void)CollectTick(*collector, 0);
  ASSERT_EQ(published_.size(), 1u);
  const Json& devices = published_[0]["runmon"]["nvidia"]["devices"];
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0]["key"], "gpu.1");
  EXPECT_EQ(devices[0]["cudaOrdinal"], 1);
}

// A GPU in MIG mode is not a CUDA device; its instances are.
TEST_F(NvidiaCollectorTest, AGpuInMigModeHasNoCudaOrdinal) {
  UseScenarioFile((test::FakeScenariosDir() / "a100_mig.json").string());
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  (void)CollectTick(*collector, 0);
  ASSERT_EQ(published_.size(), 1u);
  const Json& devices = published_[0]["runmon"]["nvidia"]["devices"];
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_FALSE(devices[0].contains("cudaOrdinal"));
  EXPECT_EQ(devices[0]["migMode"], true);
  EXPECT_EQ(devices[1]["cudaOrdinal"], 0);
  EXPECT_EQ(devices[3]["cudaOrdinal"], 2);
}

// ---- metadata --------------------------------------------------------------------------------------

TEST_F(NvidiaCollectorTest, MetadataIsPublishedOnceFromTheLane) {
  UseScenario(DefaultScenario(2));
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  EXPECT_TRUE(published_.empty());  // nothing happens before the first Collect
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlInit_v2", FakeHooks::kSystem), 0u);
  for (uint64_t tick = 0; tick < 3; ++tick) ASSERT_TRUE(CollectTick(*collector, tick).status.ok());
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlInit_v2", FakeHooks::kSystem), 1u);
  const Json& meta = published_[0];
  EXPECT_EQ(meta["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(meta["gpu_count"], 2);
  EXPECT_EQ(meta["cuda_version"], "12.4");
  ASSERT_EQ(meta["gpu_nvidia"].size(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    const Json& gpu = meta["gpu_nvidia"][i];
    EXPECT_EQ(gpu["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu["memoryTotal"], std::to_string(test::kMemoryTotal));  // a string, as W&B writes it
    EXPECT_EQ(gpu["cudaCores"], 16896);
    EXPECT_EQ(gpu["architecture"], "Hopper");
    EXPECT_EQ(gpu["uuid"], test::DeviceUuid(i));
  }
  const Json& nvidia = meta["runmon"]["nvidia"];
  EXPECT_EQ(nvidia["driverVersion"], "550.90.07");
  EXPECT_EQ(nvidia["library"], test::FakeFullPath());
  EXPECT_FALSE(nvidia.contains("cudaVisibleDevices"));
  ASSERT_EQ(nvidia["devices"].size(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    const Json& d = nvidia["devices"][i];
    EXPECT_EQ(d["key"], "gpu." + std::to_string(i));
    EXPECT_EQ(d["nvmlIndex"], i);
    EXPECT_EQ(d["uuid"], test::DeviceUuid(i));
    EXPECT_EQ(d["pciBusId"], fmt::format("00000000:{:02X}:00.0", 0x10 + i));
    EXPECT_EQ(d["memoryTotal"], std::to_string(test::kMemoryTotal));
    EXPECT_EQ(d["cudaOrdinal"], i);  // CUDA_VISIBLE_DEVICES unset: every GPU, in NVML order
    EXPECT_FALSE(d.contains("mig"));
  }
}

TEST_F(NvidiaCollectorTest, CudaVersionAndArchitectureNames) {
  Json scenario = DefaultScenario(3);
  scenario["cuda_driver_version"] = 11080;
  scenario["devices"][0]["architecture"] = "ADA";
  scenario["devices"][1]["architecture"] = "BLACKWELL";
  scenario["devices"][2]["architecture"] = "UNKNOWN";
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  ASSERT_TRUE(CollectTick(*collector, 0).status.ok());
  ASSERT_EQ(published_.size(), 1u);
  const Json& meta = published_[0];
  EXPECT_EQ(meta["cuda_version"], "11.8");
  EXPECT_EQ(meta["gpu_nvidia"][0]["architecture"], "Ada");
  EXPECT_EQ(meta["gpu_nvidia"][1]["architecture"], "Blackwell");
  EXPECT_FALSE(meta["gpu_nvidia"][2].contains("architecture"));  // left out, never made up
}

// CUDA_VISIBLE_DEVICES, every form, as CUDA ordinals in runmon.nvidia.devices[].
struct VisibleCase {
  const char* name;
  std::optional<std::string> value;
  std::map<std::string, unsigned> ordinals;  // key -> CUDA ordinal; keys not listed have none
};

// gpu.0 GPU-A, gpu.1 GPU-B, gpu.2 GPU-C in MIG mode, gpu.3 its instance GI 1, gpu.4 its instance GI 2.
constexpr const char* kUuidA = "GPU-aa11c0de-0000-4000-8000-000000000001";
constexpr const char* kUuidB = "GPU-bb22c0de-0000-4000-8000-000000000002";
constexpr const char* kUuidC = "GPU-cc33c0de-0000-4000-8000-000000000003";
constexpr const char* kMigX = "MIG-dd44c0de-0000-5000-8000-000000000004";
constexpr const char* kMigY = "MIG-ee55c0de-0000-5000-8000-000000000005";

class CudaVisibleDevicesTest : public NvidiaCollectorTest,
                               public ::testing::WithParamInterface<VisibleCase> {};

TEST_P(CudaVisibleDevicesTest, OrdinalsInMetadata) {
  Json a = DefaultDevice(0), b = DefaultDevice(1), c = DefaultDevice(2);
  a["uuid"] = kUuidA;
  b["uuid"] = kUuidB;
  c["uuid"] = kUuidC;
  c["mig"] = {{"current", 1},
              {"instances",
               Json::array({MigInstance(0, kMigX, 1, 1000000, 0), MigInstance(1, kMigY, 2, 1000000, 0)})}};
  UseScenario(Json{{"driver_version", "550.90.07"}, {"devices", Json::array({a, b, c})}});
  NvidiaOptions options = Options();
  options.cuda_visible_devices = GetParam().value;
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  ASSERT_TRUE(CollectTick(*collector, 0).status.ok());
  ASSERT_EQ(published_.size(), 1u);
  const Json& nvidia = published_[0]["runmon"]["nvidia"];
  if (GetParam().value) {
    EXPECT_EQ(nvidia["cudaVisibleDevices"], *GetParam().value);
  }
  const Json& devices = nvidia["devices"];
  ASSERT_EQ(devices.size(), 5u);
  for (const Json& d : devices) {
    const std::string key = d["key"];
    const auto it = GetParam().ordinals.find(key);
    if (it == GetParam().ordinals.end()) {
      if (GetParam().value) {
        EXPECT_FALSE(d.contains("cudaOrdinal")) << key;
      }
    } else {
      ASSERT_TRUE(d.contains("cudaOrdinal")) << key;
      EXPECT_EQ(d["cudaOrdinal"], it->second) << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, CudaVisibleDevicesTest,
    ::testing::Values(VisibleCase{"Unset", std::nullopt, {{"gpu.0", 0}, {"gpu.1", 1}}},
                      VisibleCase{"Indices", "1,0", {{"gpu.1", 0}, {"gpu.0", 1}}},
                      VisibleCase{"IndicesWithSpaces", " 1 , 0 ", {{"gpu.1", 0}, {"gpu.0", 1}}},
                      VisibleCase{"Uuid", kUuidB, {{"gpu.1", 0}}},
                      VisibleCase{"UuidPrefix", "GPU-bb22,GPU-aa", {{"gpu.1", 0}, {"gpu.0", 1}}},
                      VisibleCase{"MigUuid", std::string(kMigY) + "," + kMigX, {{"gpu.4", 0}, {"gpu.3", 1}}},
                      VisibleCase{"LegacyMig", std::string("MIG-") + kUuidC + "/2/0", {{"gpu.4", 0}}},
                      VisibleCase{"InvalidEntryEndsTheList", "0,bogus,1", {{"gpu.0", 0}}},
                      VisibleCase{"UnknownIndexEndsTheList", "1,7,0", {{"gpu.1", 0}}},
                      VisibleCase{"Empty", "", {}}),
    [](const ::testing::TestParamInfo<VisibleCase>& c) { return std::string(c.param.name); });

// ---- device selection, device counts ----------------------------------------------------------------

TEST_F(NvidiaCollectorTest, DeviceIdsSelectNvmlIndices) {
  UseScenario(DefaultScenario(3));
  NvidiaOptions options = Options();
  options.device_ids = std::vector<unsigned>{0, 2};
  auto collector = Make(std::move(options));
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_TRUE(t0.Has("gpu.0.temp"));
  EXPECT_TRUE(Keys(t0, "gpu.1.").empty());
  EXPECT_TRUE(t0.Has("gpu.2.temp"));  // keys keep NVML's index
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetTemperature", 1), 0u);
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0]["gpu_count"], 2);
  EXPECT_EQ(published_[0]["runmon"]["nvidia"]["devices"][1]["key"], "gpu.2");
}

TEST_F(NvidiaCollectorTest, DeviceIdsEmptyOrOutOfRangeSelectNothing) {
  UseScenario(DefaultScenario(2));
  for (const auto& ids : {std::vector<unsigned>{}, std::vector<unsigned>{5}}) {
    FakeHooks::Full().ResetState();
    NvidiaOptions options = Options();
    options.device_ids = ids;
    auto collector = Make(std::move(options));
    ASSERT_NE(collector, nullptr);
    const Collected t0 = CollectTick(*collector, 0);
    EXPECT_TRUE(t0.status.ok());
    EXPECT_TRUE(Keys(t0, "gpu.").empty());
  }
}

TEST_F(NvidiaCollectorTest, ZeroDevices) {
  UseScenario(
      Json{{"driver_version", "550.90.07"}, {"cuda_driver_version", 12040}, {"devices", Json::array()}});
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 2; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    EXPECT_TRUE(c.status.ok()) << c.status.error();
    EXPECT_TRUE(c.batch.empty());
  }
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_FALSE(published_[0].contains("gpu_count"));
  EXPECT_FALSE(published_[0].contains("gpu_nvidia"));
  EXPECT_EQ(published_[0]["runmon"]["nvidia"]["devices"], Json::array());
  EXPECT_EQ(published_[0]["runmon"]["nvidia"]["driverVersion"], "550.90.07");
}

TEST_F(NvidiaCollectorTest, SixtyFourDevices) {
  UseScenario(DefaultScenario(64));
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  for (unsigned i = 0; i < 64; ++i) {
    const std::string prefix = "gpu." + std::to_string(i) + ".";
    EXPECT_EQ(Keys(t0, prefix).size(), 17u) << prefix;  // every key but GPM's (first tick)
    EXPECT_EQ(t0[prefix + "temp"], 54);
  }
  EXPECT_TRUE(Keys(t0, "gpu.64.").empty());
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0]["gpu_count"], 64);
  EXPECT_EQ(published_[0]["runmon"]["nvidia"]["devices"][63]["key"], "gpu.63");
  EXPECT_EQ(published_[0]["runmon"]["nvidia"]["devices"][63]["uuid"], test::DeviceUuid(63));
  EXPECT_EQ(CollectTick(*collector, 1)["gpu.63.gpu"], 97);
}

// ---- nvmlInit failures, bad libraries ----------------------------------------------------------------

TEST_F(NvidiaCollectorTest, InitVersionMismatchIsAnErrorEveryTick) {
  UseScenario(Json{{"init_result", "LIB_RM_VERSION_MISMATCH"}, {"devices", Json::array({DefaultDevice(0)})}});
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  for (uint64_t tick = 0; tick < 3; ++tick) {
    const Collected c = CollectTick(*collector, tick);
    ASSERT_FALSE(c.status.ok());
    EXPECT_NE(c.status.error().find("RM has detected an NVML/RM version mismatch"), std::string::npos)
        << c.status.error();
    EXPECT_NE(c.status.error().find("18"), std::string::npos) << c.status.error();
    EXPECT_TRUE(c.batch.empty());
  }
  EXPECT_TRUE(published_.empty());
}

TEST_F(NvidiaCollectorTest, InitThatFailsOnceIsRetried) {
  Json scenario = DefaultScenario(1);
  scenario["init_result"] = Json::array({"DRIVER_NOT_LOADED", "SUCCESS"});
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_FALSE(t0.status.ok());
  EXPECT_NE(t0.status.error().find("Driver Not Loaded"), std::string::npos) << t0.status.error();
  EXPECT_TRUE(published_.empty());
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_TRUE(t1.status.ok()) << t1.status.error();
  EXPECT_EQ(t1["gpu.0.temp"], 54);
  EXPECT_EQ(published_.size(), 1u);
}

TEST_F(NvidiaCollectorTest, DeviceCountFailureIsAnError) {
  Json scenario = DefaultScenario(1);
  scenario["fail"] = {{"nvmlDeviceGetCount_v2", {{"code", "UNKNOWN"}, {"times", 1}}}};
  UseScenario(scenario);
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_FALSE(t0.status.ok());
  EXPECT_NE(t0.status.error().find("Unknown Error"), std::string::npos) << t0.status.error();
  const Collected t1 = CollectTick(*collector, 1);
  EXPECT_TRUE(t1.status.ok()) << t1.status.error();
  EXPECT_TRUE(t1.Has("gpu.0.temp"));
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlInit_v2", FakeHooks::kSystem), 1u);
}

TEST_F(NvidiaCollectorTest, NoScenarioMeansNoDriver) {
  ::unsetenv("RUNMON_FAKE_NVML_SCENARIO");
  auto collector = Make(Options());
  ASSERT_NE(collector, nullptr);
  const Collected t0 = CollectTick(*collector, 0);
  ASSERT_FALSE(t0.status.ok());
  EXPECT_NE(t0.status.error().find("Driver Not Loaded"), std::string::npos) << t0.status.error();
}

TEST_F(NvidiaCollectorTest, AbsentLibrary) {
  const std::string path = (dir_.root() / "missing" / "libnvidia-ml.so.1").string();
  NvidiaOptions options = Options(path);
  std::string why_not;
  EXPECT_EQ(MakeNvidiaCollector(std::move(options), &why_not), nullptr);
  EXPECT_NE(why_not.find("cannot load"), std::string::npos) << why_not;
  EXPECT_NE(why_not.find(path), std::string::npos) << why_not;
  // why_not is optional.
  EXPECT_EQ(MakeNvidiaCollector(Options(path)), nullptr);
}

TEST_F(NvidiaCollectorTest, TextFileAtTheLibraryPath) {
  const std::string path = dir_.WriteText("this is not a shared library\n", "libnvidia-ml.so.1");
  std::string why_not;
  EXPECT_EQ(MakeNvidiaCollector(Options(path), &why_not), nullptr);
  EXPECT_NE(why_not.find("cannot load"), std::string::npos) << why_not;
  EXPECT_NE(why_not.find(path), std::string::npos) << why_not;
}

TEST_F(NvidiaCollectorTest, LibraryThatIsNotNvml) {
  std::string why_not;
  EXPECT_EQ(MakeNvidiaCollector(Options("libm.so.6"), &why_not), nullptr);
  EXPECT_NE(why_not.find("is not NVML"), std::string::npos) << why_not;
}

// The collector never reads the environment: RUNMON_NVML_LIBRARY reaches it through the family's factory
// (the app's collector context), so with an empty path it opens libnvidia-ml.so.1 whatever the process's
// environment says.
TEST_F(NvidiaCollectorTest, EmptyLibraryPathIgnoresTheProcessEnvironment) {
  UseScenario(DefaultScenario(1));
  ::setenv("RUNMON_NVML_LIBRARY", test::FakeFullPath().c_str(), 1);
  std::string why_not;
  auto collector = MakeNvidiaCollector(Options(""), &why_not);
  ::unsetenv("RUNMON_NVML_LIBRARY");
  if (collector == nullptr) {
    EXPECT_NE(why_not.find("libnvidia-ml.so.1"), std::string::npos) << why_not;
  } else {  // a machine with a driver: the real library, never the fake one
    CollectTick(*collector, 0);
    for (const auto& metadata : published_) {
      EXPECT_NE(metadata["runmon"]["nvidia"]["library"], test::FakeFullPath());
    }
  }
}

// ---- ProbeNvidiaMetadata (runmon info) ---------------------------------------------------------------

TEST_F(NvidiaCollectorTest, ProbeGivesTheSameMetadataAsTheCollector) {
  UseScenario(DefaultScenario(2));
  NvidiaOptions options = Options();
  options.cuda_visible_devices = "1";
  auto probed = ProbeNvidiaMetadata(options);
  ASSERT_TRUE(probed.ok()) << probed.error();
  EXPECT_TRUE(published_.empty());  // the probe publishes nothing
  EXPECT_EQ((*probed)["gpu_count"], 2);
  EXPECT_EQ((*probed)["runmon"]["nvidia"]["devices"][1]["cudaOrdinal"], 0);
  EXPECT_FALSE((*probed)["runmon"]["nvidia"]["devices"][0].contains("cudaOrdinal"));
  // No metric call was needed.
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetTemperature", 0), 0u);

  auto collector = Make(options);
  ASSERT_NE(collector, nullptr);
  ASSERT_TRUE(CollectTick(*collector, 0).status.ok());
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0], *probed);
}

TEST_F(NvidiaCollectorTest, ProbeFailures) {
  UseScenario(Json{{"init_result", "LIB_RM_VERSION_MISMATCH"}, {"devices", Json::array()}});
  auto mismatch = ProbeNvidiaMetadata(Options());
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.error().find("RM has detected an NVML/RM version mismatch"), std::string::npos)
      << mismatch.error();
  auto absent = ProbeNvidiaMetadata(Options((dir_.root() / "nothing.so.1").string()));
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().find("cannot load"), std::string::npos) << absent.error();
}

}  // namespace
}  // namespace runmon
