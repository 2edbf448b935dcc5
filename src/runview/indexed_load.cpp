// Loading a run from its summary index (see indexed_load.hpp).
#include "runview/indexed_load.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runlog/log_reader.hpp"
#include "runview/detail_reader.hpp"

namespace runmon::runview {
namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kRefreshInterval = std::chrono::milliseconds(300);
constexpr auto kSpreadPoll = std::chrono::milliseconds(5);
constexpr int kRefreshCostShare = 8;
}  // namespace

std::unique_ptr<IndexedLoad> IndexedLoad::Start(const std::filesystem::path& log, int fd, uint64_t log_size,
                                                const IndexedLoadOptions& options) {
  if (log_size < options.min_log_bytes) return nullptr;
  std::unique_ptr<IndexedLoad> load(new IndexedLoad(log, fd, options));
  load->checked_ = runlog::LoadCheckedIndex(runlog::IndexPathFor(log), fd, log_size);
  const runlog::SummaryIndex& index = load->checked_.index;
  load->keys_ = std::make_unique<runlog::SharedKeyTable>(index.keys);
  load->build_from_ = index.covered_segments();
  // Segments wholly inside the log may be settled; the one the log ends in is the tail's.
  load->build_to_ = std::max(load->build_from_, runlog::SegmentOf(log_size));
  std::vector<runlog::IndexBuilder::Job> jobs;
  for (const runlog::SegmentSummary& segment : index.segments()) {
    if (segment.other_records == 0) continue;
    jobs.push_back({segment.first_segment, runlog::SegmentWork::kOthersOnly});
    load->others_expected_[segment.first_segment] = false;
  }
  for (uint64_t segment = load->build_from_; segment < load->build_to_; ++segment) {
    jobs.push_back({segment, runlog::SegmentWork::kSummarise});
    load->others_expected_[segment] = false;
  }
  load->builder_ = std::make_unique<runlog::IndexBuilder>(fd, std::move(jobs), *load->keys_, options.threads);
  load->frontier_ = load->others_expected_.begin();
  return load;
}

IndexedLoad::IndexedLoad(const std::filesystem::path& log, int fd, const IndexedLoadOptions& options)
    : log_(log), fd_(fd), options_(options) {}

IndexedLoad::~IndexedLoad() = default;

void IndexedLoad::TakeBuilt() {
  if (!builder_) return;
  for (runlog::SegmentRead& read : builder_->Take()) {
    others_expected_[read.segment] = true;
    if (read.failed || !read.settled) {
      unsettled_from_ = std::min(unsettled_from_, read.segment);
      continue;
    }
    if (read.segment >= build_from_) {
      built_[read.segment] = std::move(read.summary);
      changed_ = true;
    }
    if (!read.others.empty()) others_[read.segment] = std::move(read.others);
  }
}

void IndexedLoad::IngestOthers(RunModel& model, Clock::time_point deadline) {
  wandb::Record record;
  uint32_t count = 0;
  for (; frontier_ != others_expected_.end(); ++frontier_) {
    if (frontier_->first >= unsettled_from_ || !frontier_->second) return;
    auto found = others_.find(frontier_->first);
    if (found == others_.end()) continue;
    const std::vector<runlog::OtherRecord>& others = found->second;
    for (; ingested_in_frontier_ < others.size(); ++ingested_in_frontier_) {
      const std::string& payload = others[ingested_in_frontier_].payload;
      // The builder read these records' type from their wire bytes; protobuf has the last word.
      if (record.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) model.Ingest(record);
      if (++count % 64 == 0 && Clock::now() >= deadline) {
        ++ingested_in_frontier_;
        return;
      }
    }
    others_.erase(found);
    ingested_in_frontier_ = 0;
  }
}

void IndexedLoad::RefreshSeries(RunModel& model, bool coarse) {
  const runlog::SummaryIndex& index = checked_.index;
  std::vector<const runlog::SegmentSummary*> summaries;
  uint64_t nodes_end = 0;
  if (coarse && index.levels.size() > 1) {
    // The finest level above the segments with at most kCoarseNodes nodes (else the coarsest there is).
    size_t level = 1;
    while (level + 1 < index.levels.size() && index.levels[level].size() > kCoarseNodes) ++level;
    for (const runlog::SegmentSummary& node : index.levels[level]) summaries.push_back(&node);
    if (!summaries.empty()) nodes_end = summaries.back()->first_segment + summaries.back()->segment_span();
  }
  for (const runlog::SegmentSummary& segment : index.segments()) {
    if (segment.first_segment >= nodes_end) summaries.push_back(&segment);
  }
  for (const auto& [segment, summary] : built_) {
    if (segment < unsettled_from_) summaries.push_back(&summary);
  }
  const auto started = Clock::now();
  model.SetSystemSummaries(keys_->names(), summaries);
  last_refresh_ = Clock::now();
  // A refresh redraws every summary so far: on a long run it takes a while, and the next one waits at
  // least kRefreshCostShare times as long, so refreshing takes a bounded share of the workers' cores.
  refresh_gap_ = std::max<Clock::duration>(kRefreshInterval, kRefreshCostShare * (last_refresh_ - started));
  changed_ = nodes_end > 0;  // a coarse picture is refined at the next step
}

