// NvmlProcessLister (every process on every GPU, for symon's process table) against the fake
// libnvidia-ml.so.1: processes on several devices, compute and graphics lists merged per device, memory
// that NVML cannot tell left out, SM utilisation from the samples newer than the last listing (and none
// when a process has no sample), a list that grows between the sizing and the filling call, a device
// whose call fails while the others are listed, a device that does not support the lists, MIG instances
// in place of their parent, and a library that cannot be loaded.
#include <gtest/gtest.h>

#include <stdlib.h>

#include "collectors/nvidia/nvml_process_list.hpp"
#include "nvml_test_support.hpp"

namespace runmon {
namespace {

using nvidia::NvmlProcessLister;
using test::DefaultDevice;
using test::FakeHooks;
using test::Json;

class NvmlProcessListTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeHooks::Full().ResetState(); }
  void TearDown() override { ::unsetenv("RUNMON_FAKE_NVML_SCENARIO"); }

  std::unique_ptr<NvmlProcessLister> Open(const Json& devices) {
    const Json scenario{{"driver_version", "550.90.07"}, {"devices", devices}};
    ::setenv("RUNMON_FAKE_NVML_SCENARIO", dir_.Write(scenario).c_str(), 1);
    auto lister = NvmlProcessLister::Open(test::FakeFullPath());
    EXPECT_TRUE(lister.ok()) << (lister.ok() ? "" : lister.error());
    return lister.ok() ? std::move(*lister) : nullptr;
  }

  static Json Device(unsigned index, Json compute, Json graphics = Json::array(),
                     Json utilization = Json::array()) {
    Json device = DefaultDevice(index);
    device["compute_processes"] = std::move(compute);
    device["graphics_processes"] = std::move(graphics);
    device["process_utilization"] = std::move(utilization);
    return device;
  }

  test::ScenarioDir dir_;
};

const gpu::GpuProcess* Find(const gpu::GpuProcessListing& listing, unsigned device, long pid) {
  for (const auto& process : listing.processes) {
    if (process.device_index == device && process.pid == pid) return &process;
  }
  return nullptr;
}

TEST_F(NvmlProcessListTest, EveryProcessOnEveryDevice) {
  auto lister = Open(Json::array({
      Device(0, Json::array({{{"pid", 100}, {"used_memory", 1000}}, {{"pid", 101}, {"used_memory", 2000}}}),
             Json::array({{{"pid", 100}, {"used_memory", 1000}}, {{"pid", 102}, {"used_memory", 300}}}),
             Json::array({{{"pid", 100}, {"sm", 40}, {"timestamp", "now"}},
                          {{"pid", 100}, {"sm", 60}, {"timestamp", "now"}},
                          {{"pid", 102}, {"sm", 5}, {"timestamp", "now"}}})),
      Device(1, Json::array({{{"pid", 200}, {"used_memory", "N/A"}}, {{"pid", 100}, {"used_memory", 7}}})),
  }));
  ASSERT_NE(lister, nullptr);
  EXPECT_EQ(lister->device_count(), 2u);
  const gpu::GpuProcessListing listing = lister->List();
  EXPECT_TRUE(listing.problems.empty());
  ASSERT_EQ(listing.processes.size(), 5u);  // 100 is in both lists of GPU 0 (once) and on GPU 1
  const auto* a = Find(listing, 0, 100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->memory_bytes, 1000u);
  ASSERT_TRUE(a->sm_percent.has_value());
  EXPECT_DOUBLE_EQ(*a->sm_percent, 50);  // the mean of its two samples
  const auto* b = Find(listing, 0, 101);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->memory_bytes, 2000u);
  EXPECT_FALSE(b->sm_percent.has_value()) << "no sample: absent, not 0";
  ASSERT_NE(Find(listing, 0, 102), nullptr);
  EXPECT_EQ(Find(listing, 0, 102)->sm_percent, 5.0);
  const auto* c = Find(listing, 1, 200);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->memory_bytes.has_value()) << "NVML_VALUE_NOT_AVAILABLE: absent";
  EXPECT_FALSE(c->sm_percent.has_value()) << "GPU 1 has no samples";
  EXPECT_EQ(Find(listing, 1, 100)->memory_bytes, 7u);
}

TEST_F(NvmlProcessListTest, UtilisationIsSinceTheLastListing) {
  auto lister = Open(Json::array({Device(0, Json::array({{{"pid", 100}, {"used_memory", 1}}}), Json::array(),
                                         Json::array({{{"pid", 100}, {"sm", 80}, {"timestamp", 1000}}}))}));
  ASSERT_NE(lister, nullptr);
  EXPECT_EQ(lister->List().processes.at(0).sm_percent, 80.0);
  // The same sample is not newer than the last one seen: no utilisation now, the process still listed.
  const auto again = lister->List();
  ASSERT_EQ(again.processes.size(), 1u);
  EXPECT_FALSE(again.processes[0].sm_percent.has_value());
}

