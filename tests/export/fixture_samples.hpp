// Samples for the exporter's tests: a small realistic one for the golden file (keys interleaved across
// families as the collectors emit them, a disk path that needs escaping, a key the catalog does not know,
// a few collectors' figures), and one holding a key for every catalog pattern and a collector with a hostile
// name, for promtool's lint.
#pragma once

#include <limits>
#include <string>
#include <string_view>

#include "core/catalog.hpp"
#include "core/sample.hpp"

namespace runmon::test {

inline Sample GoldenSample() {
  Sample sample;
  sample.timestamp = 1780000000.25;
  sample.runtime = 30;
  MetricBatch& m = sample.metrics;
  m.Add("cpu", 37.5);
  m.Add("proc.cpu.threads", 12);
  m.Add("proc.memory.rssMB", 1536.25);
  m.Add("cpu_percent", 12.3);
  m.Add("memory_percent", 48.1);
  m.Add("disk./.usagePercent", 61.2);
  m.Add("disk./.usageGB", 117.5);
  m.Add("disk./data \"x\"\\y.usagePercent", 3);
  m.Add("disk.in", 0.5);
  m.Add("disk.nvme0n1.in", 0.5);
  m.Add("network.sent", 123456789);
  m.Add("network.sentBytesPerSec", 2048.5);
  m.Add("gpu.0.gpu", 98);
  m.Add("gpu.0.temp", 71);
  m.Add("gpu.1.gpu", 0);
  m.Add("gpu.1.temp", 40);
  m.Add("gpu.0.smClock", 1980);
  m.Add("gpu.0.energyJoules", 1234.5);
  m.Add("gpu.process.0.gpu", 95);
  m.Add("gpu.0.clocksEventReasons", 4);
  m.Add("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 97);
  m.Add("runmon.sampleMillis", 1.5);
  sample.collectors = {{"cpu", 0.00025, true}, {"process_tree", 0.0011, true}, {"nvidia", 0.0032, false}};
  return sample;
}

// The pattern with its placeholder filled in.
inline std::string ExampleKey(std::string_view pattern) {
  std::string key(pattern);
  const size_t open = key.find('{');
  if (open == std::string::npos) return key;
  const size_t close = key.find('}', open);
  const std::string_view placeholder = std::string_view(key).substr(open + 1, close - open - 1);
  const std::string value = placeholder == "path" ? "/data" : placeholder == "dev" ? "nvme0n1" : "1";
  return key.replace(open, close - open + 1, value);
}

inline Sample EveryPatternSample() {
  Sample sample;
  sample.timestamp = 1780000000.5;
  double value = 0.25;
  for (const MetricDefinition& definition : MetricCatalog()) {
    sample.metrics.Add(ExampleKey(definition.pattern), value);
    value = value * 3 + 1;
  }
  // Hostile label values and the values the text format spells in words.
  sample.metrics.Add("disk./odd \"quoted\" \\ back\nline.usageGB", 1e300);
  sample.metrics.Add("disk.sd\xff.in", 1.0 / 3.0);
  sample.metrics.Add("gpu.7.temp", std::numeric_limits<double>::quiet_NaN());
  sample.metrics.Add("gpu.7.powerWatts", std::numeric_limits<double>::infinity());
  sample.metrics.Add("gpu.7.fanSpeed", -std::numeric_limits<double>::infinity());
  sample.metrics.Add("openmetrics.node.node_load1", 0.5);
  sample.collectors = {{"cpu", 0.00025, true}, {"openmetrics \"odd\" \\ name\n", 1e-9, false}};
  return sample;
}

}  // namespace runmon::test
