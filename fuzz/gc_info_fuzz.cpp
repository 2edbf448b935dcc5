// Fuzzes the gc-info parsers (ParseGcInfoDeviceList, ParseGcInfoDeviceInfo) on the same bytes: no crash;
// an error has a message; device info has at least one field, names non-empty, trimmed, unique and
// within the limits.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "collectors/ipu/ipu_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runmon::ipu;
  const std::string_view text = runmon::fuzz::AsText(data, size);
  auto listed = ParseGcInfoDeviceList(text);
  if (!listed.ok()) FUZZ_CHECK(!listed.error().empty());
  auto device = ParseGcInfoDeviceInfo(text);
  if (!device.ok()) {
    FUZZ_CHECK(!device.error().empty());
    return 0;
  }
  FUZZ_CHECK(!device->fields.empty() && device->fields.size() <= kMaxFieldsPerDevice);
  std::set<std::string> names;
  for (const auto& [name, value] : device->fields) {
    FUZZ_CHECK(!name.empty() && name.size() <= kMaxFieldBytes && value.size() <= kMaxFieldBytes);
    FUZZ_CHECK(name.front() != ' ' && name.back() != ' ');
    FUZZ_CHECK(names.insert(name).second);
  }
  return 0;
}
