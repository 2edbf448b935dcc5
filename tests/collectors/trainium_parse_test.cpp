// The Trainium family's pure parts on neuron-monitor's real documents (tests/fixtures/neuron_monitor, and
// W&B's copy in ../shared when present): the parser's readings, the trn.* keys with W&B's values, the run's
// runtimes summed and another's left out, impossible values dropped, hostile and broken documents refused
// with a reason, the metadata and the config neuron-monitor is given.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/trainium/neuron_monitor_config.hpp"
#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "collectors/trainium/trainium_emit.hpp"
#include "collectors/trainium/trainium_metadata.hpp"
#include "core/catalog.hpp"
#include "host/fake_tool.hpp"
#include "support/temp_dir.hpp"

namespace runmon::trainium {
namespace {

std::vector<std::string> FixtureLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Trn1Lines() {
  return FixtureLines(RUNMON_FIXTURES_DIR "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl");
}

std::map<std::string, double> Emit(const NeuronDocument& document, const std::function<bool(long)>& in_run,
                                   EmitLimits limits = {}) {
  MetricBatch batch;
  EmitNeuronDocument(document, in_run, limits, batch);
  std::map<std::string, double> values;
  for (const Metric& metric : batch.items()) {
    EXPECT_TRUE(values.emplace(metric.key, metric.value).second) << "twice: " << metric.key;
  }
  return values;
}

bool Pid1337(long pid) {
  return pid == 1337;
}

TEST(NeuronDocumentParser, ReadsTheFirstTrn1DocumentField) {
  const auto lines = Trn1Lines();
  ASSERT_EQ(lines.size(), 3u);
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(lines[0]);
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->runtimes.size(), 1u);
  const RuntimeReading& runtime = parsed->runtimes[0];
  EXPECT_EQ(runtime.pid, 1337);
  ASSERT_EQ(runtime.cores.size(), 2u);
  EXPECT_EQ(runtime.cores[0].core, 0);
  EXPECT_DOUBLE_EQ(*runtime.cores[0].utilization, 1.3631567613356375);
  EXPECT_EQ(*runtime.cores[0].memory.model_code, 101125344);
  EXPECT_EQ(*runtime.cores[0].memory.tensors, 943608);
  EXPECT_EQ(*runtime.cores[1].utilization, 0);
  EXPECT_EQ(*runtime.host_bytes, 610705408);
  EXPECT_EQ(*runtime.device_bytes, 102298328);
  EXPECT_EQ(*runtime.host_breakdown.application_memory, 609656832);
  EXPECT_EQ(*runtime.host_breakdown.dma_buffers, 1048576);
  EXPECT_DOUBLE_EQ(*runtime.vcpu_user, 19.26);
  EXPECT_DOUBLE_EQ(*runtime.vcpu_system, 3.95);
  EXPECT_DOUBLE_EQ(*parsed->system.vcpu.user, 16.99);
  EXPECT_DOUBLE_EQ(*parsed->system.vcpu.idle, 80.08);
  EXPECT_EQ(*parsed->system.context_switches, 84801);
  EXPECT_EQ(*parsed->system.memory_total_bytes, 33117732864.0);
  ASSERT_EQ(parsed->system.devices.size(), 1u);
  EXPECT_EQ(*parsed->system.devices[0].sram_ecc_corrected, 0);
  ASSERT_TRUE(parsed->hardware);
  EXPECT_EQ(*parsed->hardware->device_count, 1);
  EXPECT_EQ(*parsed->hardware->cores_per_device, 2);
  ASSERT_TRUE(parsed->instance);
  EXPECT_EQ(parsed->instance->instance_type, "trn1.2xlarge");
  EXPECT_EQ(parsed->instance->region, "us-west-2");
}

TEST(NeuronDocumentParser, TheSharedFixtureParsesTheSame) {
  const auto shared =
      FixtureLines(RUNMON_SHARED_DIR "/fixtures/trainium_neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl");
  if (shared.empty())
    GTEST_SKIP() << "no ../shared beside the checkout (the copy in tests/fixtures is tested)";
  EXPECT_EQ(shared, Trn1Lines());
}

TEST(EmitNeuronDocument, GivesWandbsKeysAndValuesForTheRunsRuntime) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(Trn1Lines()[0]);
  ASSERT_TRUE(parsed) << parsed.error();
  const auto values = Emit(*parsed, Pid1337);
  const std::map<std::string, double> expected = {
      {"trn.0.neuroncore_utilization", 1.3631567613356375},
      {"trn.1.neuroncore_utilization", 0},
      {"trn.host_total_memory_usage", 610705408},
      {"trn.neuron_device_total_memory_usage", 102298328},
      {"trn.host_total_memory_usage.application_memory", 609656832},
      {"trn.host_total_memory_usage.constants", 0},
      {"trn.host_total_memory_usage.dma_buffers", 1048576},
      {"trn.host_total_memory_usage.tensors", 0},
      {"trn.0.neuroncore_memory_usage.constants", 196608},
      {"trn.0.neuroncore_memory_usage.model_code", 101125344},
      {"trn.0.neuroncore_memory_usage.model_shared_scratchpad", 0},
      {"trn.0.neuroncore_memory_usage.runtime_memory", 0},
      {"trn.0.neuroncore_memory_usage.tensors", 943608},
      {"trn.1.neuroncore_memory_usage.constants", 0},
      {"trn.1.neuroncore_memory_usage.model_code", 32768},
      {"trn.1.neuroncore_memory_usage.model_shared_scratchpad", 0},
      {"trn.1.neuroncore_memory_usage.runtime_memory", 0},
      {"trn.1.neuroncore_memory_usage.tensors", 0},
      {"trn.runtime_vcpu_usage.user", 19.26},
      {"trn.runtime_vcpu_usage.system", 3.95},
      {"trn.system.vcpu_usage.user", 16.99},
      {"trn.system.vcpu_usage.nice", 0},
      {"trn.system.vcpu_usage.system", 2.94},
      {"trn.system.vcpu_usage.idle", 80.08},
      {"trn.system.vcpu_usage.io_wait", 0},
      {"trn.system.vcpu_usage.irq", 0},
      {"trn.system.vcpu_usage.soft_irq", 0},
      {"trn.system.context_switch_count", 84801},
      {"trn.system.memory_total_bytes", 33117732864.0},
      {"trn.system.memory_used_bytes", 11233579008.0},
      {"trn.system.swap_total_bytes", 0},
      {"trn.system.swap_used_bytes", 0},
      {"trn.device.0.mem_ecc_corrected", 0},
      {"trn.device.0.mem_ecc_uncorrected", 0},
      {"trn.device.0.sram_ecc_corrected", 0},
      {"trn.device.0.sram_ecc_uncorrected", 0}};
  EXPECT_EQ(values, expected);
  // Every key is the catalog's, and W&B's spelling of the host breakdown is accepted too.
  for (const auto& [key, value] : values) EXPECT_NE(FindMetricDefinition(key), nullptr) << key;
  EXPECT_NE(FindMetricDefinition("trn.host_memory_usage.dma_buffers"), nullptr);
}

