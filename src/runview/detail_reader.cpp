// Reading summarised segments back at full resolution (see detail_reader.hpp).
#include "runview/detail_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "runlog/log_reader.hpp"
#include "runlog/stats_values.hpp"
#include "runview/run_model.hpp"

namespace runmon::runview {

DetailReader::DetailReader(int fd, std::vector<DetailSpan> spans, double time_origin)
    : fd_(::fcntl(fd, F_DUPFD_CLOEXEC, 0)), spans_(std::move(spans)), time_origin_(time_origin) {}

DetailReader::~DetailReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::pair<size_t, size_t> DetailReader::SpanRange(double x0, double x1) const {
  const double t0 = x0 + time_origin_;
  const double t1 = x1 + time_origin_;
  // Segments are in log order and their times nearly so: the first whose samples reach t0, then on while
  // they start by t1.
  const auto first = std::partition_point(spans_.begin(), spans_.end(),
                                          [&](const DetailSpan& span) { return span.last_time < t0; });
  auto last = first;
  while (last != spans_.end() && last->first_time <= t1) ++last;
  return {static_cast<size_t>(first - spans_.begin()), static_cast<size_t>(last - spans_.begin())};
}

size_t DetailReader::SegmentsIn(double x0, double x1) const {
  const auto [first, last] = SpanRange(x0, x1);
  return last - first;
}

std::shared_ptr<const DetailReader::Decoded> DetailReader::Segment(uint64_t segment, bool& read) const {
  {
    std::lock_guard lock(mutex_);
    if (auto it = cached_.find(segment); it != cached_.end()) {
      cache_.splice(cache_.begin(), cache_, it->second);
      read = false;
      return it->second->second;
    }
  }
  read = true;
  auto decoded = std::make_shared<Decoded>();
  runlog::LogReader reader(runlog::FileSource(fd_));
  if (reader.ReadHeader() == runlog::ReadOutcome::kEnd) {
    const uint64_t end = runlog::SegmentEnd(segment);
    if (segment > 0) reader.SeekToBlock(segment * runlog::kSegmentBytes);
    runlog::StatsValueReader stats;
    runlog::RawRecord raw;
    while (reader.Next(raw) == runlog::ReadOutcome::kRecord && raw.offset < end) {
      double time = 0;
      const auto kind = stats.Read(raw.payload, time, [this](std::string_view name) {
        std::lock_guard lock(mutex_);
        return keys_.Id(name);
      });
      if (kind != runlog::WireRecordKind::kStats) continue;
      for (const auto& value : stats.values()) {
        if (value.key >= decoded->by_key.size()) decoded->by_key.resize(value.key + 1);
        decoded->by_key[value.key].emplace_back(time, value.value);
      }
    }
  }
  std::lock_guard lock(mutex_);
  if (auto it = cached_.find(segment); it != cached_.end()) return it->second->second;  // read meanwhile
  cache_.emplace_front(segment, decoded);
  cached_[segment] = cache_.begin();
  while (cache_.size() > kCachedSegments) {
    cached_.erase(cache_.back().first);
    cache_.pop_back();
  }
  return decoded;
}

std::shared_ptr<const DetailWindow> DetailReader::Window(double x0, double x1,
                                                         const std::vector<std::string>& keys,
                                                         const RunModel& model, size_t max_segments) const {
  const auto [first, last] = SpanRange(x0, x1);
  if (first == last || last - first > max_segments) return nullptr;
  auto window = std::make_shared<DetailWindow>();
  window->x0 = x0;
  window->x1 = x1;
  // The ids of the keys asked for (a key no segment has named yet gets one that no value carries).
  std::vector<std::pair<uint32_t, TimeSeries*>> wanted;
  {
    std::lock_guard lock(mutex_);
    for (const std::string& key : keys) wanted.emplace_back(keys_.Id(key), &window->series[key]);
  }
  for (size_t at = first; at < last; ++at) {
    bool read = false;
    const auto decoded = Segment(spans_[at].segment, read);
    window->segments_read += read ? 1 : 0;
    for (const auto& [id, series] : wanted) {
      if (id >= decoded->by_key.size()) continue;
      for (const auto& [time, value] : decoded->by_key[id]) series->Append(time - time_origin_, value);
    }
  }
  // The tail the model holds in full, past the summaries.
  if (const auto end_x = model.summary_end_x()) {
    for (auto& [key, series] : window->series) {
      const auto found = model.system_series().find(key);
      if (found == model.system_series().end() || found->second.empty()) continue;
      const TimeSeries& full = found->second;
      const auto [from, to] = full.IndexRange(std::max(*end_x, x0) + 1e-6, x1 + 1);
      for (size_t i = from; i < to; ++i) series.Append(full.x(i), full.y(i));
    }
  }
  return window;
}

}  // namespace runmon::runview
