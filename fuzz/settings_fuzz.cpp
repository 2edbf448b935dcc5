// Fuzzes the settings parsers: ParseDurationSeconds, ApplySetAssignment, SettingNameFromEnvironment and
// ApplyEnvironment (one "NAME=VALUE" per input line), checking the values they accept stay in range and
// the disk paths they keep are normal and unique.
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.hpp"
#include "fuzz_check.hpp"

namespace {

void CheckSettings(const runmon::Settings& s) {
  FUZZ_CHECK(std::isfinite(s.interval_seconds));
  FUZZ_CHECK(s.interval_seconds >= runmon::kMinIntervalSeconds);
  FUZZ_CHECK(!s.disk_paths.empty());
  // Disk paths are already normal: normalising them again changes nothing (no repeats, no empty path).
  const auto normalised = runmon::NormalizeDiskPaths(s.disk_paths);
  FUZZ_CHECK(normalised.ok() && *normalised == s.disk_paths);
  if (s.cpu_count) FUZZ_CHECK(*s.cpu_count >= 0);
  if (s.cpu_logical_count) FUZZ_CHECK(*s.cpu_logical_count >= 0);
  if (s.gpu_count) FUZZ_CHECK(*s.gpu_count >= 0);
  FUZZ_CHECK(runmon::ValidateLabel(s.label).ok());  // x_label holds only what its check accepts
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);

  if (const auto seconds = runmon::ParseDurationSeconds(text)) {
    FUZZ_CHECK(std::isfinite(*seconds));
    FUZZ_CHECK(*seconds >= 0 && *seconds <= 86400.0 * 365);
  } else {
    FUZZ_CHECK(!seconds.error().empty());
  }

  {
    runmon::Settings settings;
    const auto status = runmon::ApplySetAssignment(settings, text);
    if (!status) FUZZ_CHECK(!status.error().empty());
    CheckSettings(settings);  // a rejected assignment must not leave an out-of-range value behind either
  }

  const std::string_view variable = text.substr(0, text.find('='));
  if (const auto name = runmon::SettingNameFromEnvironment(variable)) {
    FUZZ_CHECK((name->starts_with("x_stats_") && name->size() > 8) || *name == "x_label");
    for (char c : *name) FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)));
  }

  std::vector<std::string> environment;
  size_t start = 0;
  while (start < text.size() && environment.size() < 64) {
    const size_t nl = text.find('\n', start);
    environment.emplace_back(text.substr(start, nl == std::string_view::npos ? text.npos : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  runmon::Settings settings;
  if (const auto status = runmon::ApplyEnvironment(settings, environment); !status) {
    FUZZ_CHECK(!status.error().empty());
  }
  CheckSettings(settings);
  return 0;
}
