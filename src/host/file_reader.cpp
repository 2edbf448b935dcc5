// KeptOpenFile and the small helpers for one-off reads.
#include "host/file_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace runmon {
namespace {

std::string ErrnoMessage(const std::filesystem::path& path, int error_number) {
  return fmt::format("{}: {}", path.string(), std::strerror(error_number));
}

}  // namespace

KeptOpenFile::KeptOpenFile(KeptOpenFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      last_errno_(other.last_errno_),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

KeptOpenFile& KeptOpenFile::operator=(KeptOpenFile&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    last_errno_ = other.last_errno_;
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

KeptOpenFile::~KeptOpenFile() {
  Close();
}

void KeptOpenFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<std::string_view> KeptOpenFile::Read() {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) {
      last_errno_ = errno;
      return Error{ErrnoMessage(path_, last_errno_)};
    }
  }
  if (buffer_.size() < 4096) buffer_.resize(4096);
  size_t used = 0;
  for (;;) {
    const ssize_t n = ::pread(fd_, buffer_.data() + used, buffer_.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      last_errno_ = errno;
      Close();
      return Error{ErrnoMessage(path_, last_errno_)};
    }
    if (n == 0) break;
    const bool short_read = static_cast<size_t>(n) < buffer_.size() - used;
    used += static_cast<size_t>(n);
    // procfs, sysfs and cgroup files fill the whole buffer unless they are at their end, so a short read
    // is the end; this saves the second pread that would only return 0.
    if (short_read) break;
    if (used == buffer_.size()) {
      if (buffer_.size() >= kMaxFileBytes) {
        last_errno_ = EFBIG;
        return Error{fmt::format("{}: larger than {} bytes", path_.string(), kMaxFileBytes)};
      }
      buffer_.resize(buffer_.size() * 2);
    }
  }
  last_errno_ = 0;
  return std::string_view(buffer_.data(), used);
}

Result<std::string> ReadFileToString(const std::filesystem::path& path) {
  KeptOpenFile file(path);
  auto text = file.Read();
  if (!text) return Error{text.error()};
  return std::string(*text);
}

Result<std::vector<std::string>> ListDirectory(const std::filesystem::path& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return Error{ErrnoMessage(path, errno)};
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

bool IsGoneErrno(int error_number) {
  return error_number == ENOENT || error_number == ESRCH;
}

}  // namespace runmon
