// Fuzzes ParseConstantLabels (the labels file in a remote-write queue's directory, read back from disk): no
// crash, leak or hang on any text; what it accepts is within the bounds and renders to a file that parses
// back to the same labels.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "remote_write/constant_labels.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runmon::remote_write;
  const auto parsed = ParseConstantLabels(runmon::fuzz::AsText(data, size));
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.error().empty());
    return 0;
  }
  for (const std::string* value : {&parsed->host, &parsed->run_id, &parsed->job_id, &parsed->node_rank}) {
    FUZZ_CHECK(value->size() <= kMaxConstantLabelBytes);
  }
  const auto again = ParseConstantLabels(RenderConstantLabels(*parsed));
  FUZZ_CHECK(again.ok() && *again == *parsed);
  return 0;
}
