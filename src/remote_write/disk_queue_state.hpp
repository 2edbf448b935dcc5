// The open remote-write queue's state (disk_queue.hpp), shared by disk_queue.cpp (appends, reads, the
// cursor, the deletions) and disk_queue_recovery.cpp (Open's scan of what an earlier process left): the
// segments with their index of good records, the cursor, the counts. Not part of the queue's interface.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "remote_write/disk_queue.hpp"
#include "remote_write/queue_format.hpp"

namespace runmon::remote_write {

inline constexpr std::string_view kLockName = "lock";
inline constexpr std::string_view kCursorName = "cursor";
inline constexpr std::string_view kCursorTemporaryName = "cursor.tmp";

std::string ErrnoText(int error);

// A segment's descriptor, shared by the queue and the reads in progress.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  ~OpenFile() { ::close(fd_); }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A good record: where it is in its segment and what Read and the counts need without reading it.
struct IndexEntry {
  uint64_t sequence = 0;
  uint64_t offset = 0;
  uint32_t payload_bytes = 0;
  uint32_t samples = 0;
  int64_t timestamp_ms = 0;

  uint64_t frame_bytes() const { return kRecordHeaderSize + payload_bytes; }
};

// A segment file and its good records, in sequence order.
struct Segment {
  uint64_t first_sequence = 0;
  std::filesystem::path path;
  std::shared_ptr<const OpenFile> file;
  uint64_t size_bytes = 0;
  bool appendable = false;  // the active segment, ending on a record boundary
  std::vector<IndexEntry> entries;
};

struct DiskQueue::Impl {
  std::filesystem::path directory;
  QueueOptions options;
  int lock_fd = -1;

  mutable std::mutex mutex;
  std::deque<Segment> segments;  // oldest first; only the last may hold no record
  QueueCursor cursor;
  uint64_t next_sequence = 1;
  uint64_t total_bytes = 0;
  uint64_t pending_records = 0;
  uint64_t pending_samples = 0;
  uint64_t dropped_records = 0;
  uint64_t dropped_samples = 0;
  uint64_t damaged_records = 0;
  bool cursor_lost = false;
  std::vector<std::string> notes;
  std::string frame;  // the record being appended

  ~Impl() {
    if (lock_fd >= 0) ::close(lock_fd);
  }

  Status Lock();
  Status Recover();
  Status WriteCursor(const QueueCursor& next);
  Status CreateSegment(uint64_t first_sequence);
  bool DeleteOldest(bool count_as_dropped, std::string& error);
  Status DeleteAcknowledged();
  void KeepBound();
  void Forget(const IndexEntry& entry);
  // The first record after `after`: its segment and index there; nullopt when none follows.
  std::optional<std::pair<size_t, size_t>> FindAfter(uint64_t after) const;
  void MarkDamaged(uint64_t sequence);
};

}  // namespace runmon::remote_write
