// One metric's points for charting, kept small and fast to query: x is stored as a float offset from the
// series' first x (seconds since the first sample, or a history step), y as a float (7 significant digits,
// ample for a chart and its legend), 8 bytes a point, so a 24-hour, 1 Hz, 100-key run fits in ~70 MB.
// Min/max summaries over blocks of points make a chart column's extent a handful of reads instead of a scan
// of every point it covers, so drawing cost depends on the chart's width, not on the run's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace runmon::runview {

enum class XAxisKind {
  kElapsedSeconds,  // x is seconds since the run started: labels 0s, 30s, 5m, 1h30m, ...
  kStep,            // x is a history step: labels 0, 500, 1k, ...
};

struct Extent {
  float min = 0;
  float max = 0;
  bool empty = true;
  void Add(float value);
  void Add(const Extent& other);
};

class TimeSeries {
 public:
  // Points arrive in x order; a point whose x is below the last one is stored at the last x (a clock step
  // back must not break the ordering every query relies on). Non-finite y values are not stored.
  void Append(double x, double y);

  // Drops every point (the memory is kept for the points that replace them).
  void Clear();

  size_t size() const { return ys_.size(); }
  bool empty() const { return ys_.empty(); }
  double x(size_t index) const { return origin_ + static_cast<double>(xs_[index]); }
  float y(size_t index) const { return ys_[index]; }
  double first_x() const { return x(0); }  // only when not empty
  double last_x() const { return x(size() - 1); }
  float last_y() const { return ys_.back(); }

  // The half-open index range of the points with x0 <= x < x1.
  std::pair<size_t, size_t> IndexRange(double x0, double x1) const;
  // The extent of y over indices [first, last); reads block summaries for whole blocks inside the range.
  Extent YExtent(size_t first, size_t last) const;
  // The extent over all points.
  Extent YExtent() const { return YExtent(0, size()); }
  // The extent of the y values > 0 over indices [first, last) (what a log scale can show), as fast.
  Extent PositiveYExtent(size_t first, size_t last) const;

  size_t MemoryBytes() const;

 private:
  static constexpr size_t kBlockPoints = 64;
  static constexpr size_t kSuperBlockPoints = kBlockPoints * kBlockPoints;

  double origin_ = 0;
  std::vector<float> xs_;
  std::vector<float> ys_;
  std::vector<Extent> blocks_;                 // one per kBlockPoints points (the last may be partial)
  std::vector<Extent> super_blocks_;           // one per kBlockPoints blocks
  std::vector<Extent> positive_blocks_;        // as blocks_, over the y values > 0 only
  std::vector<Extent> positive_super_blocks_;  // as super_blocks_, over the y values > 0 only
};

}  // namespace runmon::runview
