// Writes a logdir for the end-to-end tests of `runmon serve` (tests/e2e/serve_test.py) that need runs big
// enough to make the API work: RUNS finished runs of SAMPLES stats records a second apart, each with host,
// process and four GPUs' keys moving as smooth waves (so charts group and downsample as on a real run).
// Usage: write_serve_fixture LOGDIR [RUNS] [SAMPLES]
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "support/run_log_builder.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: write_serve_fixture LOGDIR [RUNS] [SAMPLES]\n");
    return 2;
  }
  const std::filesystem::path logdir = argv[1];
  const int runs = argc > 2 ? std::stoi(argv[2]) : 2;
  const int samples = argc > 3 ? std::stoi(argv[3]) : 20000;
  constexpr double kStart = 1'780'000'000;
  for (int run = 0; run < runs; ++run) {
    const std::string id = fmt::format("fixture{}", run);
    runmon::test::RunLogBuilder builder;
    builder.Header().Run(id, fmt::format("fixture run {}", run), kStart + run * 100000.0);
    for (int i = 0; i < samples; ++i) {
      const double wave = std::sin(i / 60.0 + run);
      std::vector<std::pair<std::string, std::string>> items = {
          {"cpu", fmt::format("{:.1f}", 50 + 40 * wave)},
          {"memory_percent", fmt::format("{:.1f}", 60 + 10 * wave)},
          {"proc.memory.rssMB", fmt::format("{:.2f}", 2048 + 100 * wave)},
          {"network.sent", std::to_string(i * 1000)},
      };
      for (int gpu = 0; gpu < 4; ++gpu) {
        const double load = std::sin(i / 30.0 + gpu);
        items.emplace_back(fmt::format("gpu.{}.gpu", gpu), fmt::format("{:.0f}", 50 + 45 * load));
        items.emplace_back(fmt::format("gpu.{}.memory", gpu), fmt::format("{:.0f}", 40 + 30 * load));
        items.emplace_back(fmt::format("gpu.{}.temp", gpu), fmt::format("{:.0f}", 60 + 15 * load));
        items.emplace_back(fmt::format("gpu.{}.powerWatts", gpu), fmt::format("{:.3f}", 300 + 200 * load));
      }
      builder.Stats(kStart + run * 100000.0 + i, items);
    }
    builder.Exit(0, samples);
    builder.WriteTo(logdir / fmt::format("run-20260101_00000{}-{}", run, id) / ("run-" + id + ".wandb"));
  }
  return 0;
}
