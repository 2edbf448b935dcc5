// Fuzzes the conversion of libtpu SDK value strings (collectors/tpu/tpu_emit.hpp) for every metric of the
// registry: the input's first line is the description, the others the values (raw bytes, any length). No
// crash, no hang; every key is the catalog's, once; every value can be true (finite, percentages within
// 0-100, latencies and sizes not negative, HBM in use never above the total).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "collectors/tpu/tpu_emit.hpp"
#include "core/catalog.hpp"
#include "fuzz_check.hpp"

namespace {

void CheckSample(const runmon::tpu::TpuSample& sample) {
  runmon::MetricBatch batch;
  sample.AppendTo(batch);
  std::set<std::string> keys;
  std::map<std::string, double> values;
  for (const runmon::Metric& metric : batch.items()) {
    FUZZ_CHECK(keys.insert(metric.key).second);
    const runmon::MetricDefinition* definition = runmon::FindMetricDefinition(metric.key);
    FUZZ_CHECK(definition != nullptr);
    FUZZ_CHECK(definition->source == "tpu");
    FUZZ_CHECK(std::isfinite(metric.value));
    if (definition->unit == "%") FUZZ_CHECK(metric.value >= 0 && metric.value <= 100);
    if (definition->unit == "µs" || definition->unit == "Mbit/s" || definition->unit == "bytes") {
      FUZZ_CHECK(metric.value >= 0);
    }
    values[metric.key] = metric.value;
  }
  for (const auto& [key, value] : values) {
    if (!key.ends_with(".hbmCapacityUsage")) continue;
    const auto total = values.find(key.substr(0, key.size() - 5) + "Total");
    if (total != values.end()) FUZZ_CHECK(value <= total->second);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  runmon::tpu::SdkMetricValues values;
  size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string_view line = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (first) {
      values.description = std::string(line);
      first = false;
    } else {
      values.values.emplace_back(line);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  const runmon::tpu::DeviceLayout layout{.duty_cycle_fanout = size % 2 == 0 ? 1u : 2u,
                                         .device_count = static_cast<unsigned>(size % 9)};
  runmon::tpu::TpuSample all;
  for (const runmon::tpu::MetricSpec& spec : runmon::tpu::MetricSpecs()) {
    runmon::tpu::TpuSample one;
    runmon::tpu::EmitSdkValues(spec, values, layout, one);
    runmon::tpu::EmitSdkValues(spec, values, layout, all);
    CheckSample(one);
  }
  all.AddHbmMemoryUsage();
  CheckSample(all);
  return 0;
}
