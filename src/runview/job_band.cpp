// A job's nodes aligned by time bucket: per-node means, the min / median / max band and its nodes. See
// job_band.hpp.
#include "runview/job_band.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace runmon::runview {

std::optional<double> SamplingInterval(const TimeSeries& series, double start, double end) {
  if (series.empty() || !(end > start)) return std::nullopt;
  const auto [first, last] = series.IndexRange(start, end);
  if (last - first < 2) return std::nullopt;
  const size_t stop = std::min(last, first + kIntervalSamples + 1);
  std::vector<double> spacings;
  spacings.reserve(stop - first - 1);
  for (size_t i = first + 1; i < stop; ++i) spacings.push_back(series.x(i) - series.x(i - 1));
  const auto middle = spacings.begin() + static_cast<std::ptrdiff_t>(spacings.size() / 2);
  std::nth_element(spacings.begin(), middle, spacings.end());
  if (!(*middle > 0)) return std::nullopt;
  return *middle;
}

JobBand ComputeJobBand(std::span<const NodeTrack> tracks, double start, double end, size_t max_buckets) {
  JobBand result;
  result.node_values.resize(tracks.size());
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(end - start)) return result;
  if (!(end > start)) end = start + 1;
  result.start = start;
  result.end = end;
  max_buckets = std::max<size_t>(1, max_buckets);
  const double span = end - start;

  // The nodes' usual interval: the median of theirs, so that a node missing samples (a longer spacing) or
  // one sampling faster does not set it.
  std::vector<double> intervals;
  for (const auto& track : tracks) {
    if (track.series == nullptr) continue;
    const auto interval =
        SamplingInterval(*track.series, start - track.offset, std::nextafter(end - track.offset, INFINITY));
    if (interval) intervals.push_back(*interval);
  }
  double bucket = span / static_cast<double>(max_buckets);
  bool one_tick_a_bucket = false;
  if (!intervals.empty()) {
    const auto middle = intervals.begin() + static_cast<std::ptrdiff_t>(intervals.size() / 2);
    std::nth_element(intervals.begin(), middle, intervals.end());
    one_tick_a_bucket = *middle >= bucket;
    bucket = std::max(bucket, *middle);
  }
  // Where the bucket edges fall: buckets of one interval hold one tick of each node when no node ticks
  // near an edge, so the edges go in the middle of the widest gap between the nodes' phases (each node's
  // first tick in the range, modulo the interval); N nodes leave a gap of at least 1/N of the interval, so
  // a tick's jitter rarely moves it to the neighbouring bucket. Wider buckets start at `start`.
  double grid_start = start;
  if (one_tick_a_bucket) {
    std::vector<double> phases;
    for (const auto& track : tracks) {
      if (track.series == nullptr) continue;
      const auto [first, last] =
          track.series->IndexRange(start - track.offset, std::nextafter(end - track.offset, INFINITY));
      if (first >= last) continue;
      const double phase = std::fmod(track.series->x(first) + track.offset - start, bucket);
      phases.push_back(phase < 0 ? phase + bucket : phase);
    }
    if (!phases.empty()) {
      std::sort(phases.begin(), phases.end());
      double widest = phases.front() + bucket - phases.back();  // the gap that wraps around
      double edge = std::fmod(phases.back() + widest / 2, bucket);
      for (size_t i = 1; i < phases.size(); ++i) {
        if (phases[i] - phases[i - 1] > widest) {
          widest = phases[i] - phases[i - 1];
          edge = phases[i - 1] + widest / 2;
        }
      }
      grid_start = start + edge - bucket;  // the first edge at or before start
    }
  }
  // Buckets [grid_start + b * bucket, grid_start + (b + 1) * bucket): as many as hold the end, at most
  // max_buckets (then the end falls into the last one).
  const auto buckets = static_cast<size_t>(
      std::clamp(std::floor((end - grid_start) / bucket) + 1, 1.0, static_cast<double>(max_buckets)));
  result.bucket = bucket;
  result.buckets = buckets;

  // Per node and bucket: the sum and count of its points there.
  std::vector<std::vector<double>> sums(tracks.size());
  std::vector<std::vector<uint64_t>> counts(tracks.size());
  std::vector<bool> any(buckets, false);
  for (size_t node = 0; node < tracks.size(); ++node) {
    const NodeTrack& track = tracks[node];
    if (track.series == nullptr || track.series->empty()) continue;
    const TimeSeries& series = *track.series;
    const auto [first, last] =
        series.IndexRange(start - track.offset, std::nextafter(end - track.offset, INFINITY));
    if (first >= last) continue;
    sums[node].assign(buckets, 0);
    counts[node].assign(buckets, 0);
    for (size_t i = first; i < last; ++i) {
      const double at = std::floor((series.x(i) + track.offset - grid_start) / bucket);
      const auto b = static_cast<size_t>(std::clamp(at, 0.0, static_cast<double>(buckets - 1)));
      sums[node][b] += series.y(i);
      ++counts[node][b];
      any[b] = true;
    }
  }

  std::vector<std::pair<double, size_t>> present;  // (value, node) of one bucket
  present.reserve(tracks.size());
  for (size_t b = 0; b < buckets; ++b) {
    if (!any[b]) continue;
    result.t.push_back(grid_start + (static_cast<double>(b) + 0.5) * bucket);
    present.clear();
    for (size_t node = 0; node < tracks.size(); ++node) {
      auto& values = result.node_values[node];
      if (counts[node].empty() || counts[node][b] == 0) {
        values.push_back(std::nullopt);
        continue;
      }
      const double mean = sums[node][b] / static_cast<double>(counts[node][b]);
      values.push_back(mean);
      present.emplace_back(mean, node);
    }
    // Sorted by value, then node: the first entry is the minimum held by the lowest-listed node.
    std::sort(present.begin(), present.end());
    BandPoint point;
    point.nodes = present.size();
    point.min = present.front().first;
    point.min_node = present.front().second;
    point.max = present.back().first;
    point.max_node = present.back().second;
    for (const auto& [value, node] : present) {
      if (value == point.max) {
        point.max_node = node;
        break;
      }
    }
    const size_t half = present.size() / 2;
    point.median =
        present.size() % 2 == 1 ? present[half].first : present[half - 1].first / 2 + present[half].first / 2;
    result.band.push_back(point);
  }
  return result;
}

}  // namespace runmon::runview
