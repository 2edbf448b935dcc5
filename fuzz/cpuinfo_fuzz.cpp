// Fuzzes ParseCpuinfo (/proc/cpuinfo) and FindOsReleaseValue (/etc/os-release) on the same input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);

  if (const auto info = runmon::ParseCpuinfo(text)) {
    FUZZ_CHECK(info->logical_count >= 1 || !info->model_name.empty());
    FUZZ_CHECK(info->physical_count <= size);
    FUZZ_CHECK(info->model_name.size() <= size);
  } else {
    FUZZ_CHECK(!info.error().empty());
  }

  auto check_value = [&](std::string_view key) {
    if (const auto value = runmon::FindOsReleaseValue(text, key)) {
      FUZZ_CHECK(value->size() < size);
      // Without escapes to undo, the value is a (possibly unquoted) slice of the input.
      if (text.find('\\') == std::string_view::npos) FUZZ_CHECK(text.find(*value) != std::string_view::npos);
    }
  };
  for (std::string_view key : {"ID", "PRETTY_NAME", "VERSION_ID", "NAME", ""}) check_value(key);
  const size_t eq = text.find('=');
  if (eq != std::string_view::npos) check_value(text.substr(0, eq));
  return 0;
}
