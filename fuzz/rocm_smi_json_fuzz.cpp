// Fuzzes ParseRocmSmiJson (rocm-smi -a --json) and the tool-number reader under it: no crash, no hang on
// deep or huge input; the cards come out in strictly increasing card-number order; every value the
// parser keeps is one that can be true (amd_tool_card_check.hpp); and a number that ParseToolNumber takes
// is finite.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "amd_tool_card_check.hpp"
#include "collectors/amd/rocm_smi_parse.hpp"
#include "collectors/amd/tool_values.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  if (auto number = runmon::amd::ParseToolNumber(text, {"Mhz", "MHz"})) FUZZ_CHECK(std::isfinite(*number));
  auto cards = runmon::amd::ParseRocmSmiJson(text);
  if (!cards.ok()) {
    FUZZ_CHECK(!cards.error().empty());
    return 0;
  }
  for (size_t i = 0; i < cards->size(); ++i) {
    const auto& card = (*cards)[i];
    FUZZ_CHECK(card.tool_index.has_value());
    if (i > 0) FUZZ_CHECK(*(*cards)[i - 1].tool_index < *card.tool_index);
    runmon::fuzz::CheckToolCard(card);
  }
  return 0;
}
