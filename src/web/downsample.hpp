// Series to chart data for the dashboard: the x range is cut into buckets and each series gives, per
// bucket, its minimum and maximum in the order they came (a rise shows min then max, a fall max then min),
// so a 24-hour run at 1 Hz draws from a few thousand numbers and its spikes survive. All series share one x
// array, as uPlot wants. A range holding few points is sent as it is (raw): the union of the series' x
// values, a series null where it has no point. Pure: series in, numbers out.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "runview/time_series.hpp"

namespace runmon::web {

struct ChartData {
  double start = 0;
  double end = 0;
  int width = 0;     // buckets used (after the size cap)
  bool raw = false;  // points as they are, not bucketed
  std::vector<double> x;
  std::vector<std::vector<std::optional<double>>> values;  // per series, aligned with x
};

// Buckets are lowered so that (series + 1) x 2 x buckets numbers stay within `max_cells` (the x array and
// each series' two numbers a bucket): about 10 bytes a number keeps a chart response near 160 KB.
inline constexpr size_t kMaxChartCells = 16000;

// `series` may hold null pointers or empty series (they get all-null values). [start, end] is the x
// range (end > start after the caller's defaults; equal values are widened by one unit).
ChartData Downsample(const std::vector<const runview::TimeSeries*>& series, double start, double end,
                     int width, size_t max_cells = kMaxChartCells);

}  // namespace runmon::web
