// Value, duration and step formatting for the TUI (see value_format.hpp). Numbers show at most three
// significant digits after the decimal point is placed (whole numbers below 100000 keep every digit,
// so "1410 MHz" and "1023 MiB"), trailing zeros and a trailing point are dropped, and values below 0.001
// switch to "1.5e-4" so a learning rate does not print as 0. Scaling happens after rounding, so 1023.96
// MiB shows "1 GiB", not "1024 MiB". Units:
//   bytes, B, KiB, MiB, GiB, TiB (optionally "/s"): binary steps both ways, "512 B", "1.5 GiB", "11.8 MiB/s"
//   count, "" (optionally "/s" for count): decimal k/M/G/T/P/E suffixes without a space, "3.1k"
//   %: no space, "87.5%"
//   anything else (W, °C, MHz, ms, J, ...): the unit kept after a space; values of 10000 or more take a
//   decimal suffix on the number ("12.5k J"). MHz stays MHz ("1410 MHz"), as the catalog names it.
// Durations are truncated like a clock, not rounded; under a minute they keep a tenth when they have one
// ("3.7s", "45.2s": a run's runtime beside charts that end at 3.7 s); hours and minutes are used below two
// days ("26h05m"), days and hours from there ("2d04h"). The dashboard (web/src/format.ts) uses the same rule.
#include "tui/value_format.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace runmon::tui {
namespace {

// Decimals that keep three significant digits for a magnitude of at least 0.001.
int Decimals(double magnitude) {
  if (magnitude >= 100) return 0;
  if (magnitude >= 10) return 1;
  if (magnitude >= 1) return 2;
  if (magnitude >= 0.1) return 3;
  if (magnitude >= 0.01) return 4;
  return 5;
}

// `value` as it will print: rounded to its decimals (for the scaling decisions).
double Rounded(double value) {
  const double scale = std::pow(10.0, Decimals(std::fabs(value)));
  return std::round(value * scale) / scale;
}

void StripZeros(std::string* text) {
  const size_t point = text->find('.');
  if (point == std::string::npos) return;
  while (text->back() == '0') text->pop_back();
  if (text->back() == '.') text->pop_back();
}

// A plain number: three significant digits, "0" for zero, scientific beyond what fits in a few columns.
std::string FormatNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return "0";
  if (magnitude < 0.001 || Rounded(magnitude) >= 1e5) {
    // fmt's "1.50e-04" as "1.5e-4".
    const std::string scientific = fmt::format("{:.2e}", value);
    const size_t e = scientific.find('e');
    std::string mantissa = scientific.substr(0, e);
    StripZeros(&mantissa);
    return fmt::format("{}e{}", mantissa, std::stoi(scientific.substr(e + 1)));
  }
  std::string text = fmt::format("{:.{}f}", value, Decimals(magnitude));
  StripZeros(&text);
  if (text == "-0") text = "0";
  return text;
}

// `value` scaled by `base` until it prints below `base` (or the suffixes run out), with the suffix index.
struct Scaled {
  double value;
  size_t index;
};
Scaled ScaleUp(double value, double base, size_t start, size_t count) {
  size_t index = start;
  while (index + 1 < count && std::fabs(Rounded(value)) >= base) {
    value /= base;
    ++index;
  }
  return {value, index};
}

constexpr std::array<const char*, 7> kDecimalSuffixes = {"", "k", "M", "G", "T", "P", "E"};
constexpr std::array<const char*, 6> kByteUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

std::string WithDecimalSuffix(double value) {
  const Scaled scaled = ScaleUp(value, 1000, 0, kDecimalSuffixes.size());
  if (std::fabs(Rounded(scaled.value)) >= 1000) return FormatNumber(value);  // beyond the suffixes
  return FormatNumber(scaled.value) + kDecimalSuffixes[scaled.index];
}

int ByteUnitIndex(std::string_view unit) {
  if (unit == "bytes" || unit == "B") return 0;
  for (size_t i = 1; i < kByteUnits.size(); ++i) {
    if (unit == kByteUnits[i]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string FormatValue(double value, std::string_view unit) {
  if (!std::isfinite(value)) return FormatNumber(value);
  std::string_view base_unit = unit;
  std::string_view rate;
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    base_unit = unit.substr(0, unit.size() - 2);
    rate = "/s";
  }
  if (const int byte_index = ByteUnitIndex(base_unit); byte_index >= 0) {
    auto index = static_cast<size_t>(byte_index);
    // Small values in a large unit step down ("0.5 MiB" is "512 KiB").
    while (index > 0 && value != 0 && std::fabs(Rounded(value)) < 1) {
      value *= 1024;
      --index;
    }
    const Scaled scaled = ScaleUp(value, 1024, index, kByteUnits.size());
    return fmt::format("{} {}{}", FormatNumber(scaled.value), kByteUnits[scaled.index], rate);
  }
  if (base_unit == "count" || unit.empty()) return WithDecimalSuffix(value) + std::string(rate);
  if (unit == "%") return FormatNumber(value) + "%";
  const std::string number =
      std::fabs(Rounded(value)) >= 10000 ? WithDecimalSuffix(value) : FormatNumber(value);
  return fmt::format("{} {}", number, unit);
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return FormatNumber(seconds);
  if (seconds < 0) {
    std::string positive = FormatDuration(-seconds);
    return positive == "0s" ? positive : "-" + positive;
  }
  // Truncated like a clock (a window from 10.5 s reads "10s"); the epsilon keeps 2.3 from reading 2.2.
  constexpr double kEpsilon = 1e-6;
  if (const double tenths = std::floor(seconds * 10 + kEpsilon); tenths < 600) {
    std::string text = fmt::format("{:.1f}", tenths / 10);
    StripZeros(&text);
    return text + "s";
  }
  constexpr double kMaxWhole = 9.2e18;  // what fits in an int64 second count
  if (seconds >= kMaxWhole) return FormatNumber(seconds / 86400) + "d";
  const auto total = static_cast<int64_t>(seconds + kEpsilon);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  if (total < 2 * 86400) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  return fmt::format("{}d{:02}h", total / 86400, total % 86400 / 3600);
}

std::string FormatStep(double step) {
  if (!std::isfinite(step)) return FormatNumber(step);
  if (std::fabs(std::round(step)) < 1000) {
    const double whole = std::round(step);
    return whole == 0 ? "0" : fmt::format("{:.0f}", whole);
  }
  return WithDecimalSuffix(step);
}

}  // namespace runmon::tui
