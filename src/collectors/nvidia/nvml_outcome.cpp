// NVML return codes -> value, switched off, lost, retry (see nvml_outcome.hpp).
#include "collectors/nvidia/nvml_outcome.hpp"

#include <fmt/format.h>

namespace runmon::nvidia {

Outcome Classify(nvml::Return code) {
  switch (code) {
    case nvml::kSuccess:
      return Outcome::kValue;
    case nvml::kNotSupported:
    case nvml::kFunctionNotFound:
    case nvml::kDeprecated:
    case nvml::kNoPermission:
      return Outcome::kSwitchedOff;
    case nvml::kGpuIsLost:
    case nvml::kResetRequired:
    case nvml::kGpuNotFound:
      return Outcome::kLost;
    default:
      return Outcome::kRetry;
  }
}

bool Handle(const nvml::Library& library, DeviceHealth& health, Family family, nvml::Return code,
            std::string_view what) {
  switch (Classify(code)) {
    case Outcome::kValue:
      return true;
    case Outcome::kSwitchedOff:
      health.off.set(family);
      return false;
    case Outcome::kLost:
      health.lost = true;
      health.lost_reason = fmt::format("{} answered: {}", what, library.ErrorString(code));
      return false;
    case Outcome::kRetry:
      return false;
  }
  return false;
}

}  // namespace runmon::nvidia