TEST(EmitNeuronDocument, AnotherProcesssRuntimeGivesOnlyTheInstanceKeys) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(Trn1Lines()[1]);  // pid 16851
  ASSERT_TRUE(parsed) << parsed.error();
  const auto values = Emit(*parsed, Pid1337);
  for (const auto& [key, value] : values) {
    EXPECT_TRUE(key.starts_with("trn.system.") || key.starts_with("trn.device.")) << key;
  }
  EXPECT_EQ(values.at("trn.system.memory_used_bytes"), 11234598912.0);
}

TEST(EmitNeuronDocument, SumsEveryRuntimeOfTheRunCoreByCore) {
  // Two ranks of one job: each on its own core, with its own memory.
  const std::string document = R"({"neuron_runtime_data": [
    {"pid": 10, "report": {"neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": 40}}},
      "memory_used": {"neuron_runtime_used_bytes": {"host": 100, "neuron_device": 1000,
        "usage_breakdown": {"host": {"application_memory": 60, "constants": 10, "dma_buffers": 20, "tensors": 10},
          "neuroncore_memory_usage": {"0": {"constants": 1, "model_code": 2, "model_shared_scratchpad": 3,
            "runtime_memory": 4, "tensors": 5}}}}},
      "neuron_runtime_vcpu_usage": {"vcpu_usage": {"user": 10, "system": 1}}}},
    {"pid": 11, "report": {"neuroncore_counters": {"neuroncores_in_use": {"1": {"neuroncore_utilization": 60}}},
      "memory_used": {"neuron_runtime_used_bytes": {"host": 200, "neuron_device": 2000,
        "usage_breakdown": {"host": {"application_memory": 150, "constants": 20, "dma_buffers": 20, "tensors": 10},
          "neuroncore_memory_usage": {"1": {"constants": 10, "model_code": 20, "model_shared_scratchpad": 30,
            "runtime_memory": 40, "tensors": 50}}}}},
      "neuron_runtime_vcpu_usage": {"vcpu_usage": {"user": 20, "system": 2}}}},
    {"pid": 99, "report": {"neuroncore_counters": {"neuroncores_in_use": {"2": {"neuroncore_utilization": 99}}},
      "memory_used": {"neuron_runtime_used_bytes": {"host": 7777, "neuron_device": 7777}}}}]})";
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(document);
  ASSERT_TRUE(parsed) << parsed.error();
  const auto values = Emit(*parsed, [](long pid) { return pid == 10 || pid == 11; });
  EXPECT_EQ(values.at("trn.0.neuroncore_utilization"), 40);
  EXPECT_EQ(values.at("trn.1.neuroncore_utilization"), 60);
  EXPECT_FALSE(values.contains("trn.2.neuroncore_utilization"));  // pid 99 is not the run's
  EXPECT_EQ(values.at("trn.host_total_memory_usage"), 300);
  EXPECT_EQ(values.at("trn.neuron_device_total_memory_usage"), 3000);
  EXPECT_EQ(values.at("trn.host_total_memory_usage.application_memory"), 210);
  EXPECT_EQ(values.at("trn.0.neuroncore_memory_usage.tensors"), 5);
  EXPECT_EQ(values.at("trn.1.neuroncore_memory_usage.model_shared_scratchpad"), 30);
  EXPECT_EQ(values.at("trn.runtime_vcpu_usage.user"), 30);
  EXPECT_EQ(values.at("trn.runtime_vcpu_usage.system"), 3);
}

