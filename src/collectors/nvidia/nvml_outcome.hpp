// Call-outcome handling for the NVIDIA collector: what NVML's answer to one call means for the device
// and the metric family asked (each family is one NVML query; they are switched off one by one).
//   - success: the value is reported;
//   - NOT_SUPPORTED, FUNCTION_NOT_FOUND, DEPRECATED, NO_PERMISSION: the family is switched off for that
//     device for good (no failing call every tick; MIG instances and passive-cooled boards hit this);
//   - GPU_IS_LOST, RESET_REQUIRED, GPU_NOT_FOUND: the device is gone; it is reported once (the collector
//     shows as degraded) and not asked again; the other devices carry on;
//   - anything else: nothing this tick, asked again next tick.
// A family whose function the driver lacks is never asked. Another GPU family maps its own error codes
// onto the same four outcomes.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>

#include "collectors/nvidia/nvml_api.hpp"

namespace runmon::nvidia {

enum Family : size_t {
  kUtilization,
  kMemory,
  kMemoryV2,
  kTemperature,
  kTemperatureV,
  kPower,
  kPowerLimit,
  kEnergy,
  kClockSm,
  kClockMem,
  kClockGraphics,
  kEccCorrected,
  kEccUncorrected,
  kEncoder,
  kFan,
  kClockReasons,
  kComputeProcesses,
  kGraphicsProcesses,
  kProcessUtilization,
  kGpm,
  kFamilyCount
};

enum class Outcome { kValue, kSwitchedOff, kLost, kRetry };

Outcome Classify(nvml::Return code);

// What the device's answers so far have decided: families switched off, or the device gone and why.
struct DeviceHealth {
  std::bitset<kFamilyCount> off;
  bool lost = false;
  std::string lost_reason;
};

// True when `code` is success; otherwise switches the family off, marks the device lost (the reason
// names `what` and NVML's words for the code), or leaves it for the next tick.
bool Handle(const nvml::Library& library, DeviceHealth& health, Family family, nvml::Return code,
            std::string_view what);

// Whether `family` should be asked: the driver has the function and the device has not said no.
template <typename Function>
bool Ask(const DeviceHealth& health, Family family, Function function) {
  return function != nullptr && !health.off.test(family) && !health.lost;
}

}  // namespace runmon::nvidia
