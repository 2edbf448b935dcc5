// Fuzzes ParseIpuHelperLine (a line of runmon's gcipuinfo helper): no crash or hang on deep or huge JSON;
// an error has a message; what is taken stays within the limits, with each device's field names unique.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "collectors/ipu/ipu_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runmon::ipu;
  auto message = ParseIpuHelperLine(runmon::fuzz::AsText(data, size));
  if (!message.ok()) {
    FUZZ_CHECK(!message.error().empty());
    return 0;
  }
  FUZZ_CHECK(message->devices.size() <= kMaxDevices);
  if (message->kind == HelperMessage::Kind::kError) FUZZ_CHECK(!message->error.empty());
  for (const IpuDevice& device : message->devices) {
    FUZZ_CHECK(device.fields.size() <= kMaxFieldsPerDevice);
    std::set<std::string> names;
    for (const auto& [name, value] : device.fields) {
      FUZZ_CHECK(name.size() <= kMaxFieldBytes && value.size() <= kMaxFieldBytes);
      FUZZ_CHECK(names.insert(name).second);
    }
  }
  return 0;
}
