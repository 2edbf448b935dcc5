// Numbers for people: chart axes, legends and tables show a value with its catalog unit in at most about
// eight columns ("87.5%", "1.2 GiB", "350 W", "12.4 MB/s", "3.1k"), durations as "3.7s", "12m30s", "26h05m".
#pragma once

#include <string>
#include <string_view>

namespace runmon::tui {

// `value` in `unit` (a catalog unit), scaled to a readable magnitude: byte units step by 1024 (bytes ->
// KiB -> MiB -> GiB -> TiB; MiB and GiB values scale from there), rates keep their "/s", "count" and ""
// use k/M/G suffixes, other units keep their name. NaN and infinities print as "nan", "inf", "-inf".
std::string FormatValue(double value, std::string_view unit);
// Seconds as "0s", "3.7s", "45.2s", "12m30s", "3h05m", "2d04h" (negative durations get a leading '-').
std::string FormatDuration(double seconds);
// A history step count: "0", "950", "1.2k", "3.4M".
std::string FormatStep(double step);

}  // namespace runmon::tui