TEST(EmitNeuronDocument, LeavesOutWhatCannotBeTrue) {
  const std::string document = R"({"neuron_runtime_data": [
    {"pid": 10, "report": {"neuroncore_counters": {"neuroncores_in_use": {
        "0": {"neuroncore_utilization": 140}, "1": {"neuroncore_utilization": -1}, "2": {"neuroncore_utilization": 50}}},
      "memory_used": {"neuron_runtime_used_bytes": {"host": 5000, "neuron_device": 70000,
        "usage_breakdown": {"host": {"application_memory": 10.5, "constants": 1, "dma_buffers": -4, "tensors": 1},
          "neuroncore_memory_usage": {"2": {"constants": 40000, "model_code": 2}}}}},
      "neuron_runtime_vcpu_usage": {"vcpu_usage": {"user": 101, "system": 1}}}}],
    "system_data": {"memory_info": {"memory_total_bytes": 4000, "memory_used_bytes": 4001, "swap_total_bytes": 10,
        "swap_used_bytes": 11}, "vcpu_usage": {"average_usage": {"user": 100.5, "idle": 0}, "context_switch_count": 1.5},
      "neuron_hw_counters": {"neuron_devices": [{"neuron_device_index": 0, "mem_ecc_corrected": -2,
        "sram_ecc_uncorrected": 3}, {"neuron_device_index": 1.5, "mem_ecc_corrected": 1}]}},
    "neuron_hardware_info": {"neuron_device_count": 2, "neuron_device_memory_size": 32768}})";
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(document);
  ASSERT_TRUE(parsed) << parsed.error();
  const auto values = Emit(
      *parsed, [](long) { return true; }, EmitLimits{.host_memory_bytes = 4096});
  const std::map<std::string, double> expected = {
      {"trn.2.neuroncore_utilization", 50},       {"trn.host_total_memory_usage.constants", 1},
      {"trn.host_total_memory_usage.tensors", 1}, {"trn.2.neuroncore_memory_usage.model_code", 2},
      {"trn.runtime_vcpu_usage.system", 1},       {"trn.system.vcpu_usage.idle", 0},
      {"trn.system.memory_total_bytes", 4000},    {"trn.system.swap_total_bytes", 10},
      {"trn.device.0.sram_ecc_uncorrected", 3}};
  // 140 % and -1 %, host memory above RAM (5000 > 4096), device memory above two 32 KiB devices, a core's
  // constants above one device, fractional and negative bytes, used above total, a vCPU share over 100 %, a
  // fractional count and a device without a whole index: all left out.
  EXPECT_EQ(values, expected);
}

