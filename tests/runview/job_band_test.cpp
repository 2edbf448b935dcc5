// The band of one metric across a job's nodes: buckets of the sampling interval aligning nodes that tick at
// different times, min / median / max over odd and even node counts, nodes missing from buckets (left out,
// never 0), one node, ties, offsets between the nodes' clocks, wide ranges, and no non-finite number ever.
#include "runview/job_band.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace runmon::runview {
namespace {

// A series of `values` one per `interval` seconds from `phase`; NaN entries are no point.
TimeSeries Ticks(const std::vector<double>& values, double phase = 0, double interval = 1) {
  TimeSeries series;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) series.Append(phase + static_cast<double>(i) * interval, values[i]);
  }
  return series;
}

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

void ExpectAllFinite(const JobBand& band) {
  for (const double t : band.t) EXPECT_TRUE(std::isfinite(t));
  for (const auto& p : band.band) {
    EXPECT_TRUE(std::isfinite(p.min) && std::isfinite(p.median) && std::isfinite(p.max));
    EXPECT_LE(p.min, p.median);
    EXPECT_LE(p.median, p.max);
    EXPECT_GE(p.nodes, 1u);
  }
  for (const auto& values : band.node_values) {
    EXPECT_EQ(values.size(), band.t.size());
    for (const auto& v : values) EXPECT_TRUE(!v || std::isfinite(*v));
  }
}

TEST(SamplingInterval, MedianSpacingRobustToAPause) {
  TimeSeries series;
  for (const double x : {0.0, 1.0, 2.0, 3.0, 60.0, 61.0, 62.0}) series.Append(x, 1);
  EXPECT_DOUBLE_EQ(*SamplingInterval(series, 0, 100), 1);
  EXPECT_FALSE(SamplingInterval(series, 3, 4).has_value());  // one point
  EXPECT_FALSE(SamplingInterval(TimeSeries(), 0, 10).has_value());
  TimeSeries same;
  for (int i = 0; i < 5; ++i) same.Append(7, i);  // all at one x
  EXPECT_FALSE(SamplingInterval(same, 0, 10).has_value());
}

