// The TPU collector (collectors/tpu/tpu_collector.hpp) with a scripted SDK and service client: the SDK
// first and the service for what it lacks, only the metrics the service lists, nothing (and nothing said)
// while no workload serves, errors said once per kind, owner PIDs from the monitored tree's descriptors.
#include "collectors/tpu/tpu_collector.hpp"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixture_tree.hpp"
#include "tpu_reading_json.hpp"

namespace runmon {
namespace {

using tpu::RuntimeCall;
using tpu::RuntimeCallCode;
using tpu::RuntimeCallError;
using tpu::RuntimeMetricReading;

struct ServiceScript {
  bool listening = true;
  std::optional<RuntimeCallError> list_error;
  std::vector<std::string> supported;
  std::map<std::string, RuntimeCall<RuntimeMetricReading>> answers;
  int list_calls = 0;
  int batches = 0;
  std::vector<std::string> asked;  // every name asked for, in order
};

class ScriptedClient : public tpu::RuntimeMetricsClient {
 public:
  explicit ScriptedClient(std::shared_ptr<ServiceScript> script) : script_(std::move(script)) {}
  bool Listening() override { return script_->listening; }
  RuntimeCall<std::vector<std::string>> ListSupportedMetrics() override {
    ++script_->list_calls;
    if (script_->list_error) return *script_->list_error;
    return script_->supported;
  }
  std::vector<RuntimeCall<RuntimeMetricReading>> GetRuntimeMetrics(
      const std::vector<std::string>& names) override {
    ++script_->batches;
    std::vector<RuntimeCall<RuntimeMetricReading>> out;
    for (const std::string& name : names) {
      script_->asked.push_back(name);
      auto found = script_->answers.find(name);
      out.push_back(found == script_->answers.end() ? RuntimeCall<RuntimeMetricReading>(RuntimeCallError{
                                                          RuntimeCallCode::kNotFound, "unknown"})
                                                    : found->second);
    }
    return out;
  }

 private:
  std::shared_ptr<ServiceScript> script_;
};

class ScriptedSdk : public tpu::LibtpuSdk {
 public:
  explicit ScriptedSdk(std::map<std::string, tpu::SdkMetricValues> values, std::vector<std::string>* reads)
      : values_(std::move(values)), reads_(reads) {}
  Result<tpu::SdkMetricValues> ReadMetric(const std::string& name) override {
    reads_->push_back(name);
    auto found = values_.find(name);
    if (found == values_.end()) return Error{"no such metric: " + name};
    return found->second;
  }

 private:
  std::map<std::string, tpu::SdkMetricValues> values_;
  std::vector<std::string>* reads_;
};

nlohmann::json MockResponses(const std::string& scenario) {
  std::ifstream in(std::string(RUNMON_FIXTURES_DIR) + "/tpu/grpc_runtime_metric_mock_responses.json");
  return nlohmann::json::parse(in).at(scenario).at("responses");
}

std::shared_ptr<ServiceScript> ServiceFromMocks(const std::string& scenario) {
  auto script = std::make_shared<ServiceScript>();
  const nlohmann::json responses = MockResponses(scenario);
  for (const auto& [name, response] : responses.items()) {
    script->supported.push_back(name);
    script->answers.emplace(name, test::ReadingFromJson(response));
  }
  return script;
}

tpu::TpuChips Chips(const char* name, unsigned count) {
  for (const tpu::TpuChipType& type : tpu::TpuChipTypes()) {
    if (type.name == name) return {.type = &type, .chip_count = count};
  }
  throw std::runtime_error("no chip type");
}

struct Harness {
  TpuOptions options;
  std::vector<std::string> warnings;
  std::vector<nlohmann::json> published;
  double now = 0;
  int clients_made = 0;

