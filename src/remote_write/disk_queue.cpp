// The remote-write queue's files (contract in disk_queue.hpp, byte formats in queue_format.hpp; what Open
// recovers in disk_queue_recovery.cpp).
//
// The directory holds `lock` (flocked while a queue is open), `cursor` (written to `cursor.tmp`, then
// renamed over it) and the segments `<first sequence, 20 digits>.seg`. The last segment is the active one:
// appends go to its end, each record with one pwrite(2) of its header and payload; a write that fails part
// way is cut off again (ftruncate to the record's start), and when even that fails the segment is left as
// it is and the next append starts a new one, so no record ever follows a partial one. A new segment is
// started when the record would take the active one past segment_bytes, and when the next sequence does not
// follow its last record (after a restart with a cursor ahead of the records).
//
// The bound: after a record is written, the oldest segments are deleted while all of them together exceed
// max_bytes (never the one just written to, which alone fits: a record that could not is refused before
// anything is written). So a write that fails leaves every record as it was, and the directory passes
// max_bytes by at most one record while the write is under way. Deleted records after the cursor's acked
// are counted as dropped. Ack deletes the segments (other than the active one) whose records are all
// acknowledged; the active one stays for the appends and goes after the next segment is started.
//
// Nothing is fsynced. A kill -9 loses nothing written (the page cache keeps it); on a power loss the
// cursor may come back older (records are sent again) or a deleted segment come back (its records are
// acknowledged and deleted again, or sent when they were dropped): neither loses a record, so the
// directory is not fsynced after a deletion either.
//
// Read plans under the lock (the index gives every record's place) and reads without it: one preadv(2) per
// run of adjacent records, straight into the records returned, each checked again (header, sequence and
// CRC) before it is returned. A record that no longer checks out is taken out of the index and counted as
// damaged. Segments are shared with the reads through their descriptors, so a segment the appender
// deletes meanwhile stays readable.
#include "remote_write/disk_queue.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "remote_write/disk_queue_state.hpp"
#include "remote_write/queue_format.hpp"

namespace runmon::remote_write {
namespace fs = std::filesystem;

std::string ErrnoText(int error) {
  return std::strerror(error);
}

namespace {

// Writes all of `bytes` at `offset`; `written` says how much got there when it fails.
Status WriteAt(int fd, std::string_view bytes, uint64_t offset, size_t& written) {
  written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + written, bytes.size() - written, static_cast<off_t>(offset + written));
    if (n > 0) {
      written += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return Error{ErrnoText(n < 0 ? errno : ENOSPC)};
    }
  }
  return OkStatus();
}

// Fills `parts` from the file at `offset` with preadv(2) (IOV_MAX parts a call); how many bytes came, fewer
// than the parts hold when the file ends first. `parts` is used up.
Result<uint64_t> ReadParts(int fd, uint64_t offset, std::vector<iovec>& parts) {
  uint64_t total = 0;
  size_t next = 0;
  while (next < parts.size()) {
    const auto count = static_cast<int>(std::min<size_t>(parts.size() - next, IOV_MAX));
    const ssize_t n = ::preadv(fd, parts.data() + next, count, static_cast<off_t>(offset + total));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{ErrnoText(errno)};
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    // Past the parts that were filled; one filled in part goes on where it stopped.
    auto left = static_cast<size_t>(n);
    while (next < parts.size() && (left >= parts[next].iov_len)) {
      left -= parts[next].iov_len;
      ++next;
    }
    if (left > 0) {
      parts[next].iov_base = static_cast<char*>(parts[next].iov_base) + left;
      parts[next].iov_len -= left;
    }
  }
  return total;
}

}  // namespace

Status DiskQueue::Impl::Lock() {
  const fs::path path = directory / kLockName;
  lock_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Error{fmt::format("cannot open {}: {}", path.string(), ErrnoText(errno))};
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Error{fmt::format("the remote-write queue in {} is in use by another runmon (flock on {})",
                               directory.string(), path.string())};
    }
    return Error{fmt::format("cannot lock {}: {}", path.string(), ErrnoText(errno))};
  }
  return OkStatus();
}

Status DiskQueue::Impl::WriteCursor(const QueueCursor& next) {
  const fs::path temporary = directory / kCursorTemporaryName;
  const fs::path path = directory / kCursorName;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", temporary.string(), ErrnoText(errno))};
  size_t written = 0;
  Status status =
      WriteAt(fd, EncodeCursor({.acked = next.acked, .inflight_end = next.inflight_end}), 0, written);
  if (::close(fd) != 0 && status) status = Error{ErrnoText(errno)};
  if (status && ::rename(temporary.c_str(), path.c_str()) != 0) status = Error{ErrnoText(errno)};
  if (!status) {
    ::unlink(temporary.c_str());
    return Error{fmt::format("cannot write {}: {}", path.string(), status.error())};
  }
  cursor = next;
  return OkStatus();
}

