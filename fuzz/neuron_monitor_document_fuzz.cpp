// Fuzzes NeuronDocumentParser (one neuron-monitor line) and what runmon makes of a document: no crash, no
// hang on deep, huge or broken input; a document that parses twice parses the same (the parser's reused
// buffers carry nothing over); every key emitted is the catalog's and every value one that can be true
// (percentages within 0-100, byte and count values whole and not negative, the run's host memory
// within the machine's), the metadata always an object.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "collectors/trainium/trainium_emit.hpp"
#include "collectors/trainium/trainium_metadata.hpp"
#include "core/catalog.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static runmon::trainium::NeuronDocumentParser parser;
  const std::string_view text = runmon::fuzz::AsText(data, size);
  auto document = parser.Parse(text);
  auto again = parser.Parse(text);
  FUZZ_CHECK(document.ok() == again.ok());
  if (!document.ok()) {
    FUZZ_CHECK(!document.error().empty());
    return 0;
  }
  FUZZ_CHECK(document->runtimes.size() == again->runtimes.size());
  runmon::MetricBatch batch;
  runmon::trainium::EmitNeuronDocument(
      *document, [](long pid) { return pid % 2 == 0; }, {.host_memory_bytes = 1e12}, batch);
  for (const runmon::Metric& metric : batch.items()) {
    const runmon::MetricDefinition* definition = runmon::FindMetricDefinition(metric.key);
    FUZZ_CHECK(definition != nullptr);
    FUZZ_CHECK(std::isfinite(metric.value) && metric.value >= 0);
    if (definition->unit == "%") FUZZ_CHECK(metric.value <= 100);
    if (definition->unit != "%") FUZZ_CHECK(std::floor(metric.value) == metric.value);
    if (metric.key.starts_with("trn.host_total_memory_usage")) FUZZ_CHECK(metric.value <= 1e12);
  }
  if (auto metadata = runmon::trainium::DescribeTrainium(*document)) {
    FUZZ_CHECK(metadata->is_object() && (*metadata)["trainium"].is_object());
  }
  return 0;
}
