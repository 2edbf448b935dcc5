// tpu_bench: what one TPU sample costs runmon: the TPU collector of a 4-chip v5e host (the PCI scan's
// result given, no libtpu) reading every metric the runtime-metrics service at ADDRESS lists, in one
// batch, decoding the answers and emitting the tpu.* keys, as CPU time per sample (getrusage over the loop:
// the gRPC client's own threads included) and wall time per sample. bench/run_tpu_bench.py starts the fake
// service (tests/fakes/tpu_runtime_service, out of process, so its CPU is not counted) with
// tests/fixtures/tpu/runtime_v5e_4chip.json and runs a tpu-info-style Python client beside it.
// Usage: tpu_bench ADDRESS [samples=2000]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_clock.hpp"
#include "collectors/tpu/runtime_metrics_client.hpp"
#include "collectors/tpu/tpu_collector.hpp"

using runmon::bench::RusageCpuSeconds;
using runmon::bench::WallSeconds;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tpu_bench ADDRESS [samples]\n");
    return 2;
  }
  const std::string address = argv[1];
  const int samples = argc > 2 ? std::atoi(argv[2]) : 2000;
  runmon::TpuOptions options;
  for (const runmon::tpu::TpuChipType& type : runmon::tpu::TpuChipTypes()) {
    if (type.name == "v5e") options.chips = {.type = &type, .chip_count = 4};
  }
  options.addresses = {address};
  options.make_client =
      [](const std::string& at) -> runmon::Result<std::unique_ptr<runmon::tpu::RuntimeMetricsClient>> {
    return runmon::tpu::MakeLinkedRuntimeMetricsClient(at, runmon::tpu::RuntimeServiceTimeouts{});
  };
  options.monotonic_seconds = WallSeconds;
  options.warn = [](const std::string& message) { std::fprintf(stderr, "tpu_bench: %s\n", message.c_str()); };
  auto collector = runmon::MakeTpuCollector(std::move(options));
  size_t keys = 0;
  const auto sample = [&] {
    runmon::MetricBatch batch;
    auto status = collector->Collect(runmon::Tick{}, batch);
    if (!status.ok() || batch.empty()) {
      std::fprintf(stderr, "tpu_bench: no sample from %s%s\n", address.c_str(),
                   status.ok() ? "" : (": " + status.error()).c_str());
      std::exit(1);
    }
    keys = batch.items().size();
  };
  for (int i = 0; i < 20; ++i) sample();  // the connection, the list, gRPC's own warm-up
  const double cpu = RusageCpuSeconds();
  const double wall = WallSeconds();
  for (int i = 0; i < samples; ++i) sample();
  std::printf("runmon tpu sample: %.1f us CPU/sample, %.1f us wall/sample, %zu keys\n",
              (RusageCpuSeconds() - cpu) / samples * 1e6, (WallSeconds() - wall) / samples * 1e6, keys);
  return 0;
}