std::optional<std::pair<size_t, size_t>> DiskQueue::Impl::FindAfter(uint64_t after) const {
  size_t searched = segments.size();
  if (searched > 0 && segments.back().entries.empty()) --searched;
  const auto begin = segments.begin();
  const auto found =
      std::partition_point(begin, begin + static_cast<std::ptrdiff_t>(searched),
                           [after](const Segment& s) { return s.entries.back().sequence <= after; });
  if (found == begin + static_cast<std::ptrdiff_t>(searched)) return std::nullopt;
  const auto& entries = found->entries;
  const auto entry = std::partition_point(entries.begin(), entries.end(),
                                          [after](const IndexEntry& e) { return e.sequence <= after; });
  return std::make_pair(static_cast<size_t>(found - begin), static_cast<size_t>(entry - entries.begin()));
}

void DiskQueue::Impl::Forget(const IndexEntry& entry) {
  if (entry.sequence > cursor.acked) {
    --pending_records;
    pending_samples -= entry.samples;
  }
}

bool DiskQueue::Impl::DeleteOldest(bool count_as_dropped, std::string& error) {
  const Segment& oldest = segments.front();
  if (::unlink(oldest.path.c_str()) != 0 && errno != ENOENT) {
    error = fmt::format("cannot delete {}: {}", oldest.path.string(), ErrnoText(errno));
    return false;
  }
  for (const IndexEntry& entry : oldest.entries) {
    if (count_as_dropped && entry.sequence > cursor.acked) {
      ++dropped_records;
      dropped_samples += entry.samples;
    }
    Forget(entry);
  }
  total_bytes -= oldest.size_bytes;
  segments.pop_front();
  return true;
}

Status DiskQueue::Impl::DeleteAcknowledged() {
  std::string error;
  while (segments.size() > 1 &&
         (segments.front().entries.empty() || segments.front().entries.back().sequence <= cursor.acked)) {
    if (!DeleteOldest(false, error)) return Error{error};
  }
  return OkStatus();
}

void DiskQueue::Impl::KeepBound() {
  // A segment that cannot be deleted stays (its records are neither dropped nor lost) and is tried again
  // after the next append.
  std::string error;
  while (total_bytes > options.max_bytes && segments.size() > 1) {
    if (!DeleteOldest(true, error)) break;
  }
}

Status DiskQueue::Impl::CreateSegment(uint64_t first_sequence) {
  const fs::path path = directory / SegmentFileName(first_sequence);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", path.string(), ErrnoText(errno))};
  auto file = std::make_shared<const OpenFile>(fd);
  size_t written = 0;
  if (auto status = WriteAt(fd, EncodeSegmentHeader(first_sequence), 0, written); !status) {
    ::unlink(path.c_str());
    return Error{fmt::format("cannot write {}: {}", path.string(), status.error())};
  }
  if (!segments.empty()) segments.back().appendable = false;
  segments.push_back({.first_sequence = first_sequence,
                      .path = path,
                      .file = std::move(file),
                      .size_bytes = kSegmentHeaderSize,
                      .appendable = true,
                      .entries = {}});
  total_bytes += kSegmentHeaderSize;
  return OkStatus();
}

void DiskQueue::Impl::MarkDamaged(uint64_t sequence) {
  const auto found = FindAfter(sequence - 1);
  if (!found) return;
  auto& entries = segments[found->first].entries;
  const auto entry = entries.begin() + static_cast<std::ptrdiff_t>(found->second);
  if (entry->sequence != sequence) return;
  Forget(*entry);
  ++damaged_records;
  entries.erase(entry);
  // Only the last segment may be empty: one before it emptied by damage leaves the index, and its file
  // goes too (when it cannot, the next Open finds it again).
  if (entries.empty() && found->first + 1 < segments.size()) {
    Segment& segment = segments[found->first];
    ::unlink(segment.path.c_str());
    total_bytes -= segment.size_bytes;
    segments.erase(segments.begin() + static_cast<std::ptrdiff_t>(found->first));
  }
}

Result<std::unique_ptr<DiskQueue>> DiskQueue::Open(const fs::path& directory, QueueOptions options) {
  if (options.segment_bytes == 0 || options.segment_bytes > options.max_bytes) {
    return Error{fmt::format("remote-write queue: segment_bytes {} must be between 1 and max_bytes {}",
                             options.segment_bytes, options.max_bytes)};
  }
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) return Error{fmt::format("cannot create {}: {}", directory.string(), error.message())};
  auto impl = std::make_unique<Impl>();
  impl->directory = directory;
  impl->options = options;
  if (auto status = impl->Lock(); !status) return Error{status.error()};
  if (auto status = impl->Recover(); !status) return Error{status.error()};
  return std::unique_ptr<DiskQueue>(new DiskQueue(std::move(impl)));
}

