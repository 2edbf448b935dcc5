// openmetrics_parse_bench: throughput of ParseExposition (Prometheus text 0.0.4 / OpenMetrics 1.0) on a
// generated node_exporter-like body: many families with HELP/TYPE, counters, gauges, histograms and
// summaries, 2-4 labels each, ~5 MB and 50k+ samples. Prints one JSON line: MB/s and samples/s, best of 5.
// usage: openmetrics_parse_bench [--mb SIZE] [--openmetrics]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectors/openmetrics/text_parse.hpp"

namespace {

using runmon::openmetrics::ParseExposition;
using runmon::openmetrics::ParseOptions;

// Deterministic pseudo-random values (no <random> state to seed).
uint64_t Next(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

std::string Generate(size_t target_bytes, bool openmetrics) {
  static const char* const kModes[] = {"idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"};
  static const char* const kDevices[] = {"eth0", "eth1", "lo", "nvme0n1", "nvme1n1", "sda", "docker0", "ib0"};
  static const char* const kBuckets[] = {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "+Inf"};
  uint64_t state = 42;
  std::string out;
  out.reserve(target_bytes + 4096);
  char value[64];
  for (size_t family = 0; out.size() < target_bytes; ++family) {
    const std::string name =
        "node_subsystem" + std::to_string(family % 97) + "_metric" + std::to_string(family);
    switch (family % 4) {
      case 0: {  // counter per cpu and mode
        out += "# HELP " + name + "_seconds_total Seconds the CPUs spent in each mode.\n";
        out += "# TYPE " + name + "_seconds_total counter\n";
        for (int cpu = 0; cpu < 8; ++cpu) {
          for (const char* mode : kModes) {
            std::snprintf(value, sizeof(value), "%.6g", static_cast<double>(Next(state) % 100000000) / 100.0);
            out += name + "_seconds_total{cpu=\"" + std::to_string(cpu) + "\",mode=\"" + mode + "\"} " +
                   value + "\n";
          }
        }
        break;
      }
      case 1: {  // gauge per device
        out += "# HELP " + name + "_bytes Device statistic in bytes.\n";
        out += "# TYPE " + name + "_bytes gauge\n";
        for (const char* device : kDevices) {
          std::snprintf(value, sizeof(value), "%.10e", static_cast<double>(Next(state)) * 1000.0);
          out += name + "_bytes{device=\"" + device + "\",fstype=\"ext4\",mountpoint=\"/mnt/" + device +
                 "\"} " + value + "\n";
        }
        break;
      }
      case 2: {  // histogram
        out += "# HELP " + name + "_duration_seconds Request latency.\n";
        out += "# TYPE " + name + "_duration_seconds histogram\n";
        for (const char* handler : {"/metrics", "/api/v1/query"}) {
          uint64_t count = 0;
          for (const char* le : kBuckets) {
            count += Next(state) % 1000;
            out += name + "_duration_seconds_bucket{handler=\"" + handler + "\",le=\"" + le + "\"} " +
                   std::to_string(count) + "\n";
          }
          out += name + "_duration_seconds_sum{handler=\"" + handler + "\"} " + std::to_string(count / 7) +
                 ".25\n";
          out +=
              name + "_duration_seconds_count{handler=\"" + handler + "\"} " + std::to_string(count) + "\n";
        }
        break;
      }
      default: {  // summary without labels and an untyped gauge with a timestamp
        out += "# HELP " + name + " A summary of pause durations.\n# TYPE " + name + " summary\n";
        for (const char* q : {"0", "0.25", "0.5", "0.75", "1"}) {
          std::snprintf(value, sizeof(value), "%.5e", static_cast<double>(Next(state) % 100000) * 1e-9);
          out += name + "{quantile=\"" + q + "\"} " + value + "\n";
        }
        out += name + "_sum 0.412207377\n" + name + "_count 7815\n";
        out += name + "_untyped 1 1712345678123\n";
        break;
      }
    }
  }
  if (openmetrics) out += "# EOF\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 5;
  bool openmetrics = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--mb" && i + 1 < argc) {
      mb = std::atof(argv[++i]);
    } else if (arg == "--openmetrics") {
      openmetrics = true;
    } else {
      std::fprintf(stderr, "usage: openmetrics_parse_bench [--mb SIZE] [--openmetrics]\n");
      return 2;
    }
  }
  // Prometheus text timestamps are integer ms; OpenMetrics wants seconds, so drop them there.
  std::string text = Generate(static_cast<size_t>(mb * 1e6), false);
  if (openmetrics) {
    std::string om;
    om.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t end = text.find('\n', pos);
      std::string_view line(text.data() + pos, end - pos);
      if (line.ends_with(" 1712345678123")) line.remove_suffix(14);
      om.append(line);
      om += '\n';
      pos = end + 1;
    }
    om += "# EOF\n";
    text = std::move(om);
  }
  double best = 1e300;
  size_t samples = 0;
  size_t errors = 0;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const auto result = ParseExposition(text, ParseOptions{});
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
    samples = result.samples.size();
    errors = result.error_count;
  }
  std::printf(
      "{\"bench\": \"openmetrics_parse\", \"format\": \"%s\", \"bytes\": %zu, \"samples\": %zu, \"errors\": "
      "%zu, "
      "\"best_seconds\": %.6f, \"mb_per_s\": %.1f, \"samples_per_s\": %.0f}\n",
      openmetrics ? "openmetrics" : "prometheus", text.size(), samples, errors, best,
      static_cast<double>(text.size()) / 1e6 / best, static_cast<double>(samples) / best);
  return errors == 0 ? 0 : 1;
}