TEST_F(NvmlProcessListTest, ListThatGrowsBetweenSizingAndFilling) {
  Json processes = Json::array();
  for (int pid = 1000; pid < 1100; ++pid) processes.push_back({{"pid", pid}, {"used_memory", pid}});
  Json device = Device(0, processes);
  device["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"insufficient_size_once", 90}}},
                    {"nvmlDeviceGetProcessUtilization", {{"insufficient_size_once", 3}}}};
  device["process_utilization"] = Json::array({{{"pid", 1000}, {"sm", 12}, {"timestamp", "now"}}});
  auto lister = Open(Json::array({device}));
  ASSERT_NE(lister, nullptr);
  const auto listing = lister->List();
  EXPECT_TRUE(listing.problems.empty());
  ASSERT_EQ(listing.processes.size(), 100u);
  EXPECT_EQ(listing.processes.back().pid, 1099);
  EXPECT_EQ(listing.processes.front().sm_percent, 12.0);
}

TEST_F(NvmlProcessListTest, FailingDeviceIsNamedAndTheOthersListed) {
  Json broken = Device(1, Json::array({{{"pid", 300}, {"used_memory", 1}}}));
  broken["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"code", "UNKNOWN"}, {"times", 1}}},
                    {"nvmlDeviceGetGraphicsRunningProcesses_v3", {{"code", "UNKNOWN"}, {"times", 1}}}};
  auto lister = Open(Json::array({Device(0, Json::array({{{"pid", 100}, {"used_memory", 1}}})), broken}));
  ASSERT_NE(lister, nullptr);
  const auto first = lister->List();
  ASSERT_EQ(first.processes.size(), 1u);
  EXPECT_EQ(first.processes[0].pid, 100);
  ASSERT_EQ(first.problems.size(), 1u);
  EXPECT_EQ(first.problems[0].rfind("GPU 1: NVML cannot list its processes: ", 0), 0u) << first.problems[0];
  // A failure that is not a refusal is asked again: the next listing has the device back.
  const auto second = lister->List();
  EXPECT_TRUE(second.problems.empty());
  EXPECT_NE(Find(second, 1, 300), nullptr);
}

TEST_F(NvmlProcessListTest, UnsupportedListsAreNotAskedAgain) {
  Json device = DefaultDevice(0);
  device["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"code", "NOT_SUPPORTED"}}},
                    {"nvmlDeviceGetGraphicsRunningProcesses_v3", {{"code", "NOT_SUPPORTED"}}}};
  auto lister = Open(Json::array({device}));
  ASSERT_NE(lister, nullptr);
  for (int i = 0; i < 3; ++i) {
    const auto listing = lister->List();
    EXPECT_TRUE(listing.processes.empty());
    ASSERT_EQ(listing.problems.size(), 1u);
    EXPECT_NE(listing.problems[0].find("Not Supported"), std::string::npos) << listing.problems[0];
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1u);
}

TEST_F(NvmlProcessListTest, LostDeviceIsReportedAndNotAskedAgain) {
  Json device = Device(0, Json::array({{{"pid", 100}, {"used_memory", 1}}}));
  device["fail"] = {{"nvmlDeviceGetComputeRunningProcesses_v3", {{"code", "GPU_IS_LOST"}}}};
  auto lister = Open(Json::array({device, Device(1, Json::array({{{"pid", 200}, {"used_memory", 1}}}))}));
  ASSERT_NE(lister, nullptr);
  for (int i = 0; i < 2; ++i) {
    const auto listing = lister->List();
    ASSERT_EQ(listing.processes.size(), 1u);
    EXPECT_EQ(listing.processes[0].device_index, 1u);
    ASSERT_EQ(listing.problems.size(), 1u);
    EXPECT_EQ(listing.problems[0].rfind("GPU 0: ", 0), 0u);
  }
  EXPECT_EQ(FakeHooks::Full().Calls("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1u);
}

TEST_F(NvmlProcessListTest, MigInstancesInPlaceOfTheirParent) {
  Json gpu = DefaultDevice(0);
  gpu["mig"] = {
      {"current", 1},
      {"pending", 1},
      {"max_devices", 2},
      {"instances", Json::array({{{"slot", 0},
                                  {"uuid", "MIG-aaaa"},
                                  {"gpu_instance_id", 1},
                                  {"compute_instance_id", 0},
                                  {"memory", {{"total", 1000}, {"used", 10}}},
                                  {"compute_processes", Json::array({{{"pid", 7001}, {"used_memory", 500}}})},
                                  {"graphics_processes", Json::array()}}})}};
  auto lister = Open(Json::array({gpu}));
  ASSERT_NE(lister, nullptr);
  const auto listing = lister->List();
  ASSERT_EQ(listing.processes.size(), 1u);
  EXPECT_EQ(listing.processes[0].pid, 7001);
  EXPECT_EQ(listing.processes[0].device_index, 1u);  // the instance's own index, after the GPUs
  EXPECT_EQ(listing.processes[0].memory_bytes, 500u);
}

TEST_F(NvmlProcessListTest, LibraryThatCannotBeLoaded) {
  auto lister = NvmlProcessLister::Open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lister.ok());
  EXPECT_FALSE(lister.error().empty());
}

TEST_F(NvmlProcessListTest, DriverNotLoaded) {
  ::unsetenv("RUNMON_FAKE_NVML_SCENARIO");  // the fake's init then answers DRIVER_NOT_LOADED
  auto lister = NvmlProcessLister::Open(test::FakeFullPath());
  ASSERT_FALSE(lister.ok());
  EXPECT_FALSE(lister.error().empty());
}

}  // namespace
}  // namespace runmon
