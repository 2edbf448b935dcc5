// Open's recovery of the remote-write queue (disk_queue.hpp; the state in disk_queue_state.hpp): it scans
// every segment (mmap, ScanSegment), keeps an index of the good records (sequence -> segment, offset,
// length, samples, timestamp) and cuts a torn tail off the last segment so appends continue on a record
// boundary. Records a damaged region cost are counted as damaged; a segment in which nothing checks out
// is deleted (a file shorter than its header is one that was created by a process killed before it wrote
// the header). A cursor that is damaged, or missing while segments exist, is replaced by one at the
// oldest record, and said so (counts().cursor_lost, open_notes()). The next sequence is one past the
// highest of the last record, the cursor and an empty active segment's name, so a sequence is never
// handed out twice for records that may have been sent. Segments the cursor says are done are deleted,
// and the bound is kept (max_bytes may be smaller than when they were written).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "remote_write/disk_queue_state.hpp"

namespace runmon::remote_write {
namespace fs = std::filesystem;

namespace {

// Reads `size` bytes at `offset` into `out`; fewer when the file ends first.
Status ReadAt(int fd, uint64_t offset, size_t size, std::string& out) {
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      return Error{ErrnoText(errno)};
    }
  }
  out.resize(done);
  return OkStatus();
}

// The cursor file's bytes; nullopt when there is none. At most one byte more than a cursor is read.
Result<std::optional<std::string>> ReadCursorFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Error{fmt::format("cannot open {}: {}", path.string(), ErrnoText(errno))};
  }
  std::string bytes;
  const Status status = ReadAt(fd, 0, kCursorSize + 1, bytes);
  ::close(fd);
  if (!status) return Error{fmt::format("cannot read {}: {}", path.string(), status.error())};
  return std::optional<std::string>(std::move(bytes));
}

struct MappedFile {
  const char* data = nullptr;
  size_t size = 0;
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data != nullptr) ::munmap(const_cast<char*>(data), size);
  }
};

}  // namespace

