// Reading, checking and writing summary index files (see index_file.hpp).
#include "runlog/index_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "runlog/log_format.hpp"
#include "runlog/run_directory.hpp"

namespace runmon::runlog {
namespace {

Status ReadAll(int fd, uint64_t offset, size_t length, std::string& out) {
  out.resize(length);
  size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd, out.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      return Error{fmt::format("read failed: {}", std::strerror(errno))};
    }
  }
  out.resize(got);
  return OkStatus();
}

// Drops every node that covers a segment past the last one kept.
void DropNodesPastSegments(SummaryIndex& index) {
  const uint64_t covered = index.covered_segments();
  for (size_t level = 1; level < index.levels.size(); ++level) {
    auto& nodes = index.levels[level];
    while (!nodes.empty() && nodes.back().first_segment + nodes.back().segment_span() >= covered)
      nodes.pop_back();
  }
  while (index.levels.size() > 1 && index.levels.back().empty()) index.levels.pop_back();
}

}  // namespace

std::filesystem::path IndexPathFor(const std::filesystem::path& log) {
  std::filesystem::path index = log;
  index += ".idx";
  return index;
}

Result<uint32_t> BoundaryCrc(int log_fd, uint64_t segment) {
  std::string bytes;
  // The first segment's check covers the log's start: its header and run record, the run's identity.
  const uint64_t start = segment == 0 ? 0 : SegmentEnd(segment) - kBoundaryCheckBytes;
  if (auto status = ReadAll(log_fd, start, kBoundaryCheckBytes, bytes); !status) {
    return Error{status.error()};
  }
  if (bytes.size() < kBoundaryCheckBytes) return Error{"the log ends before the segment does"};
  return Crc32(0, bytes);
}

CheckedIndex LoadCheckedIndex(const std::filesystem::path& index_path, int log_fd, uint64_t log_size) {
  CheckedIndex checked;
  const int fd = ::open(index_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    checked.missing = errno == ENOENT;
    checked.problem = checked.missing ? "no index" : fmt::format("cannot open: {}", std::strerror(errno));
    return checked;
  }
  struct stat info {};
  std::string bytes;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    checked.problem = "not a regular file";
  } else if (static_cast<uint64_t>(info.st_size) > kMaxIndexFileBytes) {
    checked.problem = fmt::format("larger than {} MiB", kMaxIndexFileBytes >> 20);
  } else if (auto status = ReadAll(fd, 0, static_cast<size_t>(info.st_size), bytes); !status) {
    checked.problem = status.error();
  }
  ::close(fd);
  if (!checked.problem.empty()) return checked;

  ParsedIndex parsed = ParseIndex(bytes);
  checked.index = std::move(parsed.index);
  checked.problem = std::move(parsed.problem);
  auto& index = checked.index;
  if (index.levels.empty()) return checked;
  auto& segments = index.levels[0];
  // Segments the log no longer holds whole (it was cut short, perhaps inside a record that starts in
  // the segment and ends past it): dropped, and the boundary check moves to the last one it does hold.
  size_t inside = segments.size();
  const auto held = [&](const SegmentSummary& segment) {
    return std::max(SegmentEnd(segment.first_segment), segment.end_offset) <= log_size;
  };
  while (inside > 0 && !held(segments[inside - 1])) --inside;
  if (inside < segments.size()) {
    if (checked.problem.empty()) checked.problem = "the log is shorter than the index says";
    segments.resize(inside);
  }
  if (!segments.empty()) {
    for (const size_t at : {size_t{0}, segments.size() - 1}) {
      const auto crc = BoundaryCrc(log_fd, segments[at].first_segment);
      if (!crc || *crc != segments[at].boundary_crc) {
        checked.problem = "the log's bytes differ from those indexed (a rewritten or replaced log)";
        segments.clear();
        break;
      }
    }
  }
  DropNodesPastSegments(index);
  if (segments.empty()) index.levels.clear();
  return checked;
}

Status WriteIndexFile(const std::filesystem::path& index_path, const SummaryIndex& index) {
  return WriteFileAtomically(index_path, EncodeIndex(index));
}

Result<IndexAppender> IndexAppender::Create(const std::filesystem::path& index_path) {
  const int fd = ::open(index_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", index_path.string(), std::strerror(errno))};
  IndexAppender appender(fd);
  if (auto status = appender.Append(EncodeIndexHeader()); !status) return Error{status.error()};
  return appender;
}

IndexAppender::IndexAppender(IndexAppender&& other) noexcept : fd_(other.fd_), failed_(other.failed_) {
  other.fd_ = -1;
}

IndexAppender& IndexAppender::operator=(IndexAppender&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    failed_ = other.failed_;
    other.fd_ = -1;
  }
  return *this;
}

IndexAppender::~IndexAppender() {
  if (fd_ >= 0) ::close(fd_);
}

Status IndexAppender::Append(std::string_view entries) {
  if (failed_ || fd_ < 0) return Error{"the index is no longer written"};
  while (!entries.empty()) {
    const ssize_t n = ::write(fd_, entries.data(), entries.size());
    if (n > 0) {
      entries.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // A torn entry is left: readers stop at it and rebuild the rest from the log.
      failed_ = true;
      return Error{fmt::format("index write failed: {}", n < 0 ? std::strerror(errno) : "no progress")};
    }
  }
  return OkStatus();
}

}  // namespace runmon::runlog
