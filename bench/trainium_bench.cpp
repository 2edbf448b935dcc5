// trainium_bench: what one neuron-monitor document costs runmon: the parse (simdjson On-Demand, the
// fields runmon reads) plus the trn.* keys emitted for every runtime, repeated over a document, as CPU
// time per document (getrusage over the loop). Beside it, the same document parsed whole into a
// nlohmann::json tree (what a DOM parser costs, and what the streaming tool did before the Trainium family
// parsed lines itself). bench/run_trainium_bench.py runs it on the synthetic trn1.32xlarge document beside
// Python's json.loads and W&B's legacy extraction of the same keys.
// Usage: trainium_bench DOCUMENT [iterations=2000]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench_clock.hpp"
#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "collectors/trainium/trainium_emit.hpp"

using runmon::bench::RusageCpuSeconds;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: trainium_bench DOCUMENT [iterations]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string line;
  if (!std::getline(in, line) || line.empty()) {
    std::fprintf(stderr, "trainium_bench: no document in %s\n", argv[1]);
    return 1;
  }
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 2000;
  runmon::trainium::NeuronDocumentParser parser;
  size_t keys = 0;
  const auto parse_and_emit = [&] {
    auto document = parser.Parse(line);
    if (!document) {
      std::fprintf(stderr, "trainium_bench: %s\n", document.error().c_str());
      std::exit(1);
    }
    runmon::MetricBatch batch;
    runmon::trainium::EmitNeuronDocument(*document, [](long) { return true; }, {}, batch);
    keys = batch.items().size();
  };
  parse_and_emit();  // the parser's buffers, grown once
  double cpu = RusageCpuSeconds();
  for (int i = 0; i < iterations; ++i) parse_and_emit();
  const double runmon_us = (RusageCpuSeconds() - cpu) / iterations * 1e6;
  size_t runtimes = 0;
  cpu = RusageCpuSeconds();
  for (int i = 0; i < iterations; ++i) {
    const nlohmann::json tree = nlohmann::json::parse(line);
    runtimes = tree["neuron_runtime_data"].size();
  }
  const double dom_us = (RusageCpuSeconds() - cpu) / iterations * 1e6;
  std::printf("document: %zu bytes, %zu runtimes, %zu keys\n", line.size(), runtimes, keys);
  std::printf("runmon parse+emit: %.1f us/document\n", runmon_us);
  std::printf("nlohmann::json DOM parse alone: %.1f us/document (%.1fx runmon)\n", dom_us, dom_us / runmon_us);
  return 0;
}
