// The runtime-metrics gRPC client, linked as it is, against the fake service in this process
// (tests/fakes/tpu_runtime_service): the list of metrics; every case of W&B's mock responses, the libtpu SDK
// examples' distributions and runmon's own fixtures (a 4-chip v5e host, the attribute forms) decoded field by
// field; the requests' form; NOT_FOUND, UNAVAILABLE and a response without a metric; a slow service (one
// timeout per batch), a stalled one and none at all, each bounded; a service that appears after a failed
// call, restarts on its port, or changes its file.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "collectors/tpu/runtime_metrics_client.hpp"
#include "fake_tpu_runtime_service.hpp"
#include "support/temp_dir.hpp"
#include "tpu_runtime_expect.hpp"

namespace runmon::tpu {
namespace {

using fake::FakeServiceOptions;
using fake::FakeTpuRuntimeService;
using fake::StalledListener;
using test::ExpectReadingOf;
using test::Json;
using test::NamesOf;
using test::ReadFixtureJson;
using test::ResponsesOf;
using test::TpuFixture;
using Clock = std::chrono::steady_clock;

// Generous for a loaded test machine; the fault tests use the real, short ones.
constexpr RuntimeServiceTimeouts kPatient{.probe_seconds = 1, .connect_seconds = 5, .request_seconds = 5};
constexpr RuntimeServiceTimeouts kShort{
    .probe_seconds = 0.1, .connect_seconds = 0.25, .request_seconds = 0.5};

std::unique_ptr<FakeTpuRuntimeService> StartFake(FakeServiceOptions options) {
  auto service = FakeTpuRuntimeService::Start(std::move(options));
  if (!service) ADD_FAILURE() << service.error();
  return service ? std::move(*service) : nullptr;
}

std::unique_ptr<FakeTpuRuntimeService> StartFake(const std::filesystem::path& file,
                                                 const std::string& case_name = "") {
  return StartFake(FakeServiceOptions{.responses_file = file, .case_name = case_name});
}

// A port nothing listens on (it was free a moment ago).
int UnusedPort() {
  const int socket = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(::bind(socket, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(socket);
  return ntohs(address.sin_port);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

const RuntimeMetricReading& ReadingOf(const RuntimeCall<RuntimeMetricReading>& call) {
  if (const auto* error = std::get_if<RuntimeCallError>(&call)) {
    ADD_FAILURE() << error->message;
    static const RuntimeMetricReading kNone;
    return kNone;
  }
  return std::get<RuntimeMetricReading>(call);
}

RuntimeCallCode CodeOf(const RuntimeCall<RuntimeMetricReading>& call) {
  EXPECT_TRUE(std::holds_alternative<RuntimeCallError>(call)) << "a reading where an error was expected";
  return std::holds_alternative<RuntimeCallError>(call) ? std::get<RuntimeCallError>(call).code
                                                        : RuntimeCallCode::kOther;
}

// Every response of `responses` fetched in one batch and checked against its JSON.
void ExpectServedAsWritten(RuntimeMetricsClient& client, const Json& responses) {
  const std::vector<std::string> names = NamesOf(responses);
  const auto results = client.GetRuntimeMetrics(names);
  ASSERT_EQ(results.size(), names.size());
  for (std::size_t index = 0; index < names.size(); ++index) {
    SCOPED_TRACE(names[index]);
    ExpectReadingOf(ReadingOf(results[index]), responses.at(names[index]));
  }
}

double GaugeOf(const MetricReading& metric) {
  EXPECT_TRUE(std::holds_alternative<double>(metric.measure));
  return std::holds_alternative<double>(metric.measure) ? std::get<double>(metric.measure) : -1;
}

TEST(TpuRuntimeClient, ListsTheServicesMetricsInItsOrder) {
  const auto fixture = TpuFixture("runtime_v5e_4chip.json");
  auto service = StartFake(fixture);
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  EXPECT_TRUE(client->Listening());
  const auto names = client->ListSupportedMetrics();
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(names))
      << std::get<RuntimeCallError>(names).message;
  EXPECT_EQ(std::get<std::vector<std::string>>(names), NamesOf(ResponsesOf(ReadFixtureJson(fixture))));
  EXPECT_EQ(std::get<std::vector<std::string>>(names).size(), 15u);
}

TEST(TpuRuntimeClient, ListDropsEmptyNames) {
  auto response = FakeTpuRuntimeService::Start(
      FakeServiceOptions{.responses = {{"", {}}, {"hlo.queue.size.gauge", {}}, {"", {}}}});
  ASSERT_TRUE(response) << response.error();
  auto client = MakeLinkedRuntimeMetricsClient((*response)->address(), kPatient);
  const auto names = client->ListSupportedMetrics();
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(names));
  EXPECT_EQ(std::get<std::vector<std::string>>(names), std::vector<std::string>{"hlo.queue.size.gauge"});
}

TEST(TpuRuntimeClient, EveryCaseOfWandbsMockResponses) {
  const auto fixture = TpuFixture("grpc_runtime_metric_mock_responses.json");
  const Json root = ReadFixtureJson(fixture);
  const auto cases = fake::ReadCaseNames(fixture);
  ASSERT_TRUE(cases) << cases.error();
  EXPECT_EQ(cases->size(), 5u);
  for (const std::string& case_name : *cases) {
    SCOPED_TRACE(case_name);
    auto service = StartFake(fixture, case_name);
    ASSERT_TRUE(service);
    auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
    ExpectServedAsWritten(*client, ResponsesOf(root, case_name));
  }
}

TEST(TpuRuntimeClient, WandbsTwoDeviceChipReadsAsWritten) {
  auto service = StartFake(TpuFixture("grpc_runtime_metric_mock_responses.json"), "v2_two_devices_one_chip");
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto results =
      client->GetRuntimeMetrics({"tpu.runtime.hbm.memory.total.bytes", "tpu.runtime.hbm.memory.usage.bytes"});
  ASSERT_EQ(results.size(), 2u);
  const RuntimeMetricReading& total = ReadingOf(results[0]);
  ASSERT_EQ(total.metrics.size(), 2u);
  EXPECT_EQ(total.name, "tpu.runtime.hbm.memory.total.bytes");
  EXPECT_EQ(total.metrics[0].attribute.key, "device_id");
  EXPECT_EQ(total.metrics[0].attribute.int_value, 0);
  EXPECT_EQ(total.metrics[1].attribute.int_value, 1);
  EXPECT_DOUBLE_EQ(GaugeOf(total.metrics[0]), 8000000000.0);
  EXPECT_DOUBLE_EQ(GaugeOf(total.metrics[1]), 8000000000.0);
  EXPECT_EQ(ReadingOf(results[1]).metrics.size(), 2u);
}

// The SDK examples' distributions (the values W&B's percentile tests use), served as gRPC distributions.
TEST(TpuRuntimeClient, TheSdkExamplesDistributionsDecode) {
  const Json examples = ReadFixtureJson(TpuFixture("libtpu_sdk_value_examples.json"));
  fake::ResponseTable table;
  Json expected = Json::object();
  for (const char* example : {"distribution_exponential", "distribution_linear"}) {
    Json distribution = examples.at(example);
    distribution.erase("expected_p50");
    Json response = {
        {"metric", {{"name", example}, {"metrics", Json::array({{{"distribution", distribution}}})}}}};
    fake::MetricResponse message;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(response.dump(), &message).ok()) << example;
    table.emplace_back(example, message);
  }
  auto service = StartFake(FakeServiceOptions{.responses = table});
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto results = client->GetRuntimeMetrics({"distribution_exponential", "distribution_linear"});
  ASSERT_EQ(results.size(), 2u);
  const auto& exponential = ReadingOf(results[0]);
  ASSERT_EQ(exponential.metrics.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<DistributionReading>(exponential.metrics[0].measure));
  const auto& first = std::get<DistributionReading>(exponential.metrics[0].measure);
  EXPECT_EQ(first.count, 1000);
  EXPECT_DOUBLE_EQ(first.mean, 50.0);
  EXPECT_EQ(first.buckets.kind, BucketKind::kExponential);
  EXPECT_EQ(first.buckets.num_finite_buckets, 4);
  EXPECT_DOUBLE_EQ(first.buckets.growth_factor, 2.0);
  EXPECT_DOUBLE_EQ(first.buckets.scale, 10.0);
  EXPECT_EQ(first.bucket_counts, (std::vector<std::int64_t>{0, 100, 300, 400, 150, 50}));
  const auto& linear = ReadingOf(results[1]);
  ASSERT_EQ(linear.metrics.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<DistributionReading>(linear.metrics[0].measure));
  const auto& second = std::get<DistributionReading>(linear.metrics[0].measure);
  EXPECT_EQ(second.count, 100);
  EXPECT_DOUBLE_EQ(second.mean, 15.0);
  EXPECT_EQ(second.buckets.kind, BucketKind::kLinear);
  EXPECT_EQ(second.buckets.num_finite_buckets, 3);
  EXPECT_DOUBLE_EQ(second.buckets.width, 10.0);
  EXPECT_DOUBLE_EQ(second.buckets.offset, 0.0);
  EXPECT_EQ(second.bucket_counts, (std::vector<std::int64_t>{10, 50, 30, 10}));
}

TEST(TpuRuntimeClient, EveryMetricOfTheV5eHostAsWritten) {
  const auto fixture = TpuFixture("runtime_v5e_4chip.json");
  auto service = StartFake(fixture);
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  ExpectServedAsWritten(*client, ResponsesOf(ReadFixtureJson(fixture)));
}

TEST(TpuRuntimeClient, TheV5eHostsValuesArePlausible) {
  auto service = StartFake(TpuFixture("runtime_v5e_4chip.json"));
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto results = client->GetRuntimeMetrics(
      {"tpu.runtime.hbm.memory.total.bytes", "tpu.runtime.hbm.memory.usage.bytes",
       "tpu.runtime.tensorcore.dutycycle.percent", "tpu.runtime.hbm.utilization.percent",
       "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution",
       "megascale.host_to_device_transfer_latencies.microsecond.cumulative.distribution",
       "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution", "hlo.queue.size.gauge",
       "hlo.execution.timing.distribution.microseconds"});
  ASSERT_EQ(results.size(), 9u);
  const auto& total = ReadingOf(results[0]);
  const auto& usage = ReadingOf(results[1]);
  ASSERT_EQ(total.metrics.size(), 4u);
  ASSERT_EQ(usage.metrics.size(), 4u);
  for (std::int64_t device = 0; device < 4; ++device) {
    const auto index = static_cast<std::size_t>(device);
    EXPECT_EQ(total.metrics[index].attribute.int_value, device);
    EXPECT_EQ(usage.metrics[index].attribute.int_value, device);
    EXPECT_DOUBLE_EQ(GaugeOf(total.metrics[index]), 16.0 * (1 << 30));
    EXPECT_GT(GaugeOf(usage.metrics[index]), 0);
    EXPECT_LE(GaugeOf(usage.metrics[index]), GaugeOf(total.metrics[index]));
  }
  for (const auto* percent : {&ReadingOf(results[2]), &ReadingOf(results[3])}) {
    ASSERT_EQ(percent->metrics.size(), 4u);
    for (const auto& metric : percent->metrics) {
      EXPECT_GE(GaugeOf(metric), 0);
      EXPECT_LE(GaugeOf(metric), 100);
    }
  }
  const auto& dcn = ReadingOf(results[4]);
  ASSERT_EQ(dcn.metrics.size(), 3u);
  const char* labels[] = {"8MB+", "4MB+", "1MB+"};
  for (std::size_t index = 0; index < 3; ++index) {
    const auto& attribute = dcn.metrics[index].attribute;
    ASSERT_EQ(attribute.entries.size(), 1u);
    EXPECT_EQ(attribute.entries[0].key, "buffer-size");
    EXPECT_EQ(attribute.entries[0].string_value, labels[index]);
    ASSERT_TRUE(std::holds_alternative<DistributionReading>(dcn.metrics[index].measure));
    const auto& distribution = std::get<DistributionReading>(dcn.metrics[index].measure);
    EXPECT_EQ(distribution.buckets.kind, BucketKind::kExponential);
    EXPECT_EQ(distribution.bucket_counts.size(),
              static_cast<std::size_t>(distribution.buckets.num_finite_buckets) + 2);
    std::int64_t sum = 0;
    for (std::int64_t count : distribution.bucket_counts) sum += count;
    EXPECT_EQ(sum, distribution.count);
  }
  const auto& host_to_device = ReadingOf(results[5]);
  ASSERT_EQ(host_to_device.metrics.size(), 3u);
  ASSERT_TRUE(std::holds_alternative<SummaryReading>(host_to_device.metrics[0].measure));
  const auto& summary = std::get<SummaryReading>(host_to_device.metrics[0].measure);
  EXPECT_EQ(summary.sample_count, 640u);
  EXPECT_DOUBLE_EQ(summary.sample_sum, 640 * 910.0);
  ASSERT_EQ(summary.quantiles.size(), 5u);
  EXPECT_DOUBLE_EQ(summary.quantiles[0].first, 0.5);
  EXPECT_DOUBLE_EQ(summary.quantiles[4].first, 0.999);
  for (std::size_t index = 1; index < 5; ++index) {
    EXPECT_GT(summary.quantiles[index].second, summary.quantiles[index - 1].second);
  }
  const auto& rtt = ReadingOf(results[6]);
  ASSERT_EQ(rtt.metrics.size(), 1u);
  EXPECT_TRUE(rtt.metrics[0].attribute.entries.empty());
  EXPECT_FALSE(rtt.metrics[0].attribute.string_value || rtt.metrics[0].attribute.int_value);
  const auto& queue = ReadingOf(results[7]);
  ASSERT_EQ(queue.metrics.size(), 4u);
  ASSERT_EQ(queue.metrics[3].attribute.entries.size(), 2u);
  EXPECT_EQ(queue.metrics[3].attribute.entries[0].key, "device_ordinal");
  EXPECT_EQ(queue.metrics[3].attribute.entries[0].string_value, "3");
  EXPECT_EQ(queue.metrics[3].attribute.entries[1].key, "core_type");
  EXPECT_DOUBLE_EQ(GaugeOf(queue.metrics[3]), 2.0);
  const auto& timing = ReadingOf(results[8]);
  ASSERT_EQ(timing.metrics.size(), 4u);
  ASSERT_FALSE(timing.metrics[2].attribute.entries.empty());
  EXPECT_EQ(timing.metrics[2].attribute.entries[0].int_value, 2);
}

TEST(TpuRuntimeClient, BothAttributeFormsCarryTheDevice) {
  const auto fixture = TpuFixture("runtime_attribute_forms.json");
  const Json root = ReadFixtureJson(fixture);
  const std::string name = "tpu.runtime.hbm.memory.usage.bytes";
  for (const char* form :
       {"top_level_int_attr", "kvlist_device_ordinal_string", "kvlist_device_ordinal_int"}) {
    SCOPED_TRACE(form);
    auto service = StartFake(fixture, form);
    ASSERT_TRUE(service);
    auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
    const auto results = client->GetRuntimeMetrics({name});
    ASSERT_EQ(results.size(), 1u);
    const auto& reading = ReadingOf(results[0]);
    ExpectReadingOf(reading, ResponsesOf(root, form).at(name));
    ASSERT_EQ(reading.metrics.size(), 4u);
    for (std::int64_t device = 0; device < 4; ++device) {
      const auto& attribute = reading.metrics[static_cast<std::size_t>(device)].attribute;
      if (std::string(form) == "top_level_int_attr") {
        EXPECT_EQ(attribute.int_value, device);
        EXPECT_TRUE(attribute.entries.empty());
      } else {
        ASSERT_EQ(attribute.entries.size(), 2u);
        EXPECT_EQ(attribute.entries[0].key, "device_ordinal");
        if (std::string(form) == "kvlist_device_ordinal_string") {
          EXPECT_EQ(attribute.entries[0].string_value, std::to_string(device));
        } else {
          EXPECT_EQ(attribute.entries[0].int_value, device);
        }
      }
    }
    EXPECT_DOUBLE_EQ(GaugeOf(reading.metrics[3]), 10737418240.0);
  }
}

TEST(TpuRuntimeClient, AsksForTheNodesAggregatedView) {
  auto service = StartFake(TpuFixture("runtime_v5e_4chip.json"));
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const std::vector<std::string> names = {"hlo.queue.size.gauge", "tpu.runtime.hbm.memory.total.bytes"};
  ASSERT_EQ(client->GetRuntimeMetrics(names).size(), 2u);
  auto requests = service->requests();
  std::sort(requests.begin(), requests.end());
  EXPECT_EQ(requests, (std::vector<std::pair<std::string, bool>>{{names[0], false}, {names[1], false}}));
}

TEST(TpuRuntimeClient, NotFoundIsPerMetric) {
  auto service = StartFake(FakeServiceOptions{.responses_file = TpuFixture("runtime_v5e_4chip.json"),
                                              .not_found = {"hlo.queue.size.gauge"}});
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto results = client->GetRuntimeMetrics(
      {"tpu.runtime.hbm.memory.total.bytes", "hlo.queue.size.gauge", "no.such.metric"});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(ReadingOf(results[0]).name, "tpu.runtime.hbm.memory.total.bytes");
  EXPECT_EQ(CodeOf(results[1]), RuntimeCallCode::kNotFound);
  EXPECT_NE(std::get<RuntimeCallError>(results[1]).message.find("NOT_FOUND"), std::string::npos);
  EXPECT_EQ(CodeOf(results[2]), RuntimeCallCode::kNotFound);
}

TEST(TpuRuntimeClient, UnavailableServiceFailsEveryCall) {
  auto service = StartFake(
      FakeServiceOptions{.responses_file = TpuFixture("runtime_v5e_4chip.json"), .unavailable = true});
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto names = client->ListSupportedMetrics();
  ASSERT_TRUE(std::holds_alternative<RuntimeCallError>(names));
  EXPECT_EQ(std::get<RuntimeCallError>(names).code, RuntimeCallCode::kUnavailable);
  for (const auto& result :
       client->GetRuntimeMetrics({"hlo.queue.size.gauge", "tpu.runtime.hbm.memory.total.bytes"})) {
    EXPECT_EQ(CodeOf(result), RuntimeCallCode::kUnavailable);
  }
}

TEST(TpuRuntimeClient, AResponseWithoutAMetricIsMalformed) {
  auto service = StartFake(FakeServiceOptions{.responses = {{"empty", {}}}});
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  const auto results = client->GetRuntimeMetrics({"empty"});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(CodeOf(results[0]), RuntimeCallCode::kMalformed);
  EXPECT_NE(std::get<RuntimeCallError>(results[0]).message.find("without a metric"), std::string::npos);
}

TEST(TpuRuntimeClient, NoNamesNoCalls) {
  auto client = MakeLinkedRuntimeMetricsClient("127.0.0.1:" + std::to_string(UnusedPort()), kShort);
  EXPECT_TRUE(client->GetRuntimeMetrics({}).empty());
}

TEST(TpuRuntimeClient, ASlowServiceCostsOneTimeoutPerBatch) {
  auto service =
      StartFake(FakeServiceOptions{.responses_file = TpuFixture("runtime_v5e_4chip.json"), .delay_ms = 3000});
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kShort);
  const std::vector<std::string> names =
      NamesOf(ResponsesOf(ReadFixtureJson(TpuFixture("runtime_v5e_4chip.json"))));
  ASSERT_EQ(names.size(), 15u);
  const auto start = Clock::now();
  const auto results = client->GetRuntimeMetrics(names);
  const double elapsed = SecondsSince(start);
  ASSERT_EQ(results.size(), names.size());
  for (const auto& result : results) EXPECT_EQ(CodeOf(result), RuntimeCallCode::kDeadlineExceeded);
  EXPECT_GE(elapsed, kShort.request_seconds * 0.9);
  // One timeout (plus the connection) for the batch; one per metric would be 7.5 s.
  EXPECT_LT(elapsed, 0.4 * static_cast<double>(names.size()) * kShort.request_seconds);
}

TEST(TpuRuntimeClient, AStalledServiceIsBounded) {
  auto stalled = StalledListener::Start();
  ASSERT_TRUE(stalled) << stalled.error();
  auto client = MakeLinkedRuntimeMetricsClient((*stalled)->address(), kShort);
  EXPECT_TRUE(client->Listening());
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto start = Clock::now();
    const auto results =
        client->GetRuntimeMetrics({"hlo.queue.size.gauge", "tpu.runtime.hbm.memory.total.bytes"});
    const double elapsed = SecondsSince(start);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& result : results) {
      const RuntimeCallCode code = CodeOf(result);
      EXPECT_TRUE(code == RuntimeCallCode::kDeadlineExceeded || code == RuntimeCallCode::kUnavailable)
          << std::get<RuntimeCallError>(result).message;
    }
    EXPECT_LT(elapsed, kShort.connect_seconds + kShort.request_seconds + 2.0);
    const auto listed = client->ListSupportedMetrics();
    EXPECT_TRUE(std::holds_alternative<RuntimeCallError>(listed));
  }
  const auto start = Clock::now();
  client.reset();
  EXPECT_LT(SecondsSince(start), 2.0);
}

