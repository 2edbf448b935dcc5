// The tpu.* conversions (collectors/tpu/tpu_emit.hpp): W&B's SDK value strings and gRPC responses
// (tests/fixtures/tpu, copies of W&B's test mocks) give W&B's keys, except where runmon differs on
// purpose (device d of the service is tpu.d; kvlist labels are read; impossible values are left out).
#include "collectors/tpu/tpu_emit.hpp"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tpu_reading_json.hpp"

namespace runmon::tpu {
namespace {

namespace keys = tpu_metrics;

nlohmann::json Fixture(const std::string& name) {
  std::ifstream in(std::string(RUNMON_FIXTURES_DIR) + "/tpu/" + name);
  return nlohmann::json::parse(in);
}

const MetricSpec& SpecFor(const MetricDescriptor& key) {
  for (const MetricSpec& spec : MetricSpecs()) {
    if (spec.key == &key) return spec;
  }
  throw std::runtime_error("no spec");
}

const MetricSpec& SpecFor(const keys::StatDescriptors& stats) {
  for (const MetricSpec& spec : MetricSpecs()) {
    if (spec.stats == &stats) return spec;
  }
  throw std::runtime_error("no spec");
}

std::map<std::string, double> Keys(const TpuSample& sample) {
  MetricBatch batch;
  sample.AppendTo(batch);
  std::map<std::string, double> out;
  for (const Metric& metric : batch.items()) out[metric.key] = metric.value;
  return out;
}

std::map<std::string, double> Expected(const nlohmann::json& expected) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : expected.items()) out[key] = value.get<double>();
  return out;
}

SdkMetricValues SdkValues(const nlohmann::json& example) {
  return {.description = example.value("description", ""),
          .values = example.at("values").get<std::vector<std::string>>()};
}

TEST(TpuRegistry, HasEveryMetricOfTheRegistryOnce) {
  EXPECT_EQ(MetricSpecs().size(), 18u);
  std::set<std::string_view> service_names;
  for (const MetricSpec& spec : MetricSpecs()) {
    EXPECT_TRUE(!spec.sdk_names.empty() || !spec.service_name.empty());
    EXPECT_NE(spec.key == nullptr, spec.stats == nullptr);
    if (!spec.service_name.empty()) EXPECT_TRUE(service_names.insert(spec.service_name).second);
  }
  // The SDK-only ones (B §7.3: no gRPC name).
  EXPECT_TRUE(SpecFor(keys::kTensorcoreUtilization).service_name.empty());
  EXPECT_TRUE(SpecFor(keys::kIciLinkHealth).service_name.empty());
  EXPECT_TRUE(SpecFor(keys::kThrottleScore).service_name.empty());
  EXPECT_TRUE(SpecFor(keys::kRuntimeHbmUtilization).sdk_names.empty());
}

// --- the SDK's strings -----------------------------------------------------------------------------------

struct SdkCase {
  const char* example;
  const MetricSpec& spec;
  unsigned fanout;
};

TEST(TpuSdkValues, GiveTheKeysOfWandbsExamples) {
  const nlohmann::json examples = Fixture("libtpu_sdk_value_examples.json");
  const SdkCase cases[] = {
      {"tensorcore_util", SpecFor(keys::kTensorcoreUtilization), 1},
      {"duty_cycle_pct_fanout1", SpecFor(keys::kDutyCycle), 1},
      {"duty_cycle_pct_fanout2", SpecFor(keys::kDutyCycle), 2},
      {"hlo_queue_size", SpecFor(keys::kHloQueueSize), 1},
      {"hlo_execution_timing_labeled_dist", SpecFor(keys::kHloExecTiming), 1},
      {"grpc_tcp_min_rtt_flat_dist_single_line", SpecFor(keys::kGrpcTcpMinRtt), 1},
      {"grpc_tcp_delivery_rate_flat_dist_multiline", SpecFor(keys::kGrpcTcpDeliveryRate), 1},
  };
  for (const SdkCase& one : cases) {
    SCOPED_TRACE(one.example);
    const nlohmann::json& example = examples.at(one.example);
    TpuSample sample;
    const size_t added =
        EmitSdkValues(one.spec, SdkValues(example), DeviceLayout{.duty_cycle_fanout = one.fanout}, sample);
    EXPECT_EQ(Keys(sample), Expected(example.at("expected")));
    EXPECT_EQ(added, example.at("expected").size());
  }
}