TEST(EmitNeuronDocument, AnEmptyRuntimeListGivesTheInstanceKeysOnly) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(
      R"({"neuron_runtime_data": [], "system_data": {"memory_info": {"memory_total_bytes": 8, "memory_used_bytes": 4}},
          "neuron_hardware_info": {"neuron_device_count": 1}})");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(Emit(*parsed, [](long) { return true; }),
            (std::map<std::string, double>{{"trn.system.memory_total_bytes", 8},
                                           {"trn.system.memory_used_bytes", 4}}));
}

TEST(NeuronDocumentParser, ValuesOfTheWrongTypeAreLeftOutAndTheRestRead) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(R"({"neuron_runtime_data": [
      {"pid": "12", "report": null},
      {"pid": 13, "report": {"execution_stats": {"latency_stats": {"total_latency": null, "device_latency": null}},
        "neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": "high"}, "x": {}, "-1": {},
          "1": {"neuroncore_utilization": 5, "flops": 1e12}}},
        "memory_used": {"neuron_runtime_used_bytes": {"host": null, "neuron_device": 7}}}},
      7, "runtime"],
    "system_data": {"memory_info": "n/a", "vcpu_usage": {"average_usage": [1, 2]}},
    "neuron_hardware_info": {"neuron_device_count": "one", "neuron_device_type": 3}})");
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->runtimes.size(), 1u);  // "12" is no usable pid: never the run's, not kept
  const RuntimeReading& runtime = parsed->runtimes[0];
  EXPECT_EQ(runtime.pid, 13);
  ASSERT_EQ(runtime.cores.size(), 1u);  // core 0 has no reading ("high")
  EXPECT_EQ(runtime.cores[0].core, 1);
  EXPECT_EQ(*runtime.cores[0].utilization, 5);
  EXPECT_FALSE(runtime.host_bytes);
  EXPECT_EQ(*runtime.device_bytes, 7);
  ASSERT_TRUE(parsed->hardware);
  EXPECT_FALSE(parsed->hardware->device_count);
  EXPECT_EQ(parsed->hardware->device_type, "");
}

// "neuroncores_in_use" with 100k keys (any index up to 99999) and as many repeats of one key: the cores an
// instance can have are kept, each once, the rest skipped; the document is read in one pass over its keys.
TEST(NeuronDocumentParser, ThousandsOfCoreKeysKeepOnlyTheCoresAnInstanceCanHave) {
  std::string in_use;
  for (int core = 0; core < 100'000; ++core) {
    in_use += fmt::format(R"("{}": {{"neuroncore_utilization": 1}},)", core);
  }
  for (int repeat = 0; repeat < 100'000; ++repeat) in_use += R"("7": {"neuroncore_utilization": 2},)";
  in_use.pop_back();
  const std::string document = R"({"neuron_runtime_data": [{"pid": 1, "report": {"neuroncore_counters": {)"
                               R"("neuroncores_in_use": {)" +
                               in_use + "}}}}]}";
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(document);
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->runtimes.size(), 1u);
  const std::vector<CoreReading>& cores = parsed->runtimes[0].cores;
  ASSERT_EQ(cores.size(), static_cast<size_t>(kMaxCoreIndex + 1));
  EXPECT_EQ(cores.front().core, 0);
  EXPECT_EQ(cores.back().core, kMaxCoreIndex);
  EXPECT_EQ(*cores[7].utilization, 2);  // the last of the repeats
}

