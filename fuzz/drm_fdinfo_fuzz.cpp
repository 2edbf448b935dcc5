// Fuzzes ParseDrmFdinfo (amdgpu's /proc/PID/fdinfo/FD): no crash; a file that is no DRM client reads as
// empty; an accepted client's address is lower-case hex with ':' and '.', its engines are named, and old
// kernels' ring percentages are finite and not negative.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "collectors/amd/drm_fdinfo_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto info = runmon::amd::ParseDrmFdinfo(runmon::fuzz::AsText(data, size));
  if (!info) {
    FUZZ_CHECK(!info.error().empty());
    return 0;
  }
  if (!info->IsDrmClient()) {
    FUZZ_CHECK(!info->client_id && !info->pasid && !info->vram_bytes && !info->gtt_bytes);
    FUZZ_CHECK(info->engines.empty());
    return 0;
  }
  for (char c : info->pci_address) {
    FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.');
  }
  for (const auto& engine : info->engines) {
    FUZZ_CHECK(!engine.name.empty());
    if (engine.percent) FUZZ_CHECK(std::isfinite(engine.busy_percent) && engine.busy_percent >= 0);
  }
  return 0;
}
