// /proc/loadavg's three load averages ("0.52 0.58 0.59 2/345 6789"). The kernel writes each as an integer,
// a point and two digits; anything else (a sign, an exponent, "nan", a missing field) is refused rather
// than guessed at, so a value that cannot be true never leaves runmon.
#pragma once

#include <string_view>

#include "core/result.hpp"

namespace runmon {

struct LoadAverages {
  double one = 0;
  double five = 0;
  double fifteen = 0;
};

Result<LoadAverages> ParseLoadAverages(std::string_view text);

}  // namespace runmon
