// Exclusive create, whole-record writes with cut-back on failure (see log_writer.hpp).
#include "runlog/log_writer.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "runlog/log_format.hpp"

namespace runmon::runlog {

Result<LogWriter> LogWriter::Create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", path.string(), std::strerror(errno))};
  // Held while the log is open, so a follower can tell a writer that is gone from one that is quiet.
  ::flock(fd, LOCK_EX | LOCK_NB);
  LogWriter writer(fd, path);
  writer.framed_.assign(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  if (auto status = writer.WriteFramed(kFileHeaderSize); !status) {
    ::close(writer.fd_);
    writer.fd_ = -1;
    ::unlink(path.c_str());
    return Error{status.error()};
  }
  return writer;
}

LogWriter::LogWriter(LogWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_(other.size_),
      framed_(std::move(other.framed_)) {}

LogWriter& LogWriter::operator=(LogWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
    framed_ = std::move(other.framed_);
  }
  return *this;
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogWriter::Append(std::string_view payload) {
  if (payload.empty()) return Error{"refusing to write an empty record"};
  framed_.clear();
  const uint64_t end = AppendFramedRecord(size_, payload, framed_);
  return WriteFramed(end);
}

Status LogWriter::Append(std::span<const std::string> payloads) {
  framed_.clear();
  uint64_t end = size_;
  for (const auto& payload : payloads) {
    if (payload.empty()) return Error{"refusing to write an empty record"};
    end = AppendFramedRecord(end, payload, framed_);
  }
  if (framed_.empty()) return OkStatus();
  return WriteFramed(end);
}

Status LogWriter::WriteFramed(uint64_t end) {
  if (fd_ < 0) return Error{"the log is closed"};
  size_t written = 0;
  while (written < framed_.size()) {
    const ssize_t n = ::pwrite(fd_, framed_.data() + written, framed_.size() - written,
                               static_cast<off_t>(size_ + written));
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int error = n < 0 ? errno : ENOSPC;
    // Cut off the part that did get written, so the file still ends with a whole record.
    if (written > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      return Error{fmt::format("writing {} failed ({}), and cutting off the partial record failed: {}",
                               path_.string(), std::strerror(error), std::strerror(errno))};
    }
    return Error{fmt::format("writing {} failed: {}", path_.string(), std::strerror(error))};
  }
  size_ = end;
  return OkStatus();
}

Status LogWriter::Sync() {
  if (fd_ < 0) return Error{"the log is closed"};
  if (::fdatasync(fd_) != 0) return Error{fmt::format("fsync {}: {}", path_.string(), std::strerror(errno))};
  return OkStatus();
}

}  // namespace runmon::runlog