DiskQueue::DiskQueue(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DiskQueue::~DiskQueue() = default;

Status DiskQueue::Append(uint32_t samples, int64_t timestamp_ms, std::string_view payload) {
  Impl& q = *impl_;
  const uint64_t frame_bytes = kRecordHeaderSize + payload.size();
  if (payload.size() > kMaxPayloadBytes || kSegmentHeaderSize + frame_bytes > q.options.max_bytes) {
    return Error{
        fmt::format("a record of {} bytes does not fit in the remote-write queue's bound of {} bytes",
                    frame_bytes, q.options.max_bytes)};
  }
  std::lock_guard lock(q.mutex);
  if (q.next_sequence > kMaxSequence) return Error{"the remote-write queue has run out of sequence numbers"};
  if (!q.segments.empty() && q.segments.back().entries.empty() &&
      (!q.segments.back().appendable || q.segments.back().first_sequence != q.next_sequence)) {
    // An active segment without records that cannot take this one (its first append could not be cut off,
    // or damage emptied it): nothing in it to keep, and only the last segment may be empty.
    if (::unlink(q.segments.back().path.c_str()) != 0 && errno != ENOENT) {
      return Error{fmt::format("cannot delete {}: {}", q.segments.back().path.string(), ErrnoText(errno))};
    }
    q.total_bytes -= q.segments.back().size_bytes;
    q.segments.pop_back();
  }
  const bool start_segment = [&] {
    if (q.segments.empty() || !q.segments.back().appendable) return true;
    const Segment& active = q.segments.back();
    return !active.entries.empty() && (active.entries.back().sequence + 1 != q.next_sequence ||
                                       active.size_bytes + frame_bytes > q.options.segment_bytes);
  }();
  if (start_segment) {
    if (auto status = q.CreateSegment(q.next_sequence); !status) return status;
  }

  Segment& active = q.segments.back();
  q.frame.clear();
  AppendRecord(q.next_sequence, samples, timestamp_ms, payload, q.frame);
  const uint64_t start = active.size_bytes;
  size_t written = 0;
  if (auto status = WriteAt(active.file->fd(), q.frame, start, written); !status) {
    if (written > 0 && ::ftruncate(active.file->fd(), static_cast<off_t>(start)) != 0) {
      // The partial record stays; nothing more goes into this segment (the next Open counts it as damage).
      active.appendable = false;
      active.size_bytes += written;
      q.total_bytes += written;
      return Error{fmt::format("cannot append to {}: {}; cutting off the partial record failed too: {}",
                               active.path.string(), status.error(), ErrnoText(errno))};
    }
    return Error{fmt::format("cannot append to {}: {}", active.path.string(), status.error())};
  }
  active.entries.push_back({.sequence = q.next_sequence,
                            .offset = start,
                            .payload_bytes = static_cast<uint32_t>(payload.size()),
                            .samples = samples,
                            .timestamp_ms = timestamp_ms});
  active.size_bytes += frame_bytes;
  q.total_bytes += frame_bytes;
  ++q.next_sequence;
  ++q.pending_records;
  q.pending_samples += samples;
  q.KeepBound();
  return OkStatus();
}

Result<std::vector<QueueRecord>> DiskQueue::Read(uint64_t after, size_t max_samples) const {
  Impl& q = *impl_;
  struct Planned {
    std::shared_ptr<const OpenFile> file;
    IndexEntry entry;
  };
  std::vector<Planned> plan;
  std::vector<uint64_t> damaged;
  std::string headers;
  std::vector<iovec> parts;
  // Every pass that finds only damaged records has taken them out of the index: the next finds others.
  for (;;) {
    plan.clear();
    {
      std::lock_guard lock(q.mutex);
      const auto found = q.FindAfter(after);
      if (!found) return std::vector<QueueRecord>();
      uint64_t samples = 0;
      for (size_t s = found->first; s < q.segments.size(); ++s) {
        const Segment& segment = q.segments[s];
        const size_t first = s == found->first ? found->second : 0;
        bool full = false;
        for (size_t e = first; e < segment.entries.size(); ++e) {
          const IndexEntry& entry = segment.entries[e];
          if (!plan.empty() && samples + entry.samples > max_samples) {
            full = true;
            break;
          }
          samples += entry.samples;
          plan.push_back({segment.file, entry});
        }
        if (full) break;
      }
    }

    std::vector<QueueRecord> records;
    records.reserve(plan.size());
    damaged.clear();
    for (size_t begin = 0; begin < plan.size();) {
      // A run of records that lie one after the other in one segment: read with one preadv(2), the headers
      // into `headers` and each payload into its record.
      size_t end = begin + 1;
      while (end < plan.size() && plan[end].file == plan[begin].file &&
             plan[end].entry.offset == plan[end - 1].entry.offset + plan[end - 1].entry.frame_bytes()) {
        ++end;
      }
      const size_t first = records.size();
      for (size_t i = begin; i < end; ++i) {
        records.push_back({.sequence = plan[i].entry.sequence,
                           .samples = 0,
                           .timestamp_ms = 0,
                           .payload = std::string(plan[i].entry.payload_bytes, '\0')});
      }
      headers.assign((end - begin) * kRecordHeaderSize, '\0');
      parts.clear();
      for (size_t i = 0; i < end - begin; ++i) {
        parts.push_back({headers.data() + i * kRecordHeaderSize, kRecordHeaderSize});
        parts.push_back({records[first + i].payload.data(), records[first + i].payload.size()});
      }
      const auto got = ReadParts(plan[begin].file->fd(), plan[begin].entry.offset, parts);
      if (!got) {
        return Error{
            fmt::format("cannot read the remote-write queue in {}: {}", q.directory.string(), got.error())};
      }
      uint64_t read_up_to = 0;
      for (size_t i = 0; i < end - begin; ++i) {
        QueueRecord& record = records[first + i];
        read_up_to += plan[begin + i].entry.frame_bytes();
        const auto header = read_up_to <= *got ? DecodeRecordHeader(std::string_view(headers).substr(
                                                     i * kRecordHeaderSize, kRecordHeaderSize))
                                               : std::nullopt;
        if (!header || header->sequence != record.sequence ||
            !RecordPayloadMatches(*header, record.payload)) {
          damaged.push_back(record.sequence);
          record.sequence = 0;  // no record has sequence 0: taken out below
          continue;
        }
        record.samples = header->samples;
        record.timestamp_ms = header->timestamp_ms;
      }
      begin = end;
    }
    if (!damaged.empty()) {
      std::erase_if(records, [](const QueueRecord& record) { return record.sequence == 0; });
      std::lock_guard lock(q.mutex);
      for (const uint64_t sequence : damaged) q.MarkDamaged(sequence);
    }
    if (!records.empty() || damaged.empty()) return records;
  }
}

QueueCursor DiskQueue::cursor() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->cursor;
}