TEST(TpuSdkValues, ColonKeyedLinesWithoutAColonAreItems) {
  TpuSample sample;
  EmitSdkValues(SpecFor(keys::kHloQueueSize), {.values = {"42", "tensor_core-1: 7", "bad: x"}}, {}, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.hloQueueSize.item_0", 42},
                                                         {"tpu.hloQueueSize.tensor_core_1", 7}}));
}

TEST(TpuSdkValues, StatNamesComeFromTheCountAndTheDescription) {
  using keys::Stat;
  EXPECT_EQ(StatsForCount("", 5).size(), 5u);
  EXPECT_EQ(StatsForCount("", 5)[3], Stat::kP95);
  EXPECT_EQ(StatsForCount("mean, p50, p90, P99, p999", 5)[3], Stat::kP99);
  EXPECT_EQ(StatsForCount("p95 and p99", 5)[3], Stat::kP95);
  EXPECT_EQ(StatsForCount("", 4)[0], Stat::kP50);
  EXPECT_EQ(StatsForCount("", 6).size(), 6u);
  // W&B names other counts stat0.., keys no registry entry names: left out.
  EXPECT_TRUE(StatsForCount("", 3).empty());
  TpuSample sample;
  EXPECT_EQ(EmitSdkValues(SpecFor(keys::kHloExecTiming), {.values = {"main, 1, 2, 3"}}, {}, sample), 0u);
}

TEST(TpuSdkValues, CsvFieldsAreTrimmedOfBracketsAndQuotes) {
  TpuSample sample;
  EmitSdkValues(SpecFor(keys::kBufferTransferLatency),
                {.values = {"['8MB+', \"1.5\", 2, 3, 4, 5]", "[]", "onlylabel", " 4MB+ , x, 2, 3, 4, 5"}}, {},
                sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.bufferTransferLatency.8mb_plus.meanUs", 1.5},
                                                         {"tpu.bufferTransferLatency.8mb_plus.p50Us", 2},
                                                         {"tpu.bufferTransferLatency.8mb_plus.p90Us", 3},
                                                         {"tpu.bufferTransferLatency.8mb_plus.p95Us", 4},
                                                         {"tpu.bufferTransferLatency.8mb_plus.p999Us", 5},
                                                         {"tpu.bufferTransferLatency.4mb_plus.p50Us", 2},
                                                         {"tpu.bufferTransferLatency.4mb_plus.p90Us", 3},
                                                         {"tpu.bufferTransferLatency.4mb_plus.p95Us", 4},
                                                         {"tpu.bufferTransferLatency.4mb_plus.p999Us", 5}}));
}

TEST(TpuSdkValues, ImpossibleValuesAreLeftOut) {
  TpuSample sample;
  EmitSdkValues(SpecFor(keys::kTensorcoreUtilization), {.values = {"101", "-1", "nan", "50", "inf", "12"}},
                DeviceLayout{.device_count = 5}, sample);
  // Device 5 is beyond the host's five devices.
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.3.tensorcoreUtilization", 50}}));
  TpuSample latencies;
  EmitSdkValues(SpecFor(keys::kGrpcTcpMinRtt), {.values = {"-1, 2, 3, 4, 5"}}, {}, latencies);
  EXPECT_EQ(Keys(latencies).count("tpu.grpcTcpMinRtt.meanUs"), 0u);
  EXPECT_EQ(Keys(latencies).size(), 4u);
}

