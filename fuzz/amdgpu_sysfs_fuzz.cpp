// Fuzzes the amdgpu sysfs value parsers (amdgpu_sysfs_parse.hpp) on the same input: no crash; a card name
// is accepted only in its one spelling ("card3", never "card03"); an accepted
// DPM table's current level is one of the frequencies it lists or the deep-sleep one, and every frequency
// is finite and not negative.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  if (auto value = runmon::amd::ParseSysfsUnsigned(text); !value) FUZZ_CHECK(!value.error().empty());
  if (auto id = runmon::amd::ParsePciId(text); !id) FUZZ_CHECK(!id.error().empty());
  if (auto card = runmon::amd::ParseCardName(text)) FUZZ_CHECK(text == "card" + std::to_string(*card));
  const auto levels = runmon::amd::ParseDpmLevels(text);
  if (!levels) {
    FUZZ_CHECK(!levels.error().empty());
    return 0;
  }
  FUZZ_CHECK(!levels->mhz.empty() || levels->current);
  for (const double mhz : levels->mhz) FUZZ_CHECK(std::isfinite(mhz) && mhz >= 0);
  const auto current = runmon::amd::ParseCurrentDpmLevelMhz(text);
  FUZZ_CHECK(static_cast<bool>(current) == levels->current.has_value());
  if (current) FUZZ_CHECK(std::isfinite(*current) && *current >= 0);
  return 0;
}
