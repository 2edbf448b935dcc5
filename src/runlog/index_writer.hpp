// The summary index as runmon's recorder writes it, beside the log it writes: each record written is noted
// with its offsets and payload (stats values are read from the payload's wire bytes, without protobuf, or
// taken from what the recorder knows of a stats record it encoded itself), and
// a segment's entry (with the key entries it needs and the pyramid nodes it completes) is appended when the
// first record past it is written. The last, open segment is never written: readers read it from the log.
// A failure to create or append the index stops the index only (reported once); the log is unharmed, and a
// reader rebuilds what the index lacks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.hpp"
#include "runlog/index_file.hpp"
#include "runlog/stats_values.hpp"
#include "runlog/summary_index.hpp"

namespace runmon::runlog {

class IndexWriter {
 public:
  // Creates `index_path` (replacing a file of the name) for the log at `log_path`, which it reads back for
  // boundary checksums.
  static Result<IndexWriter> Create(const std::filesystem::path& index_path,
                                    const std::filesystem::path& log_path);
  IndexWriter(IndexWriter&& other) noexcept;
  IndexWriter& operator=(IndexWriter&& other) noexcept;
  IndexWriter(const IndexWriter&) = delete;
  IndexWriter& operator=(const IndexWriter&) = delete;
  ~IndexWriter();

  // A record written at [start, end) (start: its first chunk header). Records come in log order.
  Status Note(uint64_t start, uint64_t end, std::string_view payload);
  // The same for a stats record the caller encoded (EncodeStatsRecord), from what it knows of it.
  Status NoteStats(uint64_t start, uint64_t end, std::string_view payload, const EncodedStatsItems& encoded);
  bool failed() const { return appender_.failed(); }

 private:
  IndexWriter(IndexAppender appender, int log_fd) : appender_(std::move(appender)), log_fd_(log_fd) {}
  Status CloseSegment();
  Status Begin(uint64_t start);  // the segment of a record starting at `start` open, earlier ones written
  uint32_t KeyId(std::string_view name);

  IndexAppender appender_;
  int log_fd_ = -1;
  KeyTable keys_;
  std::optional<SegmentAccumulator> open_;
  PyramidBuilder pyramid_;
  StatsValueReader stats_;
  std::string pending_;  // key entries for keys first seen in the open segment
};

}  // namespace runmon::runlog
