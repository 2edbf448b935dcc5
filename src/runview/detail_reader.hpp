// Full-resolution points for a zoomed chart of a run loaded from its summary index: the segments of the log
// that cover the window are read and decoded (their stats records only, from the wire bytes), kept in a
// bounded cache of recently read segments, and the requested keys' points are assembled from them, followed
// by the model's own points past the summaries (the log's tail, read in full). A window wider than
// kMaxWindowSegments segments gets no detail: the summary points are then already finer than a chart of it
// can show. Thread-safe (the dashboard's request threads share one reader); reading a segment holds no lock
// that other windows wait on for longer than the cache lookup.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runlog/summary_index.hpp"
#include "runview/time_series.hpp"

namespace runmon::runview {

class RunModel;

struct DetailSpan {
  uint64_t segment = 0;
  double first_time = 0;  // the segment's stats timestamps, seconds since the epoch
  double last_time = 0;
};

struct DetailWindow {
  double x0 = 0;
  double x1 = 0;
  size_t segments_read = 0;  // from the log, not the cache
  std::map<std::string, TimeSeries, std::less<>> series;
};

class DetailReader {
 public:
  static constexpr size_t kMaxWindowSegments = 128;
  static constexpr size_t kCachedSegments = 256;

  // `fd` is duplicated (the reader keeps its own). `spans`: the summarised segments holding stats, in order.
  DetailReader(int fd, std::vector<DetailSpan> spans, double time_origin);
  ~DetailReader();
  DetailReader(const DetailReader&) = delete;
  DetailReader& operator=(const DetailReader&) = delete;

  // The points of `keys` over [x0, x1] (x: seconds since the model's time origin), or nullptr when the window
  // covers no summarised segment or more than `max_segments` of them (an export reads them all).
  std::shared_ptr<const DetailWindow> Window(double x0, double x1, const std::vector<std::string>& keys,
                                             const RunModel& model,
                                             size_t max_segments = kMaxWindowSegments) const;
  // The summarised segments [x0, x1] covers.
  size_t SegmentsIn(double x0, double x1) const;

 private:
  // A segment's samples by key id (the reader's ids), in log order: a window copies the keys it wants.
  struct Decoded {
    std::vector<std::vector<std::pair<double, float>>> by_key;  // (seconds since the epoch, value)
  };
  std::shared_ptr<const Decoded> Segment(uint64_t segment, bool& read) const;
  std::pair<size_t, size_t> SpanRange(double x0, double x1) const;

  int fd_;
  std::vector<DetailSpan> spans_;
  double time_origin_;
  mutable std::mutex mutex_;  // guards the cache and the key table
  mutable runlog::KeyTable keys_;
  mutable std::list<std::pair<uint64_t, std::shared_ptr<const Decoded>>> cache_;  // most recent first
  mutable std::unordered_map<uint64_t, decltype(cache_)::iterator> cached_;
};

}  // namespace runmon::runview
