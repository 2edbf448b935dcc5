// Downsample: raw points for short ranges, min/max per bucket in time order for long ones, a shared x
// array, the response-size cap, empty and missing series.
#include "web/downsample.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace runmon::web {
namespace {

runview::TimeSeries Ramp(int points, double step = 1, double slope = 1) {
  runview::TimeSeries series;
  for (int i = 0; i < points; ++i) series.Append(i * step, i * slope);
  return series;
}

TEST(Downsample, FewPointsAreSentAsTheyAre) {
  runview::TimeSeries a = Ramp(5);
  runview::TimeSeries b;
  b.Append(0.5, 10);
  b.Append(2, 20);
  const ChartData data = Downsample({&a, &b, nullptr}, 0, 4, 100);
  EXPECT_TRUE(data.raw);
  ASSERT_EQ(data.x, (std::vector<double>{0, 0.5, 1, 2, 3, 4}));
  ASSERT_EQ(data.values.size(), 3u);
  EXPECT_EQ(data.values[0][0], 0);
  EXPECT_FALSE(data.values[0][1].has_value());
  EXPECT_EQ(data.values[0][5], 4);
  EXPECT_EQ(data.values[1][1], 10);
  EXPECT_EQ(data.values[1][3], 20);
  EXPECT_FALSE(data.values[1][0].has_value());
  for (const auto& value : data.values[2]) EXPECT_FALSE(value.has_value());
}

TEST(Downsample, BucketsKeepMinAndMaxInTimeOrder) {
  runview::TimeSeries rising = Ramp(10000);
  runview::TimeSeries falling = Ramp(10000, 1, -1);
  runview::TimeSeries spiky;
  for (int i = 0; i < 10000; ++i) spiky.Append(i, i == 4321 ? 1000 : 1);
  const ChartData data = Downsample({&rising, &falling, &spiky}, 0, 9999, 100);
  EXPECT_FALSE(data.raw);
  EXPECT_EQ(data.width, 100);
  ASSERT_EQ(data.x.size(), 200u);
  EXPECT_EQ(data.x[0], data.x[1]);
  EXPECT_LT(data.x[1], data.x[2]);
  // Rising: min then max; falling: max then min.
  EXPECT_LT(*data.values[0][0], *data.values[0][1]);
  EXPECT_GT(*data.values[1][0], *data.values[1][1]);
  EXPECT_EQ(*data.values[0][0], 0);
  EXPECT_EQ(*data.values[0][199], 9999);  // the last bucket includes the end
  // The spike survives.
  float highest = 0;
  for (const auto& value : data.values[2]) highest = std::max(highest, static_cast<float>(value.value_or(0)));
  EXPECT_EQ(highest, 1000);
}

TEST(Downsample, WidthIsCappedBySeriesCount) {
  std::vector<runview::TimeSeries> many(30, Ramp(100000));
  std::vector<const runview::TimeSeries*> pointers;
  for (const auto& s : many) pointers.push_back(&s);
  const ChartData data = Downsample(pointers, 0, 99999, 2000);
  EXPECT_EQ(data.width, static_cast<int>(kMaxChartCells / (2 * 31)));
  EXPECT_EQ(data.x.size(), 2 * static_cast<size_t>(data.width));
}

TEST(Downsample, SubRangesAndDegenerateInput) {
  runview::TimeSeries ramp = Ramp(100000);
  const ChartData part = Downsample({&ramp}, 5000, 6000, 100);
  EXPECT_FALSE(part.raw);
  EXPECT_EQ(*part.values[0][0], 5000);
  EXPECT_EQ(*part.values[0].back(), 6000);
  const ChartData inverted = Downsample({&ramp}, 10, 10, 0);
  EXPECT_EQ(inverted.end, 11);
  EXPECT_GE(inverted.width, 1);
  const ChartData nothing = Downsample({}, 0, 1, 800);
  EXPECT_TRUE(nothing.values.empty());
  const ChartData outside = Downsample({&ramp}, 2e5, 3e5, 10);
  EXPECT_TRUE(outside.raw);
  EXPECT_TRUE(outside.x.empty());
}

}  // namespace
}  // namespace runmon::web