TEST(TpuRuntimeClient, NoServiceIsBounded) {
  auto client = MakeLinkedRuntimeMetricsClient("127.0.0.1:" + std::to_string(UnusedPort()), kShort);
  auto start = Clock::now();
  EXPECT_FALSE(client->Listening());
  EXPECT_LT(SecondsSince(start), 1.0);
  start = Clock::now();
  const auto results =
      client->GetRuntimeMetrics({"hlo.queue.size.gauge", "tpu.runtime.hbm.memory.total.bytes"});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& result : results) EXPECT_EQ(CodeOf(result), RuntimeCallCode::kUnavailable);
  const auto listed = client->ListSupportedMetrics();
  ASSERT_TRUE(std::holds_alternative<RuntimeCallError>(listed));
  EXPECT_EQ(std::get<RuntimeCallError>(listed).code, RuntimeCallCode::kUnavailable);
  EXPECT_LT(SecondsSince(start), 2 * kShort.connect_seconds + 2.0);
}

TEST(TpuRuntimeClient, AnAddressThatIsNotIpv4IsUnavailable) {
  for (const char* address :
       {"localhost:8431", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "[::1]:8431", "1.2.3:80"}) {
    SCOPED_TRACE(address);
    auto client = MakeLinkedRuntimeMetricsClient(address, kShort);
    EXPECT_FALSE(client->Listening());
    const auto results = client->GetRuntimeMetrics({"hlo.queue.size.gauge"});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(CodeOf(results[0]), RuntimeCallCode::kUnavailable);
  }
}

