// Unit tests of the TUI's number formatting: catalog units scaled to at most three significant digits,
// byte units in binary steps (both ways), k/M suffixes, non-finite values, durations and history steps.
#include "tui/value_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace runmon::tui {
namespace {

TEST(FormatValue, Percent) {
  EXPECT_EQ(FormatValue(87.46, "%"), "87.5%");
  EXPECT_EQ(FormatValue(0, "%"), "0%");
  EXPECT_EQ(FormatValue(100, "%"), "100%");
  EXPECT_EQ(FormatValue(99.96, "%"), "100%");
  EXPECT_EQ(FormatValue(5.25, "%"), "5.25%");
  EXPECT_EQ(FormatValue(0.5, "%"), "0.5%");
  EXPECT_EQ(FormatValue(-3.5, "%"), "-3.5%");
  EXPECT_EQ(FormatValue(12800, "%"), "12800%");
}

TEST(FormatValue, BinaryByteUnits) {
  EXPECT_EQ(FormatValue(1536, "MiB"), "1.5 GiB");
  EXPECT_EQ(FormatValue(512, "MiB"), "512 MiB");
  EXPECT_EQ(FormatValue(1023, "MiB"), "1023 MiB");
  EXPECT_EQ(FormatValue(1023.96, "MiB"), "1 GiB");  // scaled after rounding
  EXPECT_EQ(FormatValue(0.5, "MiB"), "512 KiB");    // and down
  EXPECT_EQ(FormatValue(0, "MiB"), "0 MiB");
  EXPECT_EQ(FormatValue(3 * 1024.0 * 1024 * 1024, "bytes"), "3 GiB");
  EXPECT_EQ(FormatValue(512, "bytes"), "512 B");
  EXPECT_EQ(FormatValue(2.5 * 1024 * 1024 * 1024 * 1024, "bytes"), "2.5 TiB");
  EXPECT_EQ(FormatValue(80, "GiB"), "80 GiB");
  EXPECT_EQ(FormatValue(-1536, "MiB"), "-1.5 GiB");
}

TEST(FormatValue, ByteRatesKeepPerSecond) {
  EXPECT_EQ(FormatValue(12.4e6, "bytes/s"), "11.8 MiB/s");
  EXPECT_EQ(FormatValue(100, "bytes/s"), "100 B/s");
  EXPECT_EQ(FormatValue(2048, "MiB/s"), "2 GiB/s");
  EXPECT_EQ(FormatValue(0, "bytes/s"), "0 B/s");
}

TEST(FormatValue, CountAndUnitlessUseDecimalSuffixes) {
  EXPECT_EQ(FormatValue(3100, "count"), "3.1k");
  EXPECT_EQ(FormatValue(7, "count"), "7");
  EXPECT_EQ(FormatValue(999, "count"), "999");
  EXPECT_EQ(FormatValue(999.7, "count"), "1k");
  EXPECT_EQ(FormatValue(12345678, "count"), "12.3M");
  EXPECT_EQ(FormatValue(-4200, "count"), "-4.2k");
  EXPECT_EQ(FormatValue(3.2e9, ""), "3.2G");
  EXPECT_EQ(FormatValue(0.25, ""), "0.25");
  EXPECT_EQ(FormatValue(1500, "count/s"), "1.5k/s");
}

TEST(FormatValue, OtherUnitsKeepTheirName) {
  EXPECT_EQ(FormatValue(350, "W"), "350 W");
  EXPECT_EQ(FormatValue(71, "°C"), "71 °C");
  EXPECT_EQ(FormatValue(1410, "MHz"), "1410 MHz");
  EXPECT_EQ(FormatValue(12.5, "ms"), "12.5 ms");
  EXPECT_EQ(FormatValue(2.25, "CPUs"), "2.25 CPUs");
  EXPECT_EQ(FormatValue(3.5e6, "J"), "3.5M J");
  EXPECT_EQ(FormatValue(-40, "°C"), "-40 °C");
}

TEST(FormatValue, AtMostThreeSignificantDigits) {
  EXPECT_EQ(FormatValue(1.23456, ""), "1.23");
  EXPECT_EQ(FormatValue(12.3456, ""), "12.3");
  EXPECT_EQ(FormatValue(123.456, ""), "123");
  EXPECT_EQ(FormatValue(0.123456, ""), "0.123");
  EXPECT_EQ(FormatValue(0.00123456, ""), "0.00123");
  EXPECT_EQ(FormatValue(2.0, ""), "2");
  EXPECT_EQ(FormatValue(1.10, ""), "1.1");
}

TEST(FormatValue, TinyValuesUseAnExponent) {
  EXPECT_EQ(FormatValue(3e-4, ""), "3e-4");
  EXPECT_EQ(FormatValue(1.5e-5, ""), "1.5e-5");
  EXPECT_EQ(FormatValue(-2.5e-7, ""), "-2.5e-7");
  EXPECT_EQ(FormatValue(9.999e-5, ""), "1e-4");
}

TEST(FormatValue, NonFinite) {
  EXPECT_EQ(FormatValue(std::nan(""), "%"), "nan");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity(), "W"), "inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity(), "MiB"), "-inf");
}