TEST(TpuSdkValues, HbmUsageAboveTheTotalIsLeftOut) {
  TpuSample sample;
  EmitSdkValues(SpecFor(keys::kHbmCapacityTotal), {.values = {"100", "100"}}, {}, sample);
  EmitSdkValues(SpecFor(keys::kHbmCapacityUsage), {.values = {"25", "101"}}, {}, sample);
  sample.AddHbmMemoryUsage();
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.0.hbmCapacityTotal", 100},
                                                         {"tpu.0.hbmCapacityUsage", 25},
                                                         {"tpu.0.hbmMemoryUsage", 25},
                                                         {"tpu.1.hbmCapacityTotal", 100}}));
}

// --- labels -----------------------------------------------------------------------------------------------

TEST(TpuLabels, AreSanitisedAsWandbDoes) {
  EXPECT_EQ(SanitizeLabel("8MB+"), "8mb_plus");
  EXPECT_EQ(SanitizeLabel("  Program Main  "), "program_main");
  EXPECT_EQ(SanitizeLabel("a+b"), "a_plus_b");
  EXPECT_EQ(SanitizeLabel("++"), "plus_plus");
  EXPECT_EQ(SanitizeLabel("99%"), "99pct");
  EXPECT_EQ(SanitizeLabel("a % b"), "a_pct_b");
  EXPECT_EQ(SanitizeLabel("tensor_core-0"), "tensor_core_0");
  EXPECT_EQ(SanitizeLabel("__x__"), "x");
  EXPECT_EQ(SanitizeLabel("caf\xc3\xa9 1"), "caf_1");
  EXPECT_EQ(SanitizeLabel(""), "unknown");
  EXPECT_EQ(SanitizeLabel("---"), "unknown");
}

// --- distributions ----------------------------------------------------------------------------------------

TEST(TpuDistributions, PercentilesInterpolateInsideTheBuckets) {
  const nlohmann::json examples = Fixture("libtpu_sdk_value_examples.json");
  for (const char* name : {"distribution_exponential", "distribution_linear"}) {
    SCOPED_TRACE(name);
    const DistributionReading distribution = test::DistributionFromJson(examples.at(name));
    const auto p50 = DistributionPercentile(distribution, 0.5);
    ASSERT_TRUE(p50.has_value());
    EXPECT_DOUBLE_EQ(*p50, examples.at(name).at("expected_p50").get<double>());
  }
  // Every percentile of W&B's two examples, worked out by hand with its rule (bucket i spans bound i-1 to
  // bound i; the buckets past the last bound are the last bound).
  const DistributionReading exponential = test::DistributionFromJson(examples.at("distribution_exponential"));
  for (const auto& [quantile, expected] : std::vector<std::pair<double, double>>{
           {0.9, 160}, {0.95, 160}, {0.99, 160}, {0.999, 160}, {0.05, 30}}) {
    EXPECT_DOUBLE_EQ(*DistributionPercentile(exponential, quantile), expected) << quantile;
  }
  const DistributionReading linear = test::DistributionFromJson(examples.at("distribution_linear"));
  for (const auto& [quantile, expected] :
       std::vector<std::pair<double, double>>{{0.05, 5}, {0.3, 14}, {0.9, 30}, {0.95, 30}, {0.999, 30}}) {
    EXPECT_DOUBLE_EQ(*DistributionPercentile(linear, quantile), expected) << quantile;
  }
  DistributionReading explicit_bounds{.count = 4,
                                      .buckets = {.kind = BucketKind::kExplicit, .bounds = {1, 2, 4}},
                                      .bucket_counts = {0, 2, 2, 0}};
  EXPECT_DOUBLE_EQ(*DistributionPercentile(explicit_bounds, 0.5), 2.0);
  // Past the last bound: the last bound.
  DistributionReading overflow{.count = 1,
                               .buckets = {.kind = BucketKind::kExplicit, .bounds = {1, 2}},
                               .bucket_counts = {0, 0, 0, 1}};
  EXPECT_DOUBLE_EQ(*DistributionPercentile(overflow, 0.99), 2.0);
}

