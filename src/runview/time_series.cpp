// Series storage for charts (see time_series.hpp). x is kept as a float offset from the first x so a long
// run stays precise enough for a chart column; the offsets never decrease (a clock step back is stored
// at the last x) because IndexRange's binary search needs them sorted. The block summaries (every
// kBlockPoints points, and every kBlockPoints blocks) are updated on each Append, so an extent query over
// any range reads at most a few partial blocks' points plus whole-block and whole-super-block summaries.
// The positive-only summaries exist for log scales, where a min that is <= 0 says nothing about the
// smallest value that can be drawn.
#include "runview/time_series.hpp"

#include <algorithm>
#include <cmath>

namespace runmon::runview {

void Extent::Add(float value) {
  if (empty) {
    min = value;
    max = value;
    empty = false;
    return;
  }
  min = std::min(min, value);
  max = std::max(max, value);
}

void Extent::Add(const Extent& other) {
  if (other.empty) return;
  if (empty) {
    *this = other;
    return;
  }
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

void TimeSeries::Clear() {
  origin_ = 0;
  xs_.clear();
  ys_.clear();
  blocks_.clear();
  super_blocks_.clear();
  positive_blocks_.clear();
  positive_super_blocks_.clear();
}

void TimeSeries::Append(double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y)) return;
  const auto value = static_cast<float>(y);
  if (!std::isfinite(value)) return;  // beyond float's range
  float offset = 0;
  if (ys_.empty()) {
    origin_ = x;
  } else {
    offset = std::max(static_cast<float>(x - origin_), xs_.back());
  }
  const size_t index = ys_.size();
  xs_.push_back(offset);
  ys_.push_back(value);
  if (index % kBlockPoints == 0) {
    blocks_.emplace_back();
    positive_blocks_.emplace_back();
  }
  if (index % kSuperBlockPoints == 0) {
    super_blocks_.emplace_back();
    positive_super_blocks_.emplace_back();
  }
  blocks_.back().Add(value);
  super_blocks_.back().Add(value);
  if (value > 0) {
    positive_blocks_.back().Add(value);
    positive_super_blocks_.back().Add(value);
  }
}

std::pair<size_t, size_t> TimeSeries::IndexRange(double x0, double x1) const {
  // The first index whose x is >= bound (NaN bounds compare false and give 0).
  const auto lower = [this](double bound) {
    const auto it = std::partition_point(xs_.begin(), xs_.end(), [this, bound](float offset) {
      return origin_ + static_cast<double>(offset) < bound;
    });
    return static_cast<size_t>(it - xs_.begin());
  };
  const size_t first = lower(x0);
  const size_t last = lower(x1);
  return {first, std::max(first, last)};
}

namespace {

// The extent of values[first, last) (points matching `keep`) from the summaries: points up to the next
// block boundary, blocks up to the next super block boundary, super blocks, then blocks and points again.
template <typename Keep>
Extent RangeExtent(const std::vector<float>& values, const std::vector<Extent>& blocks,
                   const std::vector<Extent>& super_blocks, size_t block_points, size_t first, size_t last,
                   Keep keep) {
  Extent extent;
  last = std::min(last, values.size());
  const size_t super_points = block_points * block_points;
  size_t i = first;
  const auto add_point = [&](size_t k) {
    if (keep(values[k])) extent.Add(values[k]);
  };
  for (; i < last && i % block_points != 0; ++i) add_point(i);
  for (; i + block_points <= last && i % super_points != 0; i += block_points) {
    extent.Add(blocks[i / block_points]);
  }
  for (; i + super_points <= last; i += super_points) extent.Add(super_blocks[i / super_points]);
  for (; i + block_points <= last; i += block_points) extent.Add(blocks[i / block_points]);
  for (; i < last; ++i) add_point(i);
  return extent;
}

}  // namespace

Extent TimeSeries::YExtent(size_t first, size_t last) const {
  return RangeExtent(ys_, blocks_, super_blocks_, kBlockPoints, first, last, [](float) { return true; });
}

Extent TimeSeries::PositiveYExtent(size_t first, size_t last) const {
  return RangeExtent(ys_, positive_blocks_, positive_super_blocks_, kBlockPoints, first, last,
                     [](float value) { return value > 0; });
}

size_t TimeSeries::MemoryBytes() const {
  const size_t summaries = blocks_.capacity() + super_blocks_.capacity() + positive_blocks_.capacity() +
                           positive_super_blocks_.capacity();
  return sizeof(*this) + (xs_.capacity() + ys_.capacity()) * sizeof(float) + summaries * sizeof(Extent);
}

}  // namespace runmon::runview
