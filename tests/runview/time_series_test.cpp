// Unit tests of TimeSeries: x stored as offsets from the first x, clock steps back clamped, non-finite
// values dropped, IndexRange's half-open bounds, and YExtent / PositiveYExtent against a brute-force scan
// on random data (every range shape: inside one block, across blocks and super blocks, empty, clamped).
#include "runview/time_series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <utility>

namespace runmon::runview {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Extent BruteExtent(const TimeSeries& series, size_t first, size_t last, bool positive_only) {
  Extent extent;
  for (size_t i = first; i < last && i < series.size(); ++i) {
    if (!positive_only || series.y(i) > 0) extent.Add(series.y(i));
  }
  return extent;
}

void ExpectSameExtent(const Extent& actual, const Extent& expected, size_t first, size_t last) {
  ASSERT_EQ(actual.empty, expected.empty) << "[" << first << ", " << last << ")";
  if (expected.empty) return;
  EXPECT_EQ(actual.min, expected.min) << "[" << first << ", " << last << ")";
  EXPECT_EQ(actual.max, expected.max) << "[" << first << ", " << last << ")";
}

TEST(Extent, AddValuesAndExtents) {
  Extent extent;
  EXPECT_TRUE(extent.empty);
  extent.Add(3.0f);
  EXPECT_FALSE(extent.empty);
  EXPECT_EQ(extent.min, 3.0f);
  EXPECT_EQ(extent.max, 3.0f);
  extent.Add(-1.0f);
  extent.Add(2.0f);
  EXPECT_EQ(extent.min, -1.0f);
  EXPECT_EQ(extent.max, 3.0f);
  Extent other;
  extent.Add(other);  // empty: no change
  EXPECT_EQ(extent.min, -1.0f);
  other.Add(10.0f);
  extent.Add(other);
  EXPECT_EQ(extent.max, 10.0f);
  Extent fresh;
  fresh.Add(other);
  EXPECT_FALSE(fresh.empty);
  EXPECT_EQ(fresh.min, 10.0f);
}

TEST(TimeSeries, StoresOffsetsFromTheFirstX) {
  TimeSeries series;
  EXPECT_TRUE(series.empty());
  series.Append(1.7e9, 1.0);
  series.Append(1.7e9 + 0.5, 2.0);
  series.Append(1.7e9 + 86400, 3.0);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_DOUBLE_EQ(series.first_x(), 1.7e9);
  EXPECT_DOUBLE_EQ(series.x(1), 1.7e9 + 0.5);  // a float offset keeps half seconds a day into the run
  EXPECT_DOUBLE_EQ(series.last_x(), 1.7e9 + 86400);
  EXPECT_EQ(series.y(1), 2.0f);
  EXPECT_EQ(series.last_y(), 3.0f);
}

TEST(TimeSeries, ClockStepBackIsStoredAtTheLastX) {
  TimeSeries series;
  series.Append(10, 1);
  series.Append(20, 2);
  series.Append(15, 3);  // back in time
  series.Append(25, 4);
  ASSERT_EQ(series.size(), 4u);
  EXPECT_EQ(series.x(2), 20.0);
  EXPECT_EQ(series.y(2), 3.0f);
  EXPECT_EQ(series.x(3), 25.0);
  EXPECT_EQ(series.IndexRange(20, 21), (std::pair<size_t, size_t>{1, 3}));
}

TEST(TimeSeries, DropsNonFinitePoints) {
  TimeSeries series;
  series.Append(0, std::nan(""));
  EXPECT_TRUE(series.empty());
  series.Append(1, 5);
  series.Append(2, kInf);
  series.Append(3, -kInf);
  series.Append(std::nan(""), 6);
  series.Append(kInf, 6);
  series.Append(4, 1e300);  // beyond float
  series.Append(5, 7);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series.first_x(), 1.0);
  EXPECT_EQ(series.last_x(), 5.0);
  EXPECT_EQ(series.YExtent().max, 7.0f);
}

TEST(TimeSeries, IndexRangeIsHalfOpen) {
  TimeSeries series;
  for (int i = 0; i < 10; ++i) series.Append(100 + i * 10, i);  // x = 100, 110, ..., 190
  using Range = std::pair<size_t, size_t>;
  EXPECT_EQ(series.IndexRange(100, 200), (Range{0, 10}));
  EXPECT_EQ(series.IndexRange(110, 130), (Range{1, 3}));
  EXPECT_EQ(series.IndexRange(105, 131), (Range{1, 4}));
  EXPECT_EQ(series.IndexRange(0, 100), (Range{0, 0}));
  EXPECT_EQ(series.IndexRange(191, 1000), (Range{10, 10}));
  EXPECT_EQ(series.IndexRange(150, 150), (Range{5, 5}));
  EXPECT_EQ(series.IndexRange(150, 120), (Range{5, 5}));  // reversed: empty
  EXPECT_EQ(series.IndexRange(-kInf, kInf), (Range{0, 10}));
  const auto [first, last] = series.IndexRange(std::nan(""), std::nan(""));
  EXPECT_EQ(first, last);
  TimeSeries empty;
  EXPECT_EQ(empty.IndexRange(0, 100), (Range{0, 0}));
}

