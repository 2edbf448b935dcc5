// KeptOpenFile and the small helpers for one-off reads.
#include "host/file_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace runmon {
namespace {

constexpr size_t kInitialBufferBytes = 512;
constexpr size_t kReservedDescriptors = 64;

std::atomic<size_t> kept_descriptors{0};

std::string ErrnoMessage(const std::filesystem::path& path, int error_number) {
  return FileError(path, std::strerror(error_number));
}

// What a file that is not a regular one is, for the error message.
std::string_view FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "a special file";
}

// Opens `path` for reading without ever blocking (a FIFO without a writer, a tty) and accepts only a
// regular file of at most kMaxFileBytes (st_size is 0 for procfs and a page for sysfs): returns the
// descriptor, or -errno with the reason in `error`.
int OpenRegularFile(const std::filesystem::path& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int saved = errno;
    *error = ErrnoMessage(path, saved);
    return -saved;
  }
  struct stat info {};
  int refused = 0;
  if (::fstat(fd, &info) != 0) {
    refused = errno;
    *error = ErrnoMessage(path, refused);
  } else if (!S_ISREG(info.st_mode)) {
    refused = EINVAL;
    *error = FileError(path, fmt::format("{}, not a regular file", FileKind(info.st_mode)));
  } else if (static_cast<uint64_t>(info.st_size) > kMaxFileBytes) {
    refused = EFBIG;
    *error = FileError(path, fmt::format("larger than {} bytes", kMaxFileBytes));
  }
  if (refused != 0) {
    ::close(fd);
    return -refused;
  }
  return fd;
}

size_t ComputeBudget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 4096;
  const size_t soft = static_cast<size_t>(limit.rlim_cur);
  return soft * 3 / 4 > kReservedDescriptors ? soft * 3 / 4 - kReservedDescriptors : soft / 2;
}

// Reads fd from offset 0 into buffer until the end; returns the length or -errno.
ssize_t ReadAll(int fd, Generated generated, std::string& buffer, const std::filesystem::path& path,
                std::string* error) {
  if (buffer.size() < kInitialBufferBytes) buffer.resize(kInitialBufferBytes);
  size_t used = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data() + used, buffer.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      *error = ErrnoMessage(path, saved);
      return -saved;
    }
    if (n == 0) break;
    const bool short_read = static_cast<size_t>(n) < buffer.size() - used;
    used += static_cast<size_t>(n);
    if (short_read && (generated == Generated::kWhole ||
                       (generated == Generated::kShortRecords && used <= kShortRecordBytes))) {
      break;
    }
    if (used == buffer.size()) {
      if (buffer.size() >= kMaxFileBytes) {
        *error = FileError(path, fmt::format("larger than {} bytes", kMaxFileBytes));
        return -EFBIG;
      }
      buffer.resize(std::min(buffer.size() * 2, kMaxFileBytes));
    }
  }
  return static_cast<ssize_t>(used);
}

}  // namespace

KeptOpenFile::KeptOpenFile(KeptOpenFile&& other) noexcept
    : path_(std::move(other.path_)),
      generated_(other.generated_),
      fd_(other.fd_),
      last_errno_(other.last_errno_),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

KeptOpenFile& KeptOpenFile::operator=(KeptOpenFile&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    generated_ = other.generated_;
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
  if (fd_ >= 0) {
    ::close(fd_);
    kept_descriptors.fetch_sub(1, std::memory_order_relaxed);
  }
  fd_ = -1;
}

Result<std::string_view> KeptOpenFile::Read() {
  return Read(buffer_);
}

Result<std::string_view> KeptOpenFile::Read(std::string& buffer) {
  int fd = fd_;
  std::string error;
  if (fd < 0) {
    fd = OpenRegularFile(path_, &error);
    if (fd < 0) {
      last_errno_ = -fd;
      return Error{error};
    }
    if (kept_descriptors.fetch_add(1, std::memory_order_relaxed) < KeptDescriptorBudget()) {
      fd_ = fd;
    } else {
      kept_descriptors.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  const ssize_t length = ReadAll(fd, generated_, buffer, path_, &error);
  if (fd_ < 0) ::close(fd);  // over budget: this read was a one-off
  if (length < 0) {
    last_errno_ = static_cast<int>(-length);
    if (last_errno_ != EFBIG) Close();
    return Error{error};
  }
  last_errno_ = 0;
  return std::string_view(buffer.data(), static_cast<size_t>(length));
}

size_t KeptDescriptorBudget() {
  static const size_t budget = ComputeBudget();
  return budget;
}

size_t KeptDescriptorCount() {
  return kept_descriptors.load(std::memory_order_relaxed);
}

unsigned long RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  const rlim_t previous = limit.rlim_cur;
  const rlim_t wanted = std::min<rlim_t>(limit.rlim_max, 65536);
  if (wanted > limit.rlim_cur) {
    limit.rlim_cur = wanted;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  return static_cast<unsigned long>(previous);
}

Result<std::string> ReadFileToString(const std::filesystem::path& path) {
  KeptOpenFile file(path);
  auto text = file.Read();
  if (!text) return Error{text.error()};
  return std::string(*text);
}

std::optional<std::string> ReadOptionalFile(const std::filesystem::path& path,
                                            const ProblemReporter& report) {
  KeptOpenFile file(path);
  auto text = file.Read();
  if (text) return std::string(*text);
  if (!IsGoneErrno(file.last_errno()) && report) report(text.error());
  return std::nullopt;
}

std::string FileError(const std::filesystem::path& path, std::string_view message) {
  return fmt::format("{}: {}", path.string(), message);
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