  explicit Harness(std::vector<std::shared_ptr<ServiceScript>> services,
                   tpu::TpuChips chips = Chips("v4", 1)) {
    options.chips = chips;
    for (size_t i = 0; i < services.size(); ++i)
      options.addresses.push_back(fmt::format("127.0.0.1:{}", 8431 + i));
    options.make_client =
        [this, services](const std::string& address) -> Result<std::unique_ptr<tpu::RuntimeMetricsClient>> {
      ++clients_made;
      const size_t index = std::stoul(address.substr(address.rfind(':') + 1)) - 8431;
      return std::unique_ptr<tpu::RuntimeMetricsClient>(std::make_unique<ScriptedClient>(services.at(index)));
    };
    options.monotonic_seconds = [this] { return now; };
    options.warn = [this](const std::string& message) { warnings.push_back(message); };
    options.publish_metadata = [this](const nlohmann::json& metadata) { published.push_back(metadata); };
  }

  std::unique_ptr<Collector> Make() { return MakeTpuCollector(options); }
};

std::map<std::string, double> Collect(Collector& collector, Status* status = nullptr) {
  MetricBatch batch;
  Status result = collector.Collect(Tick{}, batch);
  if (status != nullptr) *status = result;
  std::map<std::string, double> out;
  for (const Metric& metric : batch.items()) out[metric.key] = metric.value;
  return out;
}

TEST(TpuCollector, ReadsTheServiceAsWandbsMocksAnswer) {
  auto service = ServiceFromMocks("v4_single_device");
  Harness harness({service});
  auto collector = harness.Make();
  Status status = OkStatus();
  EXPECT_EQ(Collect(*collector, &status), (std::map<std::string, double>{{"tpu.0.dutyCycle", 75},
                                                                         {"tpu.0.hbmCapacityTotal", 16e9},
                                                                         {"tpu.0.hbmCapacityUsage", 8e9},
                                                                         {"tpu.0.hbmMemoryUsage", 50}}));
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(service->list_calls, 1);
  EXPECT_EQ(service->batches, 1);  // one batch for all metrics
  EXPECT_TRUE(harness.warnings.empty());
  EXPECT_EQ(collector->Name(), "tpu");
}

TEST(TpuCollector, AsksOnlyForWhatTheServiceLists) {
  auto service = ServiceFromMocks("v4_single_device");
  Harness harness({service});
  auto collector = harness.Make();
  Collect(*collector);
  EXPECT_EQ(std::set<std::string>(service->asked.begin(), service->asked.end()),
            (std::set<std::string>{"tpu.runtime.hbm.memory.total.bytes", "tpu.runtime.hbm.memory.usage.bytes",
                                   "tpu.runtime.tensorcore.dutycycle.percent"}));
  // A listed name the service does not serve is dropped until the list is asked for again.
  service->supported.push_back("tpu.runtime.hbm.utilization.percent");
  harness.now = 61;
  service->asked.clear();
  Collect(*collector);
  EXPECT_EQ(service->list_calls, 2);  // asked again after a minute
  EXPECT_EQ(std::count(service->asked.begin(), service->asked.end(), "tpu.runtime.hbm.utilization.percent"),
            1);
  service->asked.clear();
  harness.now = 62;
  Collect(*collector);
  EXPECT_EQ(std::count(service->asked.begin(), service->asked.end(), "tpu.runtime.hbm.utilization.percent"),
            0);
  EXPECT_TRUE(harness.warnings.empty());  // NOT_FOUND is not trouble
}

TEST(TpuCollector, IsQuietWhileNoWorkloadServes) {
  auto service = ServiceFromMocks("v4_single_device");
  service->listening = false;
  Harness harness({service});
  auto collector = harness.Make();
  Status status = OkStatus();
  EXPECT_TRUE(Collect(*collector, &status).empty());
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(service->list_calls, 0);
  EXPECT_EQ(service->batches, 0);
  EXPECT_TRUE(harness.warnings.empty());
  // The workload starts: the list is asked for, then the metrics.
  service->listening = true;
  EXPECT_EQ(Collect(*collector).size(), 4u);
  EXPECT_EQ(service->list_calls, 1);
  // It ends, and another starts: listed again.
  service->listening = false;
  Collect(*collector);
  service->listening = true;
  Collect(*collector);
  EXPECT_EQ(service->list_calls, 2);
}

TEST(TpuCollector, AServiceWithoutAListIsAskedForTheWholeRegistry) {
  auto service = ServiceFromMocks("v4_single_device");
  service->list_error = RuntimeCallError{RuntimeCallCode::kOther, "UNIMPLEMENTED"};
  Harness harness({service});
  auto collector = harness.Make();
  EXPECT_EQ(Collect(*collector).size(), 4u);
  size_t service_metrics = 0;
  for (const tpu::MetricSpec& spec : tpu::MetricSpecs()) service_metrics += !spec.service_name.empty();
  EXPECT_EQ(service->asked.size(), service_metrics);
}

TEST(TpuCollector, FailingCallsAreAnErrorSaidOncePerKind) {
  auto service = ServiceFromMocks("v4_single_device");
  for (auto& [name, answer] : service->answers) {
    answer = RuntimeCallError{RuntimeCallCode::kDeadlineExceeded, "Deadline Exceeded"};
  }
  Harness harness({service});
  auto collector = harness.Make();
  Status status = OkStatus();
  EXPECT_TRUE(Collect(*collector, &status).empty());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error().find("3 of 3 metrics failed"), std::string::npos) << status.error();
  EXPECT_NE(status.error().find("deadline exceeded"), std::string::npos) << status.error();
  Collect(*collector);
  ASSERT_EQ(harness.warnings.size(), 1u);
  EXPECT_NE(harness.warnings[0].find("127.0.0.1:8431"), std::string::npos);
  // A list that times out is an error too (and nothing is asked).
  auto slow = ServiceFromMocks("v4_single_device");
  slow->list_error = RuntimeCallError{RuntimeCallCode::kDeadlineExceeded, "Deadline Exceeded"};
  Harness slow_harness({slow});
  auto slow_collector = slow_harness.Make();
  Collect(*slow_collector, &status);
  EXPECT_FALSE(status.ok());
  Collect(*slow_collector, &status);
  EXPECT_EQ(slow->batches, 0);
  ASSERT_EQ(slow_harness.warnings.size(), 1u);
  EXPECT_NE(slow_harness.warnings[0].find("ListSupportedMetrics deadline exceeded"), std::string::npos);
}

TEST(TpuCollector, TheSdkComesFirstAndTheServiceFillsTheRest) {
  auto service = ServiceFromMocks("v4_single_device");
  Harness harness({service}, Chips("v4", 2));
  std::vector<std::string> reads;
  std::map<std::string, tpu::SdkMetricValues> sdk_values = {
      {"tensorcore_util", {.values = {}}},  // the first alias has nothing: the second is tried
      {"tensorcore_utilization", {.values = {"55.5", "60"}}},
      {"duty_cycle_pct", {.values = {"90", "91"}}},
      {"ici_link_health", {.values = {"1", "1"}}}};
  harness.options.open_sdk = [&]() -> Result<std::unique_ptr<tpu::LibtpuSdk>> {
    return std::unique_ptr<tpu::LibtpuSdk>(std::make_unique<ScriptedSdk>(sdk_values, &reads));
  };
  auto collector = harness.Make();
  const auto out = Collect(*collector);
  EXPECT_EQ(out.at("tpu.0.tensorcoreUtilization"), 55.5);
  EXPECT_EQ(out.at("tpu.1.tensorcoreUtilization"), 60);
  EXPECT_EQ(out.at("tpu.0.dutyCycle"), 90);  // the SDK's, not the service's 75
  EXPECT_EQ(out.at("tpu.1.iciLinkHealth"), 1);
  EXPECT_EQ(out.at("tpu.0.hbmCapacityTotal"), 16e9);  // from the service
  EXPECT_EQ(
      std::count(service->asked.begin(), service->asked.end(), "tpu.runtime.tensorcore.dutycycle.percent"),
      0);
  // The alias found is kept: the second tick reads it alone.
  reads.clear();
  Collect(*collector);
  EXPECT_EQ(std::count(reads.begin(), reads.end(), "tensorcore_util"), 0);
  EXPECT_EQ(std::count(reads.begin(), reads.end(), "tensorcore_utilization"), 1);
}

TEST(TpuCollector, LabelsOverTheBoundAreSaidOnce) {
  auto service = ServiceFromMocks("v4_single_device");
  RuntimeMetricReading queues;
  for (int i = 0; i < 100; ++i) {
    tpu::MetricReading metric;
    metric.attribute.string_value = "queue" + std::to_string(i);
    metric.measure = 1.0;
    queues.metrics.push_back(metric);
  }
  service->supported.push_back("hlo.queue.size.gauge");
  service->answers.emplace("hlo.queue.size.gauge", queues);
  Harness harness({service});
  auto collector = harness.Make();
  const auto out = Collect(*collector);
  EXPECT_EQ(std::count_if(out.begin(), out.end(),
                          [](const auto& kv) { return kv.first.starts_with("tpu.hloQueueSize."); }),
            static_cast<long>(tpu::kMaxLabelsPerMetric));
  Collect(*collector);
  ASSERT_EQ(harness.warnings.size(), 1u);
  EXPECT_NE(harness.warnings[0].find("36 labels left out"), std::string::npos) << harness.warnings[0];
}

TEST(TpuCollector, AnSdkThatCannotOpenLeavesTheService) {
  auto service = ServiceFromMocks("v4_single_device");
  Harness harness({service});
  harness.options.open_sdk = []() -> Result<std::unique_ptr<tpu::LibtpuSdk>> {
    return Error{"libtpu.so: unexpected LibtpuSdkApi header"};
  };
  auto collector = harness.Make();
  EXPECT_EQ(Collect(*collector).size(), 4u);
  Collect(*collector);
  ASSERT_EQ(harness.warnings.size(), 1u);
  EXPECT_NE(harness.warnings[0].find("unexpected LibtpuSdkApi header"), std::string::npos);
}

TEST(TpuCollector, AClientThatCannotBeMadeIsSaidOnce) {
  Harness harness({ServiceFromMocks("v4_single_device")});
  harness.options.make_client = [](const std::string&) -> Result<std::unique_ptr<tpu::RuntimeMetricsClient>> {
    return Error{"runmon-modules/tpu-runtime-metrics.so: cannot open"};
  };
  auto collector = harness.Make();
  Status status = OkStatus();
  EXPECT_TRUE(Collect(*collector, &status).empty());
  Collect(*collector);
  ASSERT_EQ(harness.warnings.size(), 1u);
  EXPECT_NE(harness.warnings[0].find("tpu-runtime-metrics.so"), std::string::npos);
}

TEST(TpuCollector, ReadsEveryProcessesService) {
  // Two PyTorch/XLA processes, one chip each, both calling it device 0.
  auto first = ServiceFromMocks("v4_single_device");
  auto second = ServiceFromMocks("v4_single_device");
  Harness harness({first, second}, Chips("v4", 2));
  auto collector = harness.Make();
  const auto out = Collect(*collector);
  EXPECT_EQ(out.at("tpu.1.hbmCapacityTotal"), 16e9);
  EXPECT_EQ(out.at("tpu.1.dutyCycle"), 75);
  EXPECT_EQ(out.size(), 8u);
  EXPECT_EQ(harness.clients_made, 2);
  // One that does not serve is passed over.
  second->listening = false;
  EXPECT_EQ(Collect(*collector).size(), 4u);
}

TEST(TpuCollector, AProcessMissingAMetricKeepsItsDevicesNumbers) {
  // Two processes, each calling its chip device 0; the first serves no HBM usage. Its total stays on tpu.0
  // and the second's usage on tpu.1, beside the second's total: a device's values come from one process.
  auto first = ServiceFromMocks("v4_single_device");
  first->supported = {"tpu.runtime.hbm.memory.total.bytes"};
  auto& total = std::get<RuntimeMetricReading>(first->answers.at("tpu.runtime.hbm.memory.total.bytes"));
  std::get<double>(total.metrics[0].measure) = 32e9;
  auto second = ServiceFromMocks("v4_single_device");
  Harness harness({first, second}, Chips("v4", 2));
  auto collector = harness.Make();
  const auto out = Collect(*collector);
  EXPECT_EQ(out.at("tpu.0.hbmCapacityTotal"), 32e9);
  EXPECT_FALSE(out.count("tpu.0.hbmCapacityUsage"));
  EXPECT_FALSE(out.count("tpu.0.hbmMemoryUsage"));
  EXPECT_EQ(out.at("tpu.1.hbmCapacityTotal"), 16e9);
  EXPECT_EQ(out.at("tpu.1.hbmMemoryUsage"), 50);
  // The first process stops serving: the second keeps its number.
  first->listening = false;
  const auto later = Collect(*collector);
  EXPECT_EQ(later.at("tpu.1.hbmCapacityUsage"), 8e9);
  EXPECT_FALSE(later.count("tpu.0.hbmCapacityTotal"));
}

TEST(TpuCollector, PublishesTheChipsAndFindsTheOwners) {
  test::FixtureTree tree;
  tree.Write("proc/100/stat", test::PidStatLine(100, "python", 'S', 1, 0, 0, 1, 5000));
  tree.Write("proc/101/stat", test::PidStatLine(101, "worker", 'S', 100, 0, 0, 1, 5001));
  tree.Write("proc/200/stat", test::PidStatLine(200, "other", 'S', 1, 0, 0, 1, 6000));
  tree.Mkdir("proc/100/fd").Mkdir("proc/101/fd").Mkdir("proc/200/fd");
  std::filesystem::create_symlink("/dev/vfio/0", tree.Path("proc/101/fd/7"));
  std::filesystem::create_symlink("/dev/null", tree.Path("proc/100/fd/0"));
  std::filesystem::create_symlink("/dev/vfio/1", tree.Path("proc/200/fd/9"));  // not the run's
  auto service = ServiceFromMocks("v4_single_device");
  Harness harness({service}, Chips("v5e", 4));
  harness.options.paths = tree.paths();
  harness.options.pid = 100;
  auto collector = harness.Make();
  Collect(*collector);
  // The chips at the first tick, then the owners once found.
  ASSERT_EQ(harness.published.size(), 2u);
  EXPECT_EQ(
      harness.published[0],
      (nlohmann::json{{"tpu", {{"name", "v5e"}, {"hbm_gib", 16}, {"devices_per_chip", 1}, {"count", 4}}}}));
  EXPECT_EQ(harness.published[1]["tpu"]["owner_pids"], nlohmann::json::array({101}));
  EXPECT_EQ(harness.published[1]["tpu"]["device_nodes"], nlohmann::json::array({"/dev/vfio/0"}));
  EXPECT_EQ(harness.published[1]["tpu"]["name"], "v5e");
  Collect(*collector);
  EXPECT_EQ(harness.published.size(), 2u);  // once
}

TEST(TpuCollector, DeviceNodesAreAccelAndVfio) {
  EXPECT_TRUE(IsTpuDeviceNode("/dev/accel0"));
  EXPECT_TRUE(IsTpuDeviceNode("/dev/accel12"));
  EXPECT_TRUE(IsTpuDeviceNode("/dev/vfio/3"));
  EXPECT_FALSE(IsTpuDeviceNode("/dev/vfio/vfio"));
  EXPECT_FALSE(IsTpuDeviceNode("/dev/accel"));
  EXPECT_FALSE(IsTpuDeviceNode("/dev/accel0x"));
  EXPECT_FALSE(IsTpuDeviceNode("/dev/nvidia0"));
  EXPECT_FALSE(IsTpuDeviceNode("socket:[1234]"));
}

TEST(TpuCollector, MixedGenerationsAreNamedInTheMetadata) {
  tpu::TpuChips chips = Chips("v5e", 2);
  chips.other_types = {{"v4", 1}};
  EXPECT_EQ(DescribeTpuChips(chips)["other_types"], (nlohmann::json{{"v4", 1}}));
}

}  // namespace
}  // namespace runmon