TEST(JobBand, OddNodeCountAlignsNodesTickingAtDifferentTimes) {
  // Three nodes sampling once a second at phases 0.1, 0.3 and 0.5 s: the bucket edges fall in the widest
  // gap between them (at 0.8 s), so each bucket holds one point of each. Node 1 lags at t = 2.
  const TimeSeries a = Ticks({50, 60, 70, 80}, 0.1);
  const TimeSeries b = Ticks({55, 65, 10, 85}, 0.3);
  const TimeSeries c = Ticks({52, 62, 72, 82}, 0.5);
  const std::vector<NodeTrack> tracks = {{&a, 0}, {&b, 0}, {&c, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 4, 1000);
  EXPECT_DOUBLE_EQ(band.bucket, 1);
  ASSERT_EQ(band.t.size(), 4u);
  EXPECT_DOUBLE_EQ(band.t[2], 2.3);  // the bucket [1.8, 2.8)
  const BandPoint& p = band.band[2];
  EXPECT_EQ(p.nodes, 3u);
  EXPECT_DOUBLE_EQ(p.min, 10);
  EXPECT_EQ(p.min_node, 1u);
  EXPECT_DOUBLE_EQ(p.median, 70);
  EXPECT_DOUBLE_EQ(p.max, 72);
  EXPECT_EQ(p.max_node, 2u);
  EXPECT_DOUBLE_EQ(band.band[0].min, 50);
  EXPECT_EQ(band.band[0].min_node, 0u);
  EXPECT_DOUBLE_EQ(*band.node_values[1][2], 10);
  EXPECT_DOUBLE_EQ(*band.node_values[2][3], 82);
  ExpectAllFinite(band);
}

TEST(JobBand, EvenNodeCountMedianIsTheMeanOfTheMiddleTwo) {
  const TimeSeries a = Ticks({10});
  const TimeSeries b = Ticks({20});
  const TimeSeries c = Ticks({40});
  const TimeSeries d = Ticks({100});
  const std::vector<NodeTrack> tracks = {{&d, 0}, {&b, 0}, {&a, 0}, {&c, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 1, 10);
  ASSERT_EQ(band.band.size(), 1u);
  EXPECT_DOUBLE_EQ(band.band[0].median, 30);
  EXPECT_DOUBLE_EQ(band.band[0].min, 10);
  EXPECT_EQ(band.band[0].min_node, 2u);
  EXPECT_DOUBLE_EQ(band.band[0].max, 100);
  EXPECT_EQ(band.band[0].max_node, 0u);
  EXPECT_EQ(band.band[0].nodes, 4u);
  ExpectAllFinite(band);
}

TEST(JobBand, ANodeMissingFromABucketIsLeftOutNotZero) {
  // Node 2 has no sample at t = 1 and t = 2; node 0 none at t = 3; nobody at t = 4; node 1 only at t = 5.
  // Node 2's spacing is 3 s: the bucket is the median interval, 1 s.
  const TimeSeries a = Ticks({80, 81, 82, kNone, kNone, kNone});
  const TimeSeries b = Ticks({70, 71, 72, 73, kNone, 75});
  const TimeSeries c = Ticks({90, kNone, kNone, 93, kNone, kNone});
  const std::vector<NodeTrack> tracks = {{&a, 0}, {&b, 0}, {&c, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 5, 1000);
  EXPECT_DOUBLE_EQ(band.bucket, 1);
  // Every node ticks on the second: the edges fall half-way between, the buckets centre on the ticks. The
  // bucket of t = 4 has no value and is not there.
  ASSERT_EQ(band.t.size(), 5u);
  EXPECT_DOUBLE_EQ(band.t[3], 3);
  EXPECT_DOUBLE_EQ(band.t[4], 5);
  EXPECT_EQ(band.band[1].nodes, 2u);
  EXPECT_DOUBLE_EQ(band.band[1].min, 71);
  EXPECT_DOUBLE_EQ(band.band[1].median, 76);  // (71 + 81) / 2: two nodes
  EXPECT_DOUBLE_EQ(band.band[1].max, 81);
  EXPECT_FALSE(band.node_values[2][1].has_value());
  EXPECT_EQ(band.band[3].nodes, 2u);  // nodes 1 and 2 at t = 3
  EXPECT_DOUBLE_EQ(band.band[3].min, 73);
  EXPECT_DOUBLE_EQ(band.band[3].max, 93);
  EXPECT_EQ(band.band[3].max_node, 2u);
  EXPECT_EQ(band.band[4].nodes, 1u);
  EXPECT_DOUBLE_EQ(band.band[4].min, 75);
  EXPECT_DOUBLE_EQ(band.band[4].median, 75);
  EXPECT_DOUBLE_EQ(band.band[4].max, 75);
  ExpectAllFinite(band);
}

TEST(JobBand, OneNodeIsItsOwnMinMedianAndMax) {
  const TimeSeries a = Ticks({3, 4, 5});
  const std::vector<NodeTrack> tracks = {{&a, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 2, 100);
  ASSERT_EQ(band.band.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(band.band[i].min, 3.0 + static_cast<double>(i));
    EXPECT_DOUBLE_EQ(band.band[i].median, band.band[i].min);
    EXPECT_DOUBLE_EQ(band.band[i].max, band.band[i].min);
    EXPECT_EQ(band.band[i].min_node, 0u);
    EXPECT_EQ(band.band[i].max_node, 0u);
  }
  ExpectAllFinite(band);
}

TEST(JobBand, EdgesFallInTheWidestGapBetweenTheNodesTicks) {
  // Node 1 ticks at 0.95, 1.95, 2.95 s; node 0 at 0.05 s and then about 0.1 s after node 1, with 80 ms of
  // jitter either way. Edges on whole seconds would put node 0's 0.97 beside its 0.05 and leave [1, 2)
  // without it; the widest gap between the phases (0.05 and 0.95) puts the edges at 0.5 s instead.
  TimeSeries a;
  for (const double x : {0.05, 0.97, 2.12, 2.98}) a.Append(x, 1);
  TimeSeries b;
  for (const double x : {0.95, 1.95, 2.95}) b.Append(x, 2);
  const std::vector<NodeTrack> tracks = {{&a, 0}, {&b, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 3.5, 1000);
  ASSERT_EQ(band.t.size(), 4u);
  EXPECT_NEAR(band.t[0], 0, 1e-9);  // [-0.5, 0.5): node 0's first tick alone
  EXPECT_EQ(band.band[0].nodes, 1u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_NEAR(band.t[i], static_cast<double>(i), 1e-9);
    EXPECT_EQ(band.band[i].nodes, 2u) << "bucket at " << band.t[i];
    EXPECT_DOUBLE_EQ(band.band[i].min, 1);  // one tick each: no node's value is a mean of two
  }
}

TEST(JobBand, TiesGoToTheNodeListedFirst) {
  const TimeSeries a = Ticks({5});
  const TimeSeries b = Ticks({5});
  const TimeSeries c = Ticks({9});
  const TimeSeries d = Ticks({9});
  const std::vector<NodeTrack> tracks = {{&c, 0}, {&a, 0}, {&b, 0}, {&d, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 1, 10);
  ASSERT_EQ(band.band.size(), 1u);
  EXPECT_EQ(band.band[0].min_node, 1u);
  EXPECT_EQ(band.band[0].max_node, 0u);
}

TEST(JobBand, OffsetsPutNodesOnTheJobsClock) {
  // Node 1 started 10 s after node 0: its x = 0 is the job's t = 10.
  const TimeSeries early = Ticks({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  const TimeSeries late = Ticks({7, 8, 9});
  const std::vector<NodeTrack> tracks = {{&early, 0}, {&late, 10}};
  const JobBand band = ComputeJobBand(tracks, 0, 14, 1000);
  ASSERT_EQ(band.t.size(), 15u);
  EXPECT_EQ(band.band[9].nodes, 1u);
  EXPECT_EQ(band.band[10].nodes, 2u);
  EXPECT_DOUBLE_EQ(band.band[10].max, 7);
  EXPECT_EQ(band.band[10].max_node, 1u);
  EXPECT_DOUBLE_EQ(*band.node_values[1][12], 9);
  EXPECT_FALSE(band.node_values[1][13].has_value());
}

TEST(JobBand, WideRangesTakeWiderBucketsOfMeans) {
  // 100 s at 1 Hz in 10 buckets: each bucket is 10 s, each node's value there the mean of its 10 points.
  std::vector<double> values;
  for (int i = 0; i < 100; ++i) values.push_back(i);
  const TimeSeries a = Ticks(values);
  const std::vector<NodeTrack> tracks = {{&a, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 99.5, 10);
  EXPECT_EQ(band.buckets, 10u);
  EXPECT_DOUBLE_EQ(band.bucket, 9.95);
  ASSERT_EQ(band.t.size(), 10u);
  double total = 0;
  for (const auto& p : band.band) total += p.min;
  EXPECT_NEAR(total / 10, 49.5, 0.6);
  ExpectAllFinite(band);
}

TEST(JobBand, NodesWithoutTheMetricAndOddRanges) {
  const TimeSeries a = Ticks({1, 2});
  const TimeSeries empty;
  const std::vector<NodeTrack> tracks = {{nullptr, 0}, {&empty, 0}, {&a, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 1, 100);
  ASSERT_EQ(band.t.size(), 2u);
  EXPECT_EQ(band.band[0].min_node, 2u);
  EXPECT_FALSE(band.node_values[0][0].has_value());
  EXPECT_FALSE(band.node_values[1][1].has_value());

  // Nothing in the range; a reversed range is widened to a second; non-finite ranges give nothing.
  EXPECT_TRUE(ComputeJobBand(tracks, 50, 60, 100).t.empty());
  const JobBand reversed = ComputeJobBand(tracks, 1, 0, 100);
  EXPECT_DOUBLE_EQ(reversed.end, 2);
  EXPECT_EQ(reversed.t.size(), 1u);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(ComputeJobBand(tracks, 0, inf, 100).t.empty());
  EXPECT_TRUE(ComputeJobBand(tracks, -1.7e308, 1.7e308, 100).t.empty());
  EXPECT_TRUE(ComputeJobBand(tracks, kNone, 1, 100).t.empty());
  EXPECT_EQ(ComputeJobBand(tracks, 0, 1, 0).buckets, 1u);  // at least one bucket
  EXPECT_TRUE(ComputeJobBand({}, 0, 1, 100).t.empty());
}

TEST(JobBand, HugeValuesStayFinite) {
  const float big = std::numeric_limits<float>::max();
  const TimeSeries a = Ticks({big, big, big});
  const TimeSeries b = Ticks({-big, big, -big});
  const std::vector<NodeTrack> tracks = {{&a, 0}, {&b, 0}};
  const JobBand band = ComputeJobBand(tracks, 0, 3, 1);  // one bucket: three huge points each
  ASSERT_EQ(band.band.size(), 1u);
  EXPECT_FLOAT_EQ(static_cast<float>(band.band[0].max), big);
  ExpectAllFinite(band);
}

}  // namespace
}  // namespace runmon::runview
