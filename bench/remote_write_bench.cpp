// remote_write_bench (Google Benchmark): what Prometheus remote write costs runmon (src/remote_write).
//
//  - BM_EnqueueToCompressedBody: CPU per sample of 100 series through the whole path, RemoteWriter::Enqueue
//    -> the writer thread (mapping, filter, the tick's encoding, DiskQueue::Append in a temporary
//    directory) -> the sender thread (DiskQueue::Read, batch encoding, protobuf, snappy) -> a transport that
//    discards the body and answers 200. Each iteration enqueues --ticks samples and drains them; the CPU is
//    getrusage's for the whole process (all three threads), reported per sample (cpu_us_per_sample, the
//    issue's target: at most 50 us) and per value.
//  - BM_EncodeBacklog: a one-hour backlog at 0.1 s (36,000 queued records of 100 values) encoded and
//    compressed in requests of 10,000 samples, as the sender sends it after an outage: samples per second,
//    and the compressed bytes per sample.
// The 100 keys are catalog keys (every Prometheus metric's pattern, placeholders filled with 0, 1, ...),
// values a random walk. Use a Release build:
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNMON_BUILD_BENCH=ON
//   -DRUNMON_BUILD_TESTS=OFF cmake --build build-rel --target remote_write_bench &&
//   build-rel/remote_write_bench
#include <stdlib.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_clock.hpp"
#include "export/prometheus_names.hpp"
#include "remote_write/batch_encoder.hpp"
#include "remote_write/remote_writer.hpp"
#include "remote_write/sample_codec.hpp"

namespace {

using namespace runmon;
using namespace runmon::remote_write;

constexpr size_t kSeries = 100;

// 100 distinct catalog keys that all have a Prometheus name.
std::vector<std::string> CatalogKeys() {
  std::vector<std::string> keys;
  SeriesMapper mapper({});
  for (int round = 0; keys.size() < kSeries; ++round) {
    for (const PrometheusMetric& metric : PrometheusMetrics()) {
      if (keys.size() == kSeries) break;
      if (round > 0 && metric.label.empty()) continue;
      std::string key = MetricKey(*metric.definition, std::to_string(round));
      if (mapper.Map(key) != nullptr) keys.push_back(std::move(key));
    }
  }
  return keys;
}

class Walk {
 public:
  explicit Walk(size_t count) : values_(count, 50.0) {}
  const std::vector<double>& Next() {
    for (double& value : values_) value += step_(random_);
    return values_;
  }

 private:
  std::mt19937_64 random_{42};
  std::normal_distribution<double> step_{0, 1};
  std::vector<double> values_;
};

double WallSecondsSinceEpoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void BM_EnqueueToCompressedBody(benchmark::State& state) {
  const size_t ticks = static_cast<size_t>(state.range(0));
  char pattern[] = "/tmp/runmon-remote-write-bench-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const std::filesystem::path directory = pattern;
  uint64_t bodies = 0;
  uint64_t body_bytes = 0;
  SenderOptions options;
  options.batch_age_seconds = 5;
  Result<std::unique_ptr<RemoteWriter>> opened = RemoteWriter::Open(
      directory / "queue", {"bench-host", "bench-run", "", "0"}, QueueOptions{}, options,
      [&](const std::string& body, std::chrono::steady_clock::time_point) {
        ++bodies;
        body_bytes += body.size();
        PostResult ok;
        ok.status = 200;
        ok.request_sent = true;
        return ok;
      },
      [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!opened.ok()) {
    state.SkipWithError(opened.error().c_str());
    return;
  }
  RemoteWriter& writer = **opened;
  // The samples are made before the clock starts (the random walk and the keys' strings are the
  // sampler's cost, not remote write's); each iteration only moves their timestamps on.
  const std::vector<std::string> keys = CatalogKeys();
  Walk walk(keys.size());
  std::vector<Sample> prepared(ticks);
  for (Sample& sample : prepared) {
    const std::vector<double>& values = walk.Next();
    for (size_t k = 0; k < keys.size(); ++k) sample.metrics.Add(keys[k], values[k]);
  }
  double timestamp = WallSecondsSinceEpoch() - 3600;
  double cpu_seconds = 0;
  uint64_t samples = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (Sample& sample : prepared) {
      sample.timestamp = timestamp;
      timestamp += 0.1;
    }
    state.ResumeTiming();
    const double cpu_before = bench::RusageCpuSeconds();
    for (const Sample& sample : prepared) writer.Enqueue(sample);
    const Status drained = writer.Drain(std::chrono::steady_clock::now() + std::chrono::minutes(5));
    if (!drained.ok()) {
      state.SkipWithError(drained.error().c_str());
      break;
    }
    cpu_seconds += bench::RusageCpuSeconds() - cpu_before;
    samples += ticks;
  }
  const RemoteWriteStats stats = writer.Stats();
  state.counters["cpu_us_per_sample"] = cpu_seconds * 1e6 / static_cast<double>(samples);
  state.counters["cpu_ns_per_value"] = cpu_seconds * 1e9 / static_cast<double>(samples * keys.size());
  state.counters["requests"] = static_cast<double>(bodies);
  state.counters["body_bytes_per_value"] =
      static_cast<double>(body_bytes) / static_cast<double>(samples * keys.size());
  state.counters["sent_values"] = static_cast<double>(stats.sent_samples);
  state.SetItemsProcessed(static_cast<int64_t>(samples));
  opened->reset();
  std::filesystem::remove_all(directory);
}
BENCHMARK(BM_EnqueueToCompressedBody)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EncodeBacklog(benchmark::State& state) {
  constexpr size_t kRecords = 36000;  // an hour at 0.1 s
  constexpr size_t kSamplesPerRequest = 10000;
  const std::vector<std::string> keys = CatalogKeys();
  Walk walk(keys.size());
  std::vector<QueueRecord> records(kRecords);
  std::vector<TickValue> values(keys.size());
  int64_t timestamp_ms = static_cast<int64_t>(WallSecondsSinceEpoch() * 1000) - 3600 * 1000;
  uint64_t payload_bytes = 0;
  for (size_t i = 0; i < kRecords; ++i) {
    const std::vector<double>& walked = walk.Next();
    for (size_t k = 0; k < keys.size(); ++k) values[k] = {keys[k], walked[k]};
    records[i].sequence = i + 1;
    records[i].samples = static_cast<uint32_t>(keys.size());
    records[i].timestamp_ms = timestamp_ms;
    timestamp_ms += 100;
    EncodeTick(records[i].timestamp_ms, values, &records[i].payload);
    payload_bytes += records[i].payload.size();
  }
  const size_t per_request = kSamplesPerRequest / keys.size();
  SeriesMapper mapper({"bench-host", "bench-run", "", "0"});
  BatchEncoder encoder(mapper);
  uint64_t body_bytes = 0;
  uint64_t samples = 0;
  for (auto _ : state) {
    body_bytes = 0;
    for (size_t first = 0; first < kRecords; first += per_request) {
      const EncodedBatch batch = encoder.Encode(
          std::span<const QueueRecord>(records).subspan(first, std::min(per_request, kRecords - first)));
      body_bytes += batch.body.size();
      samples += batch.samples;
      benchmark::DoNotOptimize(batch.body.data());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(samples));
  state.counters["body_bytes_per_value"] =
      static_cast<double>(body_bytes) / static_cast<double>(kRecords * keys.size());
  state.counters["queued_bytes_per_value"] =
      static_cast<double>(payload_bytes) / static_cast<double>(kRecords * keys.size());
}
BENCHMARK(BM_EncodeBacklog)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
