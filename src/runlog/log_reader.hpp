// Reads a run log record by record: the framing only (payloads come back as bytes; record_reader.hpp
// decodes them). It is at least as lenient as W&B's Go reader and says what it skipped:
//   - the end of the data inside a record or a block trailer (a torn tail: a writer is still writing, or
//     was killed) is not damage: Next() says kIncomplete and, called again once the file has grown, reads
//     that record again from its first chunk (a writer may have cut it off and written another there);
//   - a chunk with a bad checksum, an impossible length or an unknown type is damage: the rest of its
//     block is skipped and reading resyncs at the next 32 KiB block (where only a FULL or FIRST chunk can
//     start a record);
//   - a zeroed chunk header (a preallocated or zeroed region) skips the rest of its block, as damage;
//   - a record missing its FIRST or LAST chunk is damage; block trailers are not checked (W&B's writers
//     write zeros, its Go reader ignores them).
// Damage is reported as byte ranges with a reason; adjacent ranges are merged. The source is a file (read
// in aligned windows with pread, so following a growing file never re-reads it) or memory (fuzzing, tests).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::runlog {

// Where the reader gets bytes. View returns up to `length` bytes from `offset` (fewer at the end of the
// data); the view stays valid until the next call.
class LogSource {
 public:
  virtual ~LogSource() = default;
  virtual Result<std::string_view> View(uint64_t offset, size_t length) = 0;
  // Drops whatever the source keeps of the data (the reader saw the end inside a record, which a writer
  // may cut off and write differently).
  virtual void Forget() {}
};

std::unique_ptr<LogSource> MemorySource(std::string_view bytes);
// Reads the open descriptor with pread (it is not closed by the source).
std::unique_ptr<LogSource> FileSource(int fd);

// Opens a run log for reading: a regular file only. A FIFO, a device or a directory is refused without
// waiting (a FIFO is opened non-blocking, so no writer is awaited). The caller closes the descriptor.
Result<int> OpenLogForReading(const std::filesystem::path& path);
// Whether a writer holds the open log `fd`: runmon's LogWriter keeps an exclusive flock while it writes
// (W&B's writers take none). True also when the lock cannot be tested, so "gone" is only ever said when a
// shared lock was actually obtained.
bool WriterHoldsLock(int fd);

// A record longer than this is damage (a run's records are kilobytes; a hostile file could otherwise make
// the reader join chunks without end).
inline constexpr uint64_t kMaxRecordBytes = 64u << 20;

struct LogDamage {
  uint64_t offset = 0;  // first byte skipped
  uint64_t length = 0;  // bytes skipped
  std::string reason;
};

struct RawRecord {
  uint64_t offset = 0;       // the record's first chunk header
  uint64_t end = 0;          // just after its last chunk
  std::string_view payload;  // valid until the next call to Next
};

enum class ReadOutcome {
  kRecord,      // a record was read
  kEnd,         // the data ends cleanly after the last record
  kIncomplete,  // the data ends inside a record (or inside the file header); try again when it has grown
  kFailed,      // not a run log, an unsupported version, or the source failed: see error()
};

class LogReader {
 public:
  explicit LogReader(std::unique_ptr<LogSource> source);

  ReadOutcome Next(RawRecord& record);
  // Checks the file header only (Next does it first anyway): kEnd once it is read and W&B's, kIncomplete
  // while the data is shorter than it, kFailed when the file is not a run log (see error()).
  ReadOutcome ReadHeader();
  const std::string& error() const { return error_; }
  const std::vector<LogDamage>& damage() const { return damage_; }
  // Where the next read starts; also how far the data has been consumed.
  uint64_t position() const { return in_record_ ? record_start_ : position_; }
  // Whether the file header has been read and checked.
  bool header_read() const { return header_read_; }
  // Bytes of a torn tail when Next said kIncomplete.
  uint64_t incomplete_bytes() const { return incomplete_bytes_; }
  // Starts reading at `block_offset` (a multiple of kBlockSize, after ReadHeader said kEnd), as a reader of
  // one part of the log does: MIDDLE and LAST chunks before the first record that starts there belong to a
  // record of the part before and are skipped, not reported.
  void SeekToBlock(uint64_t block_offset);
  // For layers above the framing (a record that does not decode); merged like the reader's own.
  void ReportDamage(uint64_t offset, uint64_t length, std::string_view reason);

 private:
  ReadOutcome Fail(std::string message);
  ReadOutcome Incomplete(uint64_t data_end);
  void SkipToNextBlock(uint64_t damage_start, std::string_view reason);

  std::unique_ptr<LogSource> source_;
  bool header_read_ = false;
  uint64_t position_ = 0;
  bool in_record_ = false;  // a FIRST chunk was read; MIDDLE/LAST chunks are expected
  uint64_t record_start_ = 0;
  std::string fragments_;    // the payload of a record being joined from chunks
  bool resyncing_ = false;   // after damage: a MIDDLE or LAST chunk at the next block is skipped too
  bool continuing_ = false;  // after SeekToBlock: MIDDLE and LAST chunks are an earlier part's
  uint64_t incomplete_bytes_ = 0;
  std::string error_;
  std::vector<LogDamage> damage_;
};

}  // namespace runmon::runlog