// Polls GetRuntimeMetrics until the metric reads or `limit` passes; the last answer.
RuntimeCall<RuntimeMetricReading> ReadWithin(RuntimeMetricsClient& client, const std::string& name,
                                             double limit) {
  const auto start = Clock::now();
  for (;;) {
    auto results = client.GetRuntimeMetrics({name});
    if (std::holds_alternative<RuntimeMetricReading>(results[0]) || SecondsSince(start) > limit) {
      return std::move(results[0]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

TEST(TpuRuntimeClient, AServiceThatStartsLaterIsReached) {
  const int port = UnusedPort();
  auto client = MakeLinkedRuntimeMetricsClient("127.0.0.1:" + std::to_string(port), kShort);
  const auto before = client->GetRuntimeMetrics({"hlo.queue.size.gauge"});
  EXPECT_EQ(CodeOf(before[0]), RuntimeCallCode::kUnavailable);
  auto service =
      StartFake(FakeServiceOptions{.responses_file = TpuFixture("runtime_v5e_4chip.json"), .port = port});
  ASSERT_TRUE(service);
  EXPECT_TRUE(client->Listening());
  const auto after = ReadWithin(*client, "hlo.queue.size.gauge", 5.0);
  EXPECT_EQ(ReadingOf(after).metrics.size(), 4u);
}

TEST(TpuRuntimeClient, AServiceRestartedOnItsPortIsReachedAgain) {
  const auto fixture = TpuFixture("grpc_runtime_metric_mock_responses.json");
  const std::string name = "tpu.runtime.tensorcore.dutycycle.percent";
  auto service = StartFake(fixture, "v4_single_device");
  ASSERT_TRUE(service);
  const int port = service->port();
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kShort);
  const auto first = ReadWithin(*client, name, 5.0);
  ASSERT_EQ(ReadingOf(first).metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(GaugeOf(ReadingOf(first).metrics[0]), 75.0);

  service.reset();
  const auto gone = client->GetRuntimeMetrics({name});
  EXPECT_EQ(CodeOf(gone[0]), RuntimeCallCode::kUnavailable);
  service = StartFake(
      FakeServiceOptions{.responses_file = fixture, .case_name = "v2_two_devices_one_chip", .port = port});
  ASSERT_TRUE(service);
  const auto again = ReadWithin(*client, name, 5.0);
  EXPECT_EQ(ReadingOf(again).metrics.size(), 1u);
  EXPECT_EQ(ReadingOf(ReadWithin(*client, "tpu.runtime.hbm.memory.total.bytes", 5.0)).metrics.size(), 2u);
}

TEST(TpuRuntimeClient, TheFakeReadsItsFileAgainWhenItChanges) {
  runmon::test::TempDir dir("tpu-runtime");
  const auto file = dir.path() / "responses.json";
  const auto write = [&](const char* value) {
    std::ofstream(file)
        << R"({"hlo.queue.size.gauge": {"metric": {"name": "hlo.queue.size.gauge", "metrics": [)"
           R"({"gauge": {"asInt": ")"
        << value << R"("}}]}}})";
  };
  write("3");
  auto service = StartFake(file);
  ASSERT_TRUE(service);
  auto client = MakeLinkedRuntimeMetricsClient(service->address(), kPatient);
  EXPECT_DOUBLE_EQ(GaugeOf(ReadingOf(client->GetRuntimeMetrics({"hlo.queue.size.gauge"})[0]).metrics.at(0)),
                   3.0);
  const auto written = std::filesystem::last_write_time(file);
  write("7");
  std::filesystem::last_write_time(file, written + std::chrono::seconds(1));
  EXPECT_DOUBLE_EQ(GaugeOf(ReadingOf(client->GetRuntimeMetrics({"hlo.queue.size.gauge"})[0]).metrics.at(0)),
                   7.0);
}

}  // namespace
}  // namespace runmon::tpu