Status DiskQueue::Impl::Recover() {
  ::unlink((directory / kCursorTemporaryName).c_str());

  std::optional<CursorFields> stored_cursor;
  bool cursor_file_present = false;
  if (auto bytes = ReadCursorFile(directory / kCursorName); !bytes) {
    notes.push_back(bytes.error());
    cursor_file_present = true;
  } else if (bytes->has_value()) {
    cursor_file_present = true;
    if (auto decoded = DecodeCursor(**bytes); decoded) {
      stored_cursor = *decoded;
    } else {
      notes.push_back(fmt::format("{}: {}", (directory / kCursorName).string(), decoded.error()));
    }
  }

  std::vector<std::pair<uint64_t, fs::path>> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto sequence = ParseSegmentFileName(entry.path().filename().string());
    std::error_code type_error;
    if (sequence && entry.is_regular_file(type_error)) files.emplace_back(*sequence, entry.path());
  }
  if (error) return Error{fmt::format("cannot list {}: {}", directory.string(), error.message())};
  std::sort(files.begin(), files.end());

  uint64_t last_record = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [first_sequence, path] = files[i];
    const bool last_file = i + 1 == files.size();
    const int fd = ::open(path.c_str(), (last_file ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) return Error{fmt::format("cannot open {}: {}", path.string(), ErrnoText(errno))};
    auto file = std::make_shared<const OpenFile>(fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0)
      return Error{fmt::format("cannot stat {}: {}", path.string(), ErrnoText(errno))};
    Result<SegmentScan> scan = SegmentScan{};
    {
      MappedFile mapped;
      if (info.st_size > 0) {
        void* data = ::mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED)
          return Error{fmt::format("cannot map {}: {}", path.string(), ErrnoText(errno))};
        mapped.data = static_cast<const char*>(data);
        mapped.size = static_cast<size_t>(info.st_size);
      }
      scan = ScanSegment(std::string_view(mapped.data, mapped.size), first_sequence, last_record);
    }
    if (!scan) return Error{fmt::format("{}: {}", path.string(), scan.error())};
    damaged_records += scan->damaged_records;
    const std::string name = path.filename().string();
    if (!scan->problem.empty()) {
      notes.push_back(fmt::format("{}: {} ({} damaged records)", name, scan->problem, scan->damaged_records));
    }
    // A segment with nothing readable holds nothing to keep (an empty one before the last is one whose
    // first append failed; the last one may stay as the active segment).
    if (scan->records.empty() && (!scan->header_ok || !last_file)) {
      if (::unlink(path.c_str()) != 0) {
        return Error{fmt::format("cannot delete {}: {}", path.string(), ErrnoText(errno))};
      }
      if (info.st_size > static_cast<off_t>(kSegmentHeaderSize)) {
        notes.push_back(fmt::format("{}: deleted, no record in it checks out", name));
      }
      continue;
    }
    uint64_t size = static_cast<uint64_t>(info.st_size);
    bool appendable = last_file && scan->header_ok;
    if (appendable && scan->good_end < size) {
      if (::ftruncate(fd, static_cast<off_t>(scan->good_end)) == 0) {
        notes.push_back(fmt::format("{}: cut a torn tail of {} bytes at offset {}", name,
                                    size - scan->good_end, scan->good_end));
        size = scan->good_end;
      } else {
        notes.push_back(fmt::format("{}: cannot cut the torn tail at offset {}: {}", name, scan->good_end,
                                    ErrnoText(errno)));
        appendable = false;
      }
    }
    Segment segment{.first_sequence = first_sequence,
                    .path = path,
                    .file = std::move(file),
                    .size_bytes = size,
                    .appendable = appendable,
                    .entries = {}};
    segment.entries.reserve(scan->records.size());
    for (const ScannedRecord& record : scan->records) {
      segment.entries.push_back({.sequence = record.sequence,
                                 .offset = record.offset,
                                 .payload_bytes = record.payload_bytes,
                                 .samples = record.samples,
                                 .timestamp_ms = record.timestamp_ms});
    }
    if (!segment.entries.empty()) last_record = segment.entries.back().sequence;
    total_bytes += size;
    segments.push_back(std::move(segment));
  }

  uint64_t highest = last_record;
  if (!segments.empty() && segments.back().entries.empty()) {
    highest = std::max(highest, segments.back().first_sequence - 1);
  }
  if (stored_cursor) {
    cursor = {.acked = stored_cursor->acked, .inflight_end = stored_cursor->inflight_end};
    next_sequence = std::max(highest, cursor.inflight_end) + 1;
  } else {
    next_sequence = highest + 1;
    const auto first = FindAfter(0);
    const uint64_t oldest = first ? segments[first->first].entries[first->second].sequence : next_sequence;
    cursor_lost = cursor_file_present || !segments.empty();
    if (cursor_lost) {
      notes.push_back(fmt::format("the cursor was {}: every record from {} on is taken as pending",
                                  cursor_file_present ? "damaged" : "missing", oldest));
    }
    if (auto status = WriteCursor({.acked = oldest - 1, .inflight_end = oldest - 1}); !status) return status;
  }
  // An empty active segment whose name is not the next sequence holds nothing: the next append starts one.
  if (!segments.empty() && segments.back().entries.empty() &&
      segments.back().first_sequence != next_sequence) {
    if (::unlink(segments.back().path.c_str()) != 0) {
      return Error{fmt::format("cannot delete {}: {}", segments.back().path.string(), ErrnoText(errno))};
    }
    total_bytes -= segments.back().size_bytes;
    segments.pop_back();
  }

  for (const Segment& segment : segments) {
    for (const IndexEntry& entry : segment.entries) {
      if (entry.sequence > cursor.acked) {
        ++pending_records;
        pending_samples += entry.samples;
      }
    }
  }
  if (auto status = DeleteAcknowledged(); !status) return status;
  KeepBound();
  return OkStatus();
}

}  // namespace runmon::remote_write
