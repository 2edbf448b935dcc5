// Fuzzes leet's config file parser and --set's assignments (tui/leet_config.hpp) with the same bytes: a
// document that parses is serialised, and the result must parse again with no warning to the same config
// and serialise to the same text (a save never changes what was read, nor loses a kept key); a document
// that does not parse, and a bad assignment, give a message in valid UTF-8 (it is printed). An accepted
// assignment gives a config that round-trips too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/utf8.hpp"
#include "fuzz_check.hpp"
#include "tui/leet_config.hpp"

namespace {

using runmon::tui::LeetConfig;

void CheckRoundTrip(const LeetConfig& config) {
  const std::string text = runmon::tui::SerializeLeetConfig(config);
  FUZZ_CHECK(runmon::IsValidUtf8(text));
  if (text.size() > runmon::tui::kMaxLeetConfigBytes) return;  // indentation can grow a large document
  auto again = runmon::tui::ParseLeetConfig(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->warnings.empty());
  FUZZ_CHECK(again->config == config);
  FUZZ_CHECK(runmon::tui::SerializeLeetConfig(again->config) == text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  auto parsed = runmon::tui::ParseLeetConfig(text);
  if (parsed.ok()) {
    for (const std::string& warning : parsed->warnings) FUZZ_CHECK(runmon::IsValidUtf8(warning));
    CheckRoundTrip(parsed->config);
  } else {
    FUZZ_CHECK(runmon::IsValidUtf8(parsed.error()));
  }
  LeetConfig assigned;
  if (auto status = runmon::tui::ApplyLeetConfigAssignment(text, assigned); status.ok()) {
    CheckRoundTrip(assigned);
  } else {
    FUZZ_CHECK(runmon::IsValidUtf8(status.error()));
    FUZZ_CHECK(assigned == LeetConfig{});
  }
  return 0;
}