TEST(FormatValue, ExtremesStayShort) {
  for (const char* unit : {"", "count", "bytes", "MiB", "%", "W", "bytes/s"}) {
    for (const double value : {1e300, -1e300, 1e-300, 5e-324, std::numeric_limits<double>::max()}) {
      const std::string text = FormatValue(value, unit);
      EXPECT_LE(text.size(), 16u) << value << " " << unit << " -> " << text;
      EXPECT_FALSE(text.empty());
    }
  }
}

TEST(FormatDuration, Examples) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(45), "45s");
  EXPECT_EQ(FormatDuration(750), "12m30s");
  EXPECT_EQ(FormatDuration(11100), "3h05m");
  EXPECT_EQ(FormatDuration(187200), "2d04h");
  EXPECT_EQ(FormatDuration(93900), "26h05m");  // hours up to two days
  EXPECT_EQ(FormatDuration(60), "1m00s");
  EXPECT_EQ(FormatDuration(59.6), "59.6s");   // under a minute: to the tenth of a second
  EXPECT_EQ(FormatDuration(59.96), "59.9s");  // truncated like a clock
  EXPECT_EQ(FormatDuration(10.5), "10.5s");
  EXPECT_EQ(FormatDuration(3.7), "3.7s");
  EXPECT_EQ(FormatDuration(45.25), "45.2s");
  EXPECT_EQ(FormatDuration(3600), "1h00m");
  EXPECT_EQ(FormatDuration(3659), "1h00m");
  EXPECT_EQ(FormatDuration(2.5), "2.5s");
  EXPECT_EQ(FormatDuration(2.3), "2.3s");
  EXPECT_EQ(FormatDuration(9.96), "9.9s");
  EXPECT_EQ(FormatDuration(59.9999999), "1m00s");  // within rounding error of a whole second
  EXPECT_EQ(FormatDuration(0.04), "0s");
}

TEST(FormatDuration, NegativeAndNonFinite) {
  EXPECT_EQ(FormatDuration(-45), "-45s");
  EXPECT_EQ(FormatDuration(-750), "-12m30s");
  EXPECT_EQ(FormatDuration(-0.01), "0s");
  EXPECT_EQ(FormatDuration(std::nan("")), "nan");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_FALSE(FormatDuration(1e300).empty());
}

TEST(FormatStep, Examples) {
  EXPECT_EQ(FormatStep(0), "0");
  EXPECT_EQ(FormatStep(950), "950");
  EXPECT_EQ(FormatStep(1200), "1.2k");
  EXPECT_EQ(FormatStep(1000), "1k");
  EXPECT_EQ(FormatStep(3.4e6), "3.4M");
  EXPECT_EQ(FormatStep(12345), "12.3k");
  EXPECT_EQ(FormatStep(999.6), "1k");
  EXPECT_EQ(FormatStep(2.4), "2");
  EXPECT_EQ(FormatStep(-0.2), "0");
  EXPECT_EQ(FormatStep(-500), "-500");
}

}  // namespace
}  // namespace runmon::tui