Status DiskQueue::SetInflight(uint64_t inflight_end) {
  Impl& q = *impl_;
  std::lock_guard lock(q.mutex);
  if (inflight_end < q.cursor.acked || inflight_end >= q.next_sequence) {
    return Error{fmt::format("in-flight end {} is outside the queue's acked {} to last {}", inflight_end,
                             q.cursor.acked, q.next_sequence - 1)};
  }
  return q.WriteCursor({.acked = q.cursor.acked, .inflight_end = inflight_end});
}

Status DiskQueue::Ack(uint64_t through) {
  Impl& q = *impl_;
  std::lock_guard lock(q.mutex);
  if (through < q.cursor.acked || through >= q.next_sequence) {
    return Error{fmt::format("acknowledging through {} is outside the queue's acked {} to last {}", through,
                             q.cursor.acked, q.next_sequence - 1)};
  }
  const uint64_t before = q.cursor.acked;
  if (auto status =
          q.WriteCursor({.acked = through, .inflight_end = std::max(q.cursor.inflight_end, through)});
      !status) {
    return status;
  }
  for (auto found = q.FindAfter(before); found;) {
    const Segment& segment = q.segments[found->first];
    size_t e = found->second;
    for (; e < segment.entries.size() && segment.entries[e].sequence <= through; ++e) {
      --q.pending_records;
      q.pending_samples -= segment.entries[e].samples;
    }
    if (e < segment.entries.size() || found->first + 1 >= q.segments.size()) break;
    found = std::make_pair(found->first + 1, size_t{0});
  }
  return q.DeleteAcknowledged();
}

QueueCounts DiskQueue::counts() const {
  const Impl& q = *impl_;
  std::lock_guard lock(q.mutex);
  QueueCounts counts{.pending_records = q.pending_records,
                     .pending_samples = q.pending_samples,
                     .oldest_pending_ms = 0,
                     .dropped_records = q.dropped_records,
                     .dropped_samples = q.dropped_samples,
                     .damaged_records = q.damaged_records,
                     .cursor_lost = q.cursor_lost};
  if (const auto found = q.FindAfter(q.cursor.acked)) {
    counts.oldest_pending_ms = q.segments[found->first].entries[found->second].timestamp_ms;
  }
  return counts;
}

std::vector<std::string> DiskQueue::open_notes() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->notes;
}

uint64_t DiskQueue::last_sequence() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->next_sequence - 1;
}

uint64_t DiskQueue::size_bytes() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->total_bytes;
}

}  // namespace runmon::remote_write
