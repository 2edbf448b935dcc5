// The summary index on disk (summary_index.hpp has its format): finding it beside a log, reading and
// checking it against the log, writing it whole (atomically, by a viewer that built it) or entry by entry
// (runmon's recorder, as the log grows). The checks: the file's own checksums and order (ParseIndex), then
// the log itself: every segment must lie inside the log's current size, and the first and last segments'
// boundary bytes must have the CRC-32 the index noted, so a log cut short, replaced by another run's or
// rewritten is caught with two small reads. What does not check out is dropped from there on; the caller
// rebuilds it from the log.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "runlog/summary_index.hpp"

namespace runmon::runlog {

// `run-<id>.wandb` -> `run-<id>.wandb.idx`.
std::filesystem::path IndexPathFor(const std::filesystem::path& log);

// The CRC-32 of the kBoundaryCheckBytes before segment `segment`'s end in the open log (for segment 0, the
// first kBoundaryCheckBytes of the log: its header and run record); an error when the log is shorter or
// cannot be read.
Result<uint32_t> BoundaryCrc(int log_fd, uint64_t segment);

// An index file larger than this is not read (a week at 1 Hz and 200 keys is ~50 MB).
inline constexpr uint64_t kMaxIndexFileBytes = 1ull << 30;

struct CheckedIndex {
  SummaryIndex index;    // the part that checked out (possibly nothing)
  std::string problem;   // empty when the whole file checked out; else what was dropped and why
  bool missing = false;  // there is no index file
};

// Reads the index for the open log `log_fd` (of `log_size` bytes) from `index_path` and checks it.
CheckedIndex LoadCheckedIndex(const std::filesystem::path& index_path, int log_fd, uint64_t log_size);

// Replaces the index file with `index` (written beside it, then renamed over it: readers see the old file or
// the new one).
Status WriteIndexFile(const std::filesystem::path& index_path, const SummaryIndex& index);

// Appends entries to a new index file (runmon's recorder): created with its header, replacing any file of the
// name. A failed write stops the appender (the index is optional; a reader rebuilds what is missing).
class IndexAppender {
 public:
  static Result<IndexAppender> Create(const std::filesystem::path& index_path);
  IndexAppender(IndexAppender&& other) noexcept;
  IndexAppender& operator=(IndexAppender&& other) noexcept;
  IndexAppender(const IndexAppender&) = delete;
  IndexAppender& operator=(const IndexAppender&) = delete;
  ~IndexAppender();

  Status Append(std::string_view entries);
  bool failed() const { return failed_; }

 private:
  explicit IndexAppender(int fd) : fd_(fd) {}
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace runmon::runlog
