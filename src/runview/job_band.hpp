// One metric across the nodes of a distributed job, aligned in time: each node's series (seconds since its
// own run started) is moved onto the job's clock (seconds since the job's first node started), the range is
// cut into buckets no narrower than the nodes' sampling interval (nodes tick at slightly different times, so
// points are matched by bucket, never by exact time; buckets of one interval have their edges in the widest
// gap between the nodes' ticks, so that each holds one tick of each node), and each node gives per bucket
// the mean of its points there. Per bucket the band is the minimum, median and maximum over the nodes that
// have a value, and which node holds the minimum and which the maximum: for utilisation, power or throughput
// the node at the minimum is the one doing least work, the straggler.
//
// Odd cases: a node with no point in a bucket is left out of that bucket (never counted as 0), so a bucket
// may have fewer nodes than the job; a bucket no node has a value in is left out altogether; an even count
// of nodes has the mean of the two middle values as its median; ties go to the node listed first (the
// lowest rank). Series never hold non-finite values (time_series.hpp), so neither does the band. Pure:
// series in, numbers out.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "runview/time_series.hpp"

namespace runmon::runview {

struct NodeTrack {
  const TimeSeries* series = nullptr;  // null or empty: the node lacks the metric
  double offset = 0;                   // the job's time of the series' x = 0
};

struct BandPoint {
  double min = 0;
  double median = 0;
  double max = 0;
  size_t min_node = 0;  // index into the tracks: the node holding the minimum (the slowest)
  size_t max_node = 0;  // the node holding the maximum
  size_t nodes = 0;     // how many nodes have a value in the bucket
};

struct JobBand {
  double start = 0;  // the range, in the job's seconds
  double end = 0;
  double bucket = 0;  // seconds a bucket spans
  size_t buckets = 0;
  std::vector<double> t;                                        // centres of the buckets with a value
  std::vector<std::vector<std::optional<double>>> node_values;  // per track, aligned with t
  std::vector<BandPoint> band;                                  // aligned with t
};

// The median spacing of the series' consecutive points with start <= x < end (at most the first
// kIntervalSamples spacings): the sampling interval, robust to pauses. nullopt with fewer than two points or
// a median spacing of 0.
inline constexpr size_t kIntervalSamples = 1024;
std::optional<double> SamplingInterval(const TimeSeries& series, double start, double end);

// The band over [start, end] (job seconds; the end is included) in at most `max_buckets` buckets. The
// bucket is the median of the nodes' sampling intervals, or wider when the range would need more than
// `max_buckets` of those. A range that is empty or reversed is widened to one second; a non-finite one
// gives an empty band.
JobBand ComputeJobBand(std::span<const NodeTrack> tracks, double start, double end, size_t max_buckets);

}  // namespace runmon::runview