bool IndexedLoad::Step(RunModel& model, Clock::time_point deadline) {
  if (done_) return true;
  for (;;) {
    TakeBuilt();
    IngestOthers(model, deadline);
    // The first segment's records (the run record: the time origin) come before any series.
    const bool origin_ready =
        others_expected_.empty() || frontier_ != others_expected_.begin() || unsettled_from_ == 0;
    if (origin_ready) break;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    builder_->Wait(std::min(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1),
        std::chrono::milliseconds(50)));
  }
  if (!coarse_shown_) {
    coarse_shown_ = true;
    RefreshSeries(model, true);
    return false;  // the first frame draws this
  }
  // Until the deadline: the series are refreshed every refresh_gap_, and at once when the spread the
  // builder reads first is in (the whole run, coarse). In between, this waits for the workers instead of
  // returning at once: a caller that loops on Step would otherwise spin a core the workers need.
  for (;;) {
    if (builder_->finished()) {
      TakeBuilt();  // what the workers left as they stopped
      IngestOthers(model, deadline);
      if (frontier_ == others_expected_.end() || frontier_->first >= unsettled_from_) {
        Finish(model);
        return true;
      }
    }
    const auto now = Clock::now();
    const bool spread_in = !spread_shown_ && builder_->done() >= builder_->preview_jobs();
    if (changed_ && (spread_in || now - last_refresh_ >= refresh_gap_)) {
      spread_shown_ = spread_shown_ || spread_in;
      RefreshSeries(model, false);
      return false;
    }
    if (now >= deadline) return false;
    auto wake = deadline;
    if (changed_) wake = std::min(wake, last_refresh_ + refresh_gap_);
    // Short waits while the spread comes in; otherwise until the next refresh (or the end of the work).
    const auto wait = spread_shown_ ? wake - now : std::min<Clock::duration>(wake - now, kSpreadPoll);
    builder_->WaitFinished(std::chrono::ceil<std::chrono::milliseconds>(wait));
    TakeBuilt();
    IngestOthers(model, deadline);
  }
}

void IndexedLoad::Finish(RunModel& model) {
  TakeBuilt();
  RefreshSeries(model, false);
  runlog::SummaryIndex& index = checked_.index;
  // The built segments join the index's (they all come after them).
  if (index.levels.empty()) index.levels.emplace_back();
  const bool built_any = !built_.empty();
  for (auto& [segment, summary] : built_) {
    if (segment < unsettled_from_) index.levels[0].push_back(std::move(summary));
  }
  built_.clear();
  index.keys = keys_->names();
  // Written when something was built, or when the file had damage (it is repaired even with nothing new).
  const bool damaged_file = !checked_.missing && !checked_.problem.empty();
  if ((built_any || damaged_file) && options_.write_index && !runlog::WriterHoldsLock(fd_)) {
    runlog::RebuildPyramid(index);
    if (auto status = runlog::WriteIndexFile(runlog::IndexPathFor(log_), index); !status) {
      write_warning_ = fmt::format(
          "summary index not written ({}): it is rebuilt when the run is opened again", status.error());
    }
  }
  const auto& segments = index.levels[0];  // after RebuildPyramid, which grows the levels
  std::vector<DetailSpan> spans;
  uint64_t damaged = 0;
  for (const runlog::SegmentSummary& segment : segments) {
    damaged += segment.damaged_bytes;
    if (segment.stats_records > 0)
      spans.push_back({segment.first_segment, segment.first_time, segment.last_time});
  }
  damaged_bytes_ = damaged;
  tail_start_ = segments.empty() ? 0 : runlog::SegmentEnd(segments.back().first_segment);
  if (!spans.empty() && model.time_origin()) {
    model.set_detail(std::make_shared<DetailReader>(fd_, std::move(spans), *model.time_origin()));
  }
  // The model holds the series now, and the detail reader the segments' places: the summaries can go.
  index.levels.clear();
  builder_.reset();
  done_ = true;
}

std::string IndexedLoad::Progress() const {
  if (done_ || !builder_ || builder_->total() == 0) return {};
  return fmt::format("indexing {} of {} segments", builder_->done(), builder_->total());
}

double IndexedLoad::fraction() const {
  if (done_ || !builder_ || builder_->total() == 0) return 1;
  return static_cast<double>(builder_->done()) / static_cast<double>(builder_->total());
}

std::vector<std::string> IndexedLoad::Warnings() const {
  std::vector<std::string> warnings;
  if (!checked_.missing && !checked_.problem.empty()) {
    warnings.push_back(fmt::format("summary index: {}; rebuilt from the log", checked_.problem));
  }
  if (damaged_bytes_ > 0) {
    warnings.push_back(fmt::format("damaged log: {} bytes skipped in the indexed part", damaged_bytes_));
  }
  if (!write_warning_.empty()) warnings.push_back(write_warning_);
  return warnings;
}

}  // namespace runmon::runview
