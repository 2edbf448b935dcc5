// Fuzzes ParseLoadAverages (/proc/loadavg): no crash; accepted loads are finite and not negative.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "collectors/linux/loadavg/loadavg_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto loads = runmon::ParseLoadAverages(runmon::fuzz::AsText(data, size));
  if (!loads) {
    FUZZ_CHECK(!loads.error().empty());
    return 0;
  }
  for (const double load : {loads->one, loads->five, loads->fifteen}) {
    FUZZ_CHECK(std::isfinite(load) && load >= 0);
  }
  return 0;
}
