// Bucketed min/max downsampling, or the raw points for short ranges. See downsample.hpp.
#include "web/downsample.hpp"

#include <algorithm>
#include <cmath>

namespace runmon::web {

ChartData Downsample(const std::vector<const runview::TimeSeries*>& series, double start, double end,
                     int width, size_t max_cells) {
  ChartData data;
  if (!(end > start)) end = start + 1;
  data.start = start;
  data.end = end;
  const size_t numbers_per_bucket = 2 * (series.size() + 1);
  width = std::clamp(width, 1, 100000);
  width = static_cast<int>(
      std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(width), max_cells / numbers_per_bucket)));
  data.width = width;
  data.values.resize(series.size());

  // Few points: send them as they are.
  size_t most_points = 0;
  for (const auto* s : series) {
    if (s == nullptr || s->empty()) continue;
    const auto [first, last] = s->IndexRange(start, std::nextafter(end, INFINITY));
    most_points = std::max(most_points, last - first);
  }
  if (most_points <= 2 * static_cast<size_t>(width)) {
    data.raw = true;
    std::vector<double> xs;
    for (const auto* s : series) {
      if (s == nullptr || s->empty()) continue;
      const auto [first, last] = s->IndexRange(start, std::nextafter(end, INFINITY));
      for (size_t i = first; i < last; ++i) xs.push_back(s->x(i));
    }
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    data.x = xs;
    for (size_t k = 0; k < series.size(); ++k) {
      auto& values = data.values[k];
      values.assign(xs.size(), std::nullopt);
      const auto* s = series[k];
      if (s == nullptr || s->empty()) continue;
      const auto [first, last] = s->IndexRange(start, std::nextafter(end, INFINITY));
      size_t at = 0;
      for (size_t i = first; i < last; ++i) {
        while (at < xs.size() && xs[at] < s->x(i)) ++at;
        if (at < xs.size()) values[at] = s->y(i);  // repeated x: the later point wins
      }
    }
    return data;
  }

  const double step = (end - start) / width;
  data.x.reserve(2 * static_cast<size_t>(width));
  for (int b = 0; b < width; ++b) {
    const double center = start + (b + 0.5) * step;
    data.x.push_back(center);
    data.x.push_back(center);
  }
  for (size_t k = 0; k < series.size(); ++k) {
    auto& values = data.values[k];
    values.assign(data.x.size(), std::nullopt);
    const auto* s = series[k];
    if (s == nullptr || s->empty()) continue;
    for (int b = 0; b < width; ++b) {
      const double lo = start + b * step;
      // The last bucket includes `end` itself.
      const double hi = b + 1 == width ? std::nextafter(end, INFINITY) : start + (b + 1) * step;
      const auto [first, last] = s->IndexRange(lo, hi);
      if (first >= last) continue;
      const runview::Extent extent = s->YExtent(first, last);
      if (extent.empty) continue;
      const bool falling = s->y(first) > s->y(last - 1);
      const auto slot = static_cast<size_t>(2 * b);
      values[slot] = falling ? extent.max : extent.min;
      values[slot + 1] = falling ? extent.min : extent.max;
    }
  }
  return data;
}

}  // namespace runmon::web