// A repeated section or device is read as JSON readers take a repeated key, the last one counting: never
// a runtime summed twice nor a device's key emitted twice. -0 is 0.
TEST(NeuronDocumentParser, RepeatedSectionsAndDevicesCountOnceTheLastOne) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(R"({
    "neuron_runtime_data": [{"pid": 1, "report": {"memory_used": {"neuron_runtime_used_bytes": {"host": 100}}}}],
    "system_data": {"neuron_hw_counters": {"neuron_devices": [{"neuron_device_index": 0, "mem_ecc_corrected": 1}]}},
    "neuron_runtime_data": [{"pid": 1, "report": {"memory_used": {"neuron_runtime_used_bytes": {"host": 200}},
      "neuroncore_counters": {"neuroncores_in_use": {"0": {"neuroncore_utilization": -0}}}}}],
    "system_data": {"neuron_hw_counters": {"neuron_devices": [{"neuron_device_index": 0, "mem_ecc_corrected": 2},
      {"neuron_device_index": 1, "mem_ecc_corrected": 3}, {"neuron_device_index": 0, "mem_ecc_corrected": 4}]},
      "vcpu_usage": {"average_usage": {"idle": -0}}}})");
  ASSERT_TRUE(parsed) << parsed.error();
  const auto values = Emit(*parsed, [](long) { return true; });
  EXPECT_EQ(values, (std::map<std::string, double>{{"trn.0.neuroncore_utilization", 0},
                                                   {"trn.host_total_memory_usage", 200},
                                                   {"trn.device.0.mem_ecc_corrected", 4},
                                                   {"trn.device.1.mem_ecc_corrected", 3},
                                                   {"trn.system.vcpu_usage.idle", 0}}));
  EXPECT_FALSE(std::signbit(values.at("trn.system.vcpu_usage.idle")));
}

// What one document may make the parser hold is bounded by what can be true, not by the line's length:
// runtime entries without a pid (never the run's) and cores without a reading are not kept, and a runtime
// holds at least one core, so there are no more runtimes than cores (kMaxCoreIndex + 1).
TEST(NeuronDocumentParser, KeepsOnlyRuntimesWithAPidAndCoresWithAReading) {
  std::string runtimes = R"({}, {"pid": "7"}, {"pid": 0, "report": {}},)";
  for (int pid = 1; pid <= 3000; ++pid) {
    runtimes += fmt::format(R"({{"pid": {}, "report": {{"neuroncore_counters": {{"neuroncores_in_use": )"
                            R"({{"0": {{}}, "1": {{"neuroncore_utilization": 5}}}}}}}}}},)",
                            pid);
  }
  runtimes.pop_back();
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(R"({"neuron_runtime_data": [)" + runtimes + "]}");
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->runtimes.size(), static_cast<size_t>(kMaxCoreIndex + 1));
  EXPECT_EQ(parsed->runtimes.front().pid, 1);
  ASSERT_EQ(parsed->runtimes.front().cores.size(), 1u);
  EXPECT_EQ(parsed->runtimes.front().cores[0].core, 1);
  EXPECT_EQ(*parsed->runtimes.front().cores[0].utilization, 5);
}

TEST(NeuronDocumentParser, RefusesWhatIsNotADocumentWithAReason) {
  NeuronDocumentParser parser;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"neuron-monitor: starting", "not a JSON object"},
      {R"({"neuron_runtime_data": [{"pid": 1, "report": {)", "not JSON"},
      {R"({"neuron_runtime_data": []} {"again": 1})", "not JSON"},
      {R"([1, 2, 3])", "not a JSON object"},
      {R"({"period": 1})", "not a neuron-monitor document (no neuron_runtime_data)"},
      {std::string(2000, '['), "not a JSON object"},
      {"{" + std::string(4000, ' ') + "\"neuron_runtime_data\": " + std::string(3000, '[') + "}", "not JSON"},
      {"{\"neuron_runtime_data\": [], \"x\": \"\xff\xfe\"}", "not JSON"}};
  for (const auto& [line, reason] : cases) {
    auto parsed = parser.Parse(line);
    ASSERT_FALSE(parsed) << line;
    EXPECT_TRUE(parsed.error().starts_with(reason)) << parsed.error() << " for " << line.substr(0, 40);
  }
  // The parser is fine after every refusal.
  EXPECT_TRUE(parser.Parse(Trn1Lines()[2]));
}