TEST(TpuDistributions, WithoutBucketsOrSamplesHaveNoPercentile) {
  EXPECT_FALSE(DistributionPercentile({}, 0.5));
  EXPECT_FALSE(
      DistributionPercentile({.buckets = {.kind = BucketKind::kLinear, .num_finite_buckets = 2, .width = 1},
                              .bucket_counts = {0, 0, 0}},
                             0.5));
  EXPECT_FALSE(
      DistributionPercentile({.buckets = {.kind = BucketKind::kLinear, .num_finite_buckets = 2, .width = 1},
                              .bucket_counts = {1, -5, 3}},
                             0.5));
  EXPECT_FALSE(DistributionPercentile({.bucket_counts = {1, 2}}, 0.5));  // no layout
}

// --- the service's readings -------------------------------------------------------------------------------

size_t EmitResponses(const nlohmann::json& responses, const DeviceLayout& layout, TpuSample& sample) {
  size_t added = 0;
  for (const MetricSpec& spec : MetricSpecs()) {
    if (spec.service_name.empty() || !responses.contains(spec.service_name)) continue;
    const RuntimeMetricReading reading = test::ReadingFromJson(responses.at(std::string(spec.service_name)));
    const PortReading readings[] = {{.reading = &reading}};
    added += EmitServiceReadings(spec, readings, layout, sample);
  }
  sample.AddHbmMemoryUsage();
  return added;
}

TEST(TpuServiceReadings, GiveTheKeysOfWandbsMocks) {
  const nlohmann::json cases = Fixture("grpc_runtime_metric_mock_responses.json");
  for (const auto& [name, one] : cases.items()) {
    if (name.starts_with("_")) continue;
    SCOPED_TRACE(name);
    DeviceLayout layout;
    if (one.contains("chip")) {
      const nlohmann::json& chip = one.at("chip");
      layout = {.duty_cycle_fanout = chip.at("duty_cycle_fanout").get<unsigned>(),
                .device_count =
                    chip.at("chip_count").get<unsigned>() * chip.at("devices_per_chip").get<unsigned>()};
    }
    TpuSample sample;
    EmitResponses(one.at("responses"), layout, sample);
    std::map<std::string, double> expected;
    if (one.contains("expected_current_xpu_keys")) {
      expected = Expected(one.at("expected_current_xpu_keys"));
    } else {
      // Only the legacy Go collector's keys (tpu.42.*, tpu.46.* on a two-chip host): runmon numbers ids
      // beyond the host's by their order, devices 0 and 1.
      ASSERT_EQ(name, "v4_non_sequential_device_ids");
      expected = {{"tpu.0.hbmCapacityTotal", 16e9}, {"tpu.0.hbmCapacityUsage", 8e9},
                  {"tpu.0.hbmMemoryUsage", 50},     {"tpu.0.dutyCycle", 75},
                  {"tpu.1.hbmCapacityTotal", 16e9}, {"tpu.1.hbmCapacityUsage", 4e9},
                  {"tpu.1.hbmMemoryUsage", 25},     {"tpu.1.dutyCycle", 80}};
    }
    if (name == "v2_two_devices_one_chip") {
      // W&B's fallback moves device 1's HBM gauges to tpu.2 (device_id x fan-out); runmon keeps tpu.1.
      for (const char* leaf : {"hbmCapacityTotal", "hbmCapacityUsage", "hbmMemoryUsage"}) {
        const auto moved = expected.extract(fmt::format("tpu.2.{}", leaf));
        ASSERT_FALSE(moved.empty());
        expected[fmt::format("tpu.1.{}", leaf)] = moved.mapped();
      }
    }
    EXPECT_EQ(Keys(sample), expected);
  }
}

MetricReading Gauge(std::optional<int64_t> device, double value) {
  MetricReading reading;
  reading.attribute.int_value = device;
  reading.measure = value;
  return reading;
}

