// Fuzzes ParseAmdSmiMetricJson and ParseAmdSmiListJson (amd-smi metric/list --json) and the pairing of the
// two: no crash, no hang on deep or huge input; every value kept can be true (amd_tool_card_check.hpp);
// every list entry has a normalized PCI address; and pairing the metric cards with the list (the same
// bytes read both ways) gives each card whose number the list has exactly that entry's address.
#include <cstddef>
#include <cstdint>

#include "amd_tool_card_check.hpp"
#include "collectors/amd/amd_smi_parse.hpp"
#include "collectors/amd/tool_values.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  auto cards = runmon::amd::ParseAmdSmiMetricJson(text);
  auto list = runmon::amd::ParseAmdSmiListJson(text);
  FUZZ_CHECK(cards.ok() == list.ok());  // the same document shapes are refused
  if (!cards.ok()) return 0;
  for (const auto& entry : *list) FUZZ_CHECK(runmon::amd::NormalizePciBus(entry.pci_bus) == entry.pci_bus);
  runmon::amd::AssignPciBuses(*cards, *list);
  for (const auto& card : *cards) {
    runmon::fuzz::CheckToolCard(card);
    if (!card.tool_index) continue;
    for (const auto& entry : *list) {
      if (entry.gpu == *card.tool_index) FUZZ_CHECK(card.pci_bus.has_value());
    }
  }
  return 0;
}
