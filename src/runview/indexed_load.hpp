// Loading a long run from its summary index instead of decoding every record (RunLoader uses it for logs of
// kIndexedLoadBytes and more). The index beside the log is read and checked (runlog/index_file.hpp); what it
// lacks (all of it for W&B's logs, the end for a stale one, everything after a damaged entry) is built by
// background workers, a spread of segments first so the whole run shows coarse at once and then fills in.
// The model gets, in this order:
//   - the records that are not stats (run, environment, history, console, exit, ...) in log order, read in
//     full from the segments that hold any (the index counts them);
//   - the system series from the summaries: first the index's pyramid level of at most kCoarseNodes nodes,
//     then every segment (refined), and while building, whatever has been built so far;
//   - once done, a DetailReader for zoomed charts; the caller's reader then reads the log from tail_start()
//     at full resolution (the segment still being written, and everything that follows).
// A built index is written beside the log (atomically) unless a runmon writer holds the log, whose recorder
// writes its own; a directory that cannot be written only leaves the index in memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runlog/index_builder.hpp"
#include "runlog/index_file.hpp"
#include "runview/run_model.hpp"

namespace runmon::runview {

inline constexpr uint64_t kIndexedLoadBytes = 32ull << 20;
inline constexpr size_t kCoarseNodes = 2048;

struct IndexedLoadOptions {
  uint64_t min_log_bytes = kIndexedLoadBytes;  // smaller logs are read in full
  bool write_index = true;
  int threads = 2;
};

class IndexedLoad {
 public:
  // Null when the log is read in full instead (smaller than options.min_log_bytes).
  static std::unique_ptr<IndexedLoad> Start(const std::filesystem::path& log, int fd, uint64_t log_size,
                                            const IndexedLoadOptions& options);
  ~IndexedLoad();

  // Feeds `model` until `deadline`; true once everything summarised is in it (then tail_start() is where the
  // log's full reading starts).
  bool Step(RunModel& model, std::chrono::steady_clock::time_point deadline);
  bool done() const { return done_; }
  uint64_t tail_start() const { return tail_start_; }
  // "indexing 1234 of 14000 segments" while building; empty otherwise.
  std::string Progress() const;
  // How much of the work is done, 0 to 1.
  double fraction() const;
  // The index's problems (rebuilt), damage the summaries counted, a failed write of the index.
  std::vector<std::string> Warnings() const;
  // Bytes of the indexed part the reader skipped as damage (known once done).
  uint64_t damaged_bytes() const { return damaged_bytes_; }

 private:
  IndexedLoad(const std::filesystem::path& log, int fd, const IndexedLoadOptions& options);
  void TakeBuilt();
  void IngestOthers(RunModel& model, std::chrono::steady_clock::time_point deadline);
  void RefreshSeries(RunModel& model, bool coarse);
  void Finish(RunModel& model);

  std::filesystem::path log_;
  int fd_;
  IndexedLoadOptions options_;
  runlog::CheckedIndex checked_;
  std::unique_ptr<runlog::SharedKeyTable> keys_;
  std::unique_ptr<runlog::IndexBuilder> builder_;
  uint64_t build_from_ = 0;  // the first segment the index lacked
  uint64_t build_to_ = 0;    // one past the last segment the builder was given
  std::map<uint64_t, runlog::SegmentSummary> built_;
  // The segments whose other records are still to come from the builder, and those that came.
  std::map<uint64_t, bool> others_expected_;  // segment -> arrived
  std::map<uint64_t, std::vector<runlog::OtherRecord>> others_;
  uint64_t unsettled_from_ = UINT64_MAX;  // the first segment the builder found unsettled (or unreadable)
  std::map<uint64_t, bool>::iterator frontier_;  // the next segment whose other records go into the model
  size_t ingested_in_frontier_ = 0;
  bool coarse_shown_ = false;
  bool spread_shown_ = false;  // the builder's spread (the whole run, coarse) was drawn
  bool changed_ = false;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::chrono::steady_clock::duration refresh_gap_{};
  bool done_ = false;
  uint64_t tail_start_ = 0;
  uint64_t damaged_bytes_ = 0;
  std::string write_warning_;
};

}  // namespace runmon::runview