TEST(TpuServiceReadings, AGaugeWithoutADeviceIsLeftOutNotDeviceZero) {
  RuntimeMetricReading reading{.metrics = {Gauge(std::nullopt, 40), Gauge(2, 60)}};
  MetricReading kvlist;
  kvlist.attribute.entries = {{.key = "device_ordinal", .string_value = "3"}};
  kvlist.measure = 70.0;
  reading.metrics.push_back(kvlist);
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kRuntimeHbmUtilization), readings, {}, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.2.runtimeHbmUtilization", 60},
                                                         {"tpu.3.runtimeHbmUtilization", 70}}));
}

// Each port's readings of one gauge, with the offsets DeviceOffsets gives from what each reported.
std::vector<PortReading> WithOffsets(const MetricSpec& spec, const std::vector<RuntimeMetricReading>& ports,
                                     const DeviceLayout& layout) {
  std::vector<std::set<uint64_t>> devices;
  for (const auto& port : ports) devices.push_back(ReportedDevices(spec, port, layout));
  const std::vector<uint64_t> offsets = DeviceOffsets(devices);
  std::vector<PortReading> readings;
  for (size_t i = 0; i < ports.size(); ++i)
    readings.push_back({.reading = &ports[i], .device_offset = offsets[i]});
  return readings;
}

TEST(TpuServiceReadings, ProcessesReportingTheSameDeviceIdsAreNumberedAfterOneAnother) {
  // Four PyTorch/XLA processes, each seeing its chip as device 0.
  std::vector<RuntimeMetricReading> ports(4, RuntimeMetricReading{.metrics = {Gauge(0, 10)}});
  for (size_t i = 0; i < ports.size(); ++i)
    std::get<double>(ports[i].metrics[0].measure) = 10.0 * static_cast<double>(i + 1);
  const DeviceLayout layout{.device_count = 4};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kDutyCycle), WithOffsets(SpecFor(keys::kDutyCycle), ports, layout),
                      layout, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.0.dutyCycle", 10},
                                                         {"tpu.1.dutyCycle", 20},
                                                         {"tpu.2.dutyCycle", 30},
                                                         {"tpu.3.dutyCycle", 40}}));
  // Processes that report host-wide ids keep them.
  const std::vector<RuntimeMetricReading> global = {
      RuntimeMetricReading{.metrics = {Gauge(0, 1), Gauge(1, 2)}},
      RuntimeMetricReading{.metrics = {Gauge(2, 3), Gauge(3, 4)}}};
  TpuSample host_wide;
  EmitServiceReadings(SpecFor(keys::kDutyCycle), WithOffsets(SpecFor(keys::kDutyCycle), global, layout),
                      layout, host_wide);
  EXPECT_EQ(Keys(host_wide).at("tpu.3.dutyCycle"), 4);
  EXPECT_EQ(Keys(host_wide).size(), 4u);
}

