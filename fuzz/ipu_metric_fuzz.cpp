// Fuzzes ParseIpuMetric (W&B's parse_metric) and IsPossible: the input's first line is the key, the rest
// the value. A parsed value is finite, its key is the field's name or that name with one " (unit)"
// appended, and nothing crashes on any bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "collectors/ipu/ipu_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  const size_t newline = text.find('\n');
  const std::string_view key = text.substr(0, newline);
  const std::string_view value =
      newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  const auto metric = runmon::ipu::ParseIpuMetric(key, value);
  if (!metric) return 0;
  FUZZ_CHECK(std::isfinite(metric->value));
  FUZZ_CHECK(metric->key.starts_with(key));
  const std::string_view added = std::string_view(metric->key).substr(key.size());
  FUZZ_CHECK(added.empty() || (added.starts_with(" (") && added.ends_with(")")));
  (void)runmon::ipu::IsPossible(*metric);
  return 0;
}
