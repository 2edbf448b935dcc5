// Fuzzes the --listen / --metrics-listen parser (HOST:PORT, [IPV6]:PORT): any bytes in. An accepted
// address has a port in 0..65535 and a host without brackets, and formatting it gives text that parses
// back to the same address.
#include <cstddef>
#include <cstdint>
#include <string>

#include "export/metrics_server.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parsed = runmon::ParseListenAddress(runmon::fuzz::AsText(data, size));
  if (!parsed) {
    FUZZ_CHECK(!parsed.error().empty());
    return 0;
  }
  FUZZ_CHECK(parsed->port >= 0 && parsed->port <= 65535);
  FUZZ_CHECK(!parsed->host.empty() && parsed->host.find_first_of("[]") == std::string::npos);
  const auto again = runmon::ParseListenAddress(runmon::FormatListenAddress(*parsed));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->host == parsed->host && again->port == parsed->port);
  return 0;
}
