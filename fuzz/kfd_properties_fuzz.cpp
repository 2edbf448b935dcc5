// Fuzzes ParseKfdNodeProperties (KFD topology files): no crash; an address is
// made only from both location_id and domain, and always has the "DDDD:BB:DD.F" shape.
#include <cstddef>
#include <cstdint>

#include "collectors/amd/kfd_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  const auto properties = runmon::amd::ParseKfdNodeProperties(text);
  if (!properties) {
    FUZZ_CHECK(!properties.error().empty());
    return 0;
  }
  const auto address = runmon::amd::KfdNodePciAddress(*properties);
  FUZZ_CHECK(address.has_value() == (properties->location_id && properties->domain));
  if (address) {
    FUZZ_CHECK(address->size() >= 12);
    const size_t tail = address->size() - 8;  // ":BB:DD.F" after a domain of 4 or more digits
    FUZZ_CHECK((*address)[tail] == ':' && (*address)[tail + 3] == ':' && (*address)[tail + 6] == '.');
  }
  return 0;
}