TEST(TpuServiceReadings, DeviceOffsetsFollowWhatEachPortReported) {
  using Devices = std::vector<std::set<uint64_t>>;
  EXPECT_EQ(DeviceOffsets(Devices{{0}, {0}, {0}}), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(DeviceOffsets(Devices{{0, 1}, {2, 3}}), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(DeviceOffsets(Devices{{0, 1}, {0, 1}}), (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(DeviceOffsets(Devices{{}, {0}}), (std::vector<uint64_t>{0, 0}));
  EXPECT_TRUE(DeviceOffsets({}).empty());
  // A chip's duty cycle stands for its devices (v2/v3: two).
  const RuntimeMetricReading chip{.metrics = {Gauge(1, 50)}};
  EXPECT_EQ(ReportedDevices(SpecFor(keys::kDutyCycle), chip, DeviceLayout{.duty_cycle_fanout = 2}),
            (std::set<uint64_t>{2, 3}));
  EXPECT_TRUE(ReportedDevices(SpecFor(keys::kHloQueueSize), chip, {}).empty());
}

TEST(TpuServiceReadings, AnHbmTotalNoDeviceCanHaveIsLeftOut) {
  const RuntimeMetricReading reading{.metrics = {Gauge(0, 16e9), Gauge(1, 1e15)}};
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kHbmCapacityTotal), readings,
                      DeviceLayout{.max_device_hbm_bytes = 32.0 * (1 << 30)}, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.0.hbmCapacityTotal", 16e9}}));
}

MetricReading LabelledDistribution(std::vector<AttributeEntry> entries, DistributionReading distribution) {
  MetricReading reading;
  reading.attribute.entries = std::move(entries);
  reading.measure = std::move(distribution);
  return reading;
}

const DistributionReading kLinear{
    .count = 100,
    .mean = 15,
    .buckets = {.kind = BucketKind::kLinear, .num_finite_buckets = 3, .width = 10},
    .bucket_counts = {10, 50, 30, 10}};

TEST(TpuServiceReadings, DistributionsAreLabelledFromTheirKvlist) {
  RuntimeMetricReading reading{
      .metrics = {LabelledDistribution({{.key = "buffer-size", .string_value = "8MB+"}}, kLinear),
                  LabelledDistribution({{.key = "other", .string_value = "1MB+"}}, kLinear),
                  LabelledDistribution({}, kLinear)}};
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kBufferTransferLatency), readings, {}, sample);
  const auto out = Keys(sample);
  EXPECT_EQ(out.at("tpu.bufferTransferLatency.8mb_plus.meanUs"), 15);
  EXPECT_DOUBLE_EQ(out.at("tpu.bufferTransferLatency.8mb_plus.p50Us"), 18);
  EXPECT_TRUE(out.count("tpu.bufferTransferLatency.8mb_plus.p99Us"));
  EXPECT_TRUE(out.count("tpu.bufferTransferLatency.1mb_plus.p90Us"));
  EXPECT_TRUE(out.count("tpu.bufferTransferLatency.item_2.p95Us"));
  EXPECT_EQ(out.size(), 18u);  // three labels, six stats each
}

TEST(TpuServiceReadings, HloMetricsAreLabelledByTheirCore) {
  MetricReading as_string;
  as_string.attribute.entries = {{.key = "device_ordinal", .string_value = "0"},
                                 {.key = "core_type", .string_value = "tensor_core"}};
  as_string.measure = 3.0;
  MetricReading as_int;
  as_int.attribute.entries = {{.key = "device_ordinal", .int_value = 1}};
  as_int.measure = 7.0;
  RuntimeMetricReading reading{.metrics = {as_string, as_int}};
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kHloQueueSize), readings, {}, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.hloQueueSize.device_1", 7},
                                                         {"tpu.hloQueueSize.tensor_core_0", 3}}));
}

TEST(TpuServiceReadings, SeriesOfOneLabelAreMergedWhenTheirBucketsAgree) {
  DistributionReading other = kLinear;
  other.mean = 25;
  RuntimeMetricReading first{
      .metrics = {LabelledDistribution({{.key = "buffer-size", .string_value = "8MB+"}}, kLinear)}};
  RuntimeMetricReading second{
      .metrics = {LabelledDistribution({{.key = "buffer-size", .string_value = "8MB+"}}, other)}};
  const PortReading readings[] = {{.reading = &first}, {.reading = &second}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kBufferTransferLatency), readings, {}, sample);
  EXPECT_DOUBLE_EQ(Keys(sample).at("tpu.bufferTransferLatency.8mb_plus.meanUs"), 20);
  EXPECT_DOUBLE_EQ(Keys(sample).at("tpu.bufferTransferLatency.8mb_plus.p50Us"), 18);
}

