// What runmon inside a program costs (include/runmon/run.hpp through librunmon.so): a Run::log call of two
// keys and a step, flat out (its median over --runs fresh runs), beside formatting the same row as the
// channel's JSON line alone (what <runmon/log.hpp> does before its send, the floor under a line protocol);
// then the process's CPU at 100,000 rows a second for a few seconds, beside the same paced loop with a run
// that logs nothing (the sampler's own cost at 1 s), so the difference is what the rows cost in-process.
// Prints readable lines and one JSON object last.
#include <runmon/log.hpp>
#include <runmon/run.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_clock.hpp"

namespace {

namespace fs = std::filesystem;
using runmon::bench::RusageCpuSeconds;
using runmon::bench::WallSeconds;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Nanoseconds a Run::log call, over `rows` rows in a fresh run.
double LogCallNanoseconds(const fs::path& dir, int rows) {
  auto run = runmon::Run::start({.dir = dir.string(), .name = "run_api_bench", .interval = 1.0});
  const double start = WallSeconds();
  for (int i = 0; i < rows; ++i) run.log({{"loss", 1.0 / (i + 1)}, {"lr", 3e-4}}, i);
  const double elapsed = WallSeconds() - start;
  run.finish(0);
  if (run.dropped() != 0) {
    std::fprintf(stderr, "run_api_bench: %llu rows dropped\n",
                 static_cast<unsigned long long>(run.dropped()));
    std::exit(1);
  }
  return elapsed / rows * 1e9;
}

double LineNanoseconds(int rows) {
  size_t bytes = 0;
  const double start = WallSeconds();
  for (int i = 0; i < rows; ++i) {
    bytes += runmon::log_detail::Line({{"loss", 1.0 / (i + 1)}, {"lr", 3e-4}}, i, false).size();
  }
  const double elapsed = WallSeconds() - start;
  if (bytes == 0) std::exit(1);
  return elapsed / rows * 1e9;
}

// The process's CPU (% of one core) over `seconds` of a loop paced at `rate` rows a second, logging them or
// not, with a run recording either way.
double PacedCpuPercent(const fs::path& dir, double rate, double seconds, bool log) {
  auto run = runmon::Run::start({.dir = dir.string(), .name = "run_api_bench paced", .interval = 1.0});
  const double cpu_start = RusageCpuSeconds();
  const double start = WallSeconds();
  const auto total = static_cast<int64_t>(rate * seconds);
  for (int64_t i = 0; i < total; ++i) {
    if (i % 100 == 0) {
      const double ahead = start + static_cast<double>(i) / rate - WallSeconds();
      if (ahead > 0) std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
    }
    if (log) run.log({{"loss", 1.0 / static_cast<double>(i + 1)}, {"lr", 3e-4}}, i);
  }
  const double cpu = RusageCpuSeconds() - cpu_start;
  const double wall = WallSeconds() - start;
  run.finish(0);
  return cpu / wall * 100;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  int rows = 200000;
  double seconds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--rows") rows = std::atoi(argv[i + 1]);
    if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
  }
  if (runs < 1 || rows < 1 || seconds <= 0) {
    std::fprintf(stderr, "usage: run_api_bench [--runs N] [--rows N] [--seconds S]\n");
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("runmon-run-api-bench-" + std::to_string(::getpid()));
  std::vector<double> call;
  std::vector<double> line;
  std::vector<double> paced;
  std::vector<double> idle;
  for (int r = 0; r < runs; ++r) {
    call.push_back(LogCallNanoseconds(dir, rows));
    line.push_back(LineNanoseconds(rows));
    paced.push_back(PacedCpuPercent(dir, 100000, seconds, true));
    idle.push_back(PacedCpuPercent(dir, 100000, seconds, false));
  }
  fs::remove_all(dir);
  const double call_ns = Median(call);
  const double line_ns = Median(line);
  const double paced_percent = Median(paced);
  const double idle_percent = Median(idle);
  std::printf(
      "Run::log per call, %d rows of two keys and a step, median of %d: %.0f ns; the channel's JSON line "
      "alone %.0f ns (ratio %.2f)\n",
      rows, runs, call_ns, line_ns, call_ns / line_ns);
  std::printf(
      "100,000 rows a second for %.0f s: the process %.2f %% of one core, %.2f %% pacing the same loop "
      "without logging, so %.2f %% for the rows\n",
      seconds, paced_percent, idle_percent, paced_percent - idle_percent);
  std::printf(
      "{\"run_log_call_ns\": %.1f, \"channel_line_ns\": %.1f, \"paced_cpu_percent\": %.2f, "
      "\"idle_cpu_percent\": %.2f, \"rows_cpu_percent\": %.2f}\n",
      call_ns, line_ns, paced_percent, idle_percent, paced_percent - idle_percent);
  return 0;
}