TEST(TimeSeries, IndexRangeMatchesBruteForceWithDuplicates) {
  std::mt19937 random(7);
  TimeSeries series;
  double x = 0;
  for (int i = 0; i < 3000; ++i) {
    x += static_cast<double>(random() % 3);  // many equal xs
    series.Append(x, i);
  }
  std::uniform_real_distribution<double> bound(-5, x + 5);
  for (int trial = 0; trial < 2000; ++trial) {
    const double x0 = bound(random);
    const double x1 = bound(random);
    size_t first = 0;
    while (first < series.size() && series.x(first) < x0) ++first;
    size_t last = first;
    while (last < series.size() && series.x(last) < x1) ++last;
    EXPECT_EQ(series.IndexRange(x0, x1), (std::pair<size_t, size_t>{first, last})) << x0 << " " << x1;
  }
}

TEST(TimeSeries, YExtentMatchesBruteForceOnRandomData) {
  std::mt19937 random(42);
  std::normal_distribution<double> value(0, 100);
  // Sizes around the block (64) and super block (4096) boundaries, and beyond a few super blocks.
  for (const size_t size : {0u, 1u, 63u, 64u, 65u, 4095u, 4096u, 4097u, 20000u}) {
    TimeSeries series;
    for (size_t i = 0; i < size; ++i) series.Append(static_cast<double>(i), value(random));
    ExpectSameExtent(series.YExtent(), BruteExtent(series, 0, size, false), 0, size);
    std::uniform_int_distribution<size_t> index(0, size + 2);
    for (int trial = 0; trial < 400; ++trial) {
      size_t first = index(random);
      size_t last = index(random);
      if (trial % 4 == 0) last = std::min(first + trial % 130, size + 2);  // short ranges
      ExpectSameExtent(series.YExtent(first, last), BruteExtent(series, first, last, false), first, last);
      ExpectSameExtent(series.PositiveYExtent(first, last), BruteExtent(series, first, last, true), first,
                       last);
    }
  }
}

TEST(TimeSeries, YExtentAtEveryBoundaryShape) {
  // A V shape and a spike, so every range has a distinct min and max.
  TimeSeries series;
  constexpr size_t kSize = 9000;
  for (size_t i = 0; i < kSize; ++i) {
    const double y = std::fabs(static_cast<double>(i) - 5000.0) - (i == 4321 ? 100000.0 : 0.0);
    series.Append(static_cast<double>(i), y);
  }
  for (const size_t first : {0u, 1u, 63u, 64u, 65u, 127u, 128u, 4095u, 4096u, 4097u, 4321u, 8191u, 8192u}) {
    for (const size_t last :
         {0u, 1u, 64u, 65u, 4096u, 4097u, 4322u, 8192u, 8193u, 8999u, 9000u, 9001u, 100000u}) {
      ExpectSameExtent(series.YExtent(first, last), BruteExtent(series, first, last, false), first, last);
    }
  }
}

TEST(TimeSeries, PositiveExtentSkipsZeroAndNegative) {
  TimeSeries series;
  for (int i = 0; i < 200; ++i) series.Append(i, i % 2 == 0 ? -1.0 : 0.0);
  EXPECT_TRUE(series.PositiveYExtent(0, 200).empty);
  EXPECT_FALSE(series.YExtent(0, 200).empty);
  series.Append(200, 0.5);
  const Extent positive = series.PositiveYExtent(0, 201);
  EXPECT_FALSE(positive.empty);
  EXPECT_EQ(positive.min, 0.5f);
  EXPECT_EQ(positive.max, 0.5f);
}

TEST(TimeSeries, MemoryStaysNearEightBytesAPoint) {
  TimeSeries series;
  EXPECT_GE(series.MemoryBytes(), sizeof(TimeSeries));
  constexpr size_t kPoints = 86400;
  for (size_t i = 0; i < kPoints; ++i) series.Append(static_cast<double>(i), static_cast<double>(i % 100));
  EXPECT_GE(series.MemoryBytes(), kPoints * 8);
  // Vector growth may leave up to twice the capacity; the summaries add about 0.4 bytes a point.
  EXPECT_LE(series.MemoryBytes(), kPoints * 8 * 2 + kPoints);
}

}  // namespace
}  // namespace runmon::runview
