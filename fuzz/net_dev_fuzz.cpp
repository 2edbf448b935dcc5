// Fuzzes ParseNetDev (/proc/net/dev): no crash; interface names are non-empty, trimmed, without '|'.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto devices = runmon::ParseNetDev(runmon::fuzz::AsText(data, size));
  if (!devices) {
    FUZZ_CHECK(!devices.error().empty());
    return 0;
  }
  for (const auto& device : *devices) {
    FUZZ_CHECK(!device.name.empty());
    FUZZ_CHECK(device.name.find('|') == std::string::npos);
    FUZZ_CHECK(device.name.find('\n') == std::string::npos);
    FUZZ_CHECK(device.name.front() != ' ' && device.name.back() != ' ');
  }
  return 0;
}