TEST(NeuronDocumentParser, ReadsTheSyntheticTrn1_32xlargeDocument) {
  const auto lines = FixtureLines(RUNMON_FIXTURES_DIR "/neuron_monitor/neuron_monitor_trn1.32xlarge.json");
  ASSERT_EQ(lines.size(), 1u);
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(lines[0]);
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->runtimes.size(), 32u);
  EXPECT_EQ(parsed->system.devices.size(), 16u);
  const auto values = Emit(*parsed, [](long) { return true; });
  for (int core = 0; core < 32; ++core) {
    EXPECT_TRUE(values.contains("trn." + std::to_string(core) + ".neuroncore_utilization")) << core;
  }
}

TEST(DescribeTrainium, GivesWandbsFieldsFilledAndTheInstanceType) {
  NeuronDocumentParser parser;
  auto parsed = parser.Parse(Trn1Lines()[0]);
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*DescribeTrainium(*parsed),
            nlohmann::json::parse(R"({"trainium": {"name": "Trainium", "vendor": "AWS",
      "neuron_device_count": 1, "neuroncore_per_device_count": 2, "instance_type": "trn1.2xlarge"}})"));
  auto trn2 =
      parser.Parse(R"({"neuron_runtime_data": [], "neuron_hardware_info": {"neuron_device_type": "trainium2",
      "neuron_device_version": "v4", "neuroncore_version": "v3d", "neuron_device_count": 16,
      "neuron_device_memory_size": 103079215104, "neuroncore_per_device_count": 4, "logical_neuroncore_config": 2}})");
  ASSERT_TRUE(trn2) << trn2.error();
  EXPECT_EQ(*DescribeTrainium(*trn2),
            nlohmann::json::parse(R"({"trainium": {"name": "Trainium", "vendor": "AWS",
      "neuron_device_count": 16, "neuroncore_per_device_count": 4, "neuron_device_type": "trainium2",
      "neuron_device_version": "v4", "neuroncore_version": "v3d", "neuron_device_memory_size": 103079215104,
      "logical_neuroncore_config": "2"}})"));
  auto no_hardware = parser.Parse(R"({"neuron_runtime_data": []})");
  ASSERT_TRUE(no_hardware);
  EXPECT_FALSE(DescribeTrainium(*no_hardware));
}

TEST(NeuronMonitorConfig, FollowsTheIntervalInWholeSecondsAndAtLeastOne) {
  EXPECT_EQ(NeuronMonitorPeriodSeconds(15), 15);
  EXPECT_EQ(NeuronMonitorPeriodSeconds(2.5), 2);
  EXPECT_EQ(NeuronMonitorPeriodSeconds(0.1), 1);
  EXPECT_EQ(NeuronMonitorPeriodSeconds(0), 1);
  const auto config = nlohmann::json::parse(NeuronMonitorConfigText(0.5));
  EXPECT_EQ(config, nlohmann::json::parse(R"({"period": "1s",
      "neuron_runtimes": [{"tag_filter": ".*", "metrics": [{"type": "neuroncore_counters"}, {"type": "memory_used"},
        {"type": "neuron_runtime_vcpu_usage"}]}],
      "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}, {"type": "neuron_hw_counters"}]})"));
  EXPECT_EQ(nlohmann::json::parse(NeuronMonitorConfigText(15))["period"], "15s");
}

TEST(PrivateConfigFile, IsOnlyTheOwnersAndGoneWithTheCollector) {
  test::TempDir dir;
  std::filesystem::path path, path_b;
  {
    auto file = PrivateConfigFile::Create(dir.path(), "{\"period\": \"1s\"}\n");
    ASSERT_TRUE(file) << file.error();
    auto other = PrivateConfigFile::Create(dir.path(), "{}\n");  // a concurrent run gets its own
    ASSERT_TRUE(other) << other.error();
    path = file->path();
    path_b = other->path();
    EXPECT_NE(path, path_b);
    EXPECT_EQ(test::ReadFile(path), "{\"period\": \"1s\"}\n");
    namespace fs = std::filesystem;
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(fs::status(path.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  EXPECT_FALSE(std::filesystem::exists(path.parent_path()));
  EXPECT_FALSE(std::filesystem::exists(path_b.parent_path()));
  auto nowhere = PrivateConfigFile::Create(dir.path() / "missing", "{}");
  ASSERT_FALSE(nowhere);
  EXPECT_TRUE(nowhere.error().starts_with("cannot make a directory in ")) << nowhere.error();
}

}  // namespace
}  // namespace runmon::trainium