TEST(TpuServiceReadings, SummariesGiveTheirMeanAndQuantiles) {
  MetricReading summary;
  summary.measure =
      SummaryReading{.sample_count = 4,
                     .sample_sum = 40,
                     .quantiles = {{0.5, 9}, {0.9, 12}, {0.95, 13}, {0.99, 15}, {0.999, 16}, {0.25, 1}}};
  RuntimeMetricReading reading{.metrics = {summary}};
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EmitServiceReadings(SpecFor(keys::kGrpcTcpMinRtt), readings, {}, sample);
  EXPECT_EQ(Keys(sample), (std::map<std::string, double>{{"tpu.grpcTcpMinRtt.meanUs", 10},
                                                         {"tpu.grpcTcpMinRtt.p50Us", 9},
                                                         {"tpu.grpcTcpMinRtt.p90Us", 12},
                                                         {"tpu.grpcTcpMinRtt.p95Us", 13},
                                                         {"tpu.grpcTcpMinRtt.p99Us", 15},
                                                         {"tpu.grpcTcpMinRtt.p999Us", 16}}));
}

TEST(TpuServiceReadings, ASummaryOfNoSamplesGivesNothing) {
  MetricReading summary;
  summary.measure = SummaryReading{.sample_count = 0, .sample_sum = 0, .quantiles = {{0.5, 0}, {0.9, 0}}};
  RuntimeMetricReading reading{.metrics = {summary}};
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EXPECT_EQ(EmitServiceReadings(SpecFor(keys::kGrpcTcpMinRtt), readings, {}, sample), 0u);
}

TEST(TpuServiceReadings, LabelsAreBoundedInNumberAndLength) {
  // A hostile service (any local process can listen on 8431 while no workload does): 10,000 labels.
  RuntimeMetricReading reading;
  for (int i = 0; i < 10000; ++i) {
    MetricReading metric;
    metric.attribute.string_value = "label" + std::to_string(i);
    metric.measure = 1.0;
    reading.metrics.push_back(metric);
  }
  MetricReading long_label;
  long_label.attribute.string_value = std::string(kMaxLabelBytes + 1, 'x');
  long_label.measure = 1.0;
  reading.metrics.insert(reading.metrics.begin(), long_label);
  const PortReading readings[] = {{.reading = &reading}};
  TpuSample sample;
  EXPECT_EQ(EmitServiceReadings(SpecFor(keys::kHloQueueSize), readings, {}, sample), kMaxLabelsPerMetric);
  EXPECT_EQ(sample.dropped_labels(), 10001 - kMaxLabelsPerMetric);
  EXPECT_FALSE(Keys(sample).count("tpu.hloQueueSize." + std::string(kMaxLabelBytes + 1, 'x')));
  // The same bound for distributions and the SDK's lines.
  RuntimeMetricReading distributions;
  for (int i = 0; i < 1000; ++i) {
    distributions.metrics.push_back(
        LabelledDistribution({{.key = "buffer-size", .string_value = std::to_string(i) + "MB+"}}, kLinear));
  }
  const PortReading many[] = {{.reading = &distributions}};
  TpuSample distribution_sample;
  EmitServiceReadings(SpecFor(keys::kBufferTransferLatency), many, {}, distribution_sample);
  EXPECT_EQ(distribution_sample.size(), kMaxLabelsPerMetric * 6);
  SdkMetricValues lines;
  for (int i = 0; i < 1000; ++i) lines.values.push_back(fmt::format("l{}, 1, 2, 3, 4, 5", i));
  TpuSample sdk_sample;
  EmitSdkValues(SpecFor(keys::kHloExecTiming), lines, {}, sdk_sample);
  EXPECT_EQ(sdk_sample.size(), kMaxLabelsPerMetric * 5);
  EXPECT_GT(sdk_sample.dropped_labels(), 0u);
}

TEST(TpuServiceReadings, EmptyOrOtherMeasuresGiveNothing) {
  MetricReading counter;  // a counter, a string gauge: std::monostate
  RuntimeMetricReading reading{.metrics = {counter}};
  const PortReading readings[] = {{.reading = &reading}};
  for (const MetricSpec& spec : MetricSpecs()) {
    TpuSample sample;
    EXPECT_EQ(EmitServiceReadings(spec, readings, {}, sample), 0u);
    EXPECT_EQ(EmitServiceReadings(spec, std::span<const PortReading>(), {}, sample), 0u);
  }
}

}  // namespace
}  // namespace runmon::tpu
