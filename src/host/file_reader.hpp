// File access for collectors. KeptOpenFile opens a file once and re-reads it from offset 0 with pread on
// every sample: for /proc and cgroup files the kernel regenerates the text on each read, and keeping the
// descriptor saves the open/close that dominate the cost of small reads. A file is read until pread returns
// 0, except where a short read provably is the end (see Generated), which saves one system call per file
// and tick: the kernel hands out multi-record files (mountinfo, diskstats, net/dev, children lists) a page
// or a line-aligned part at a time, so in general a short read is not the end. Reads are bounded
// (kMaxFileBytes) so a hostile or runaway file cannot exhaust memory. Descriptors are a budget, not a given:
// a tree of thousands of processes keeps up to four files each (stat, statm, children; schedstat for a single
// thread), so only up to KeptDescriptorBudget() descriptors stay open; past it a file is opened, read and
// closed each time (slower, never failing with EMFILE and never starving the other collectors).
//
// Only regular files are read. The kernel's procfs, sysfs and cgroup files are regular files (of st_size 0
// or a page), so a FIFO, a device (/dev/zero), a socket or a directory where one is expected is a broken or
// hostile tree (`--root`, a container's mounts): files are opened non-blocking (a FIFO without a writer
// would block the open for ever), checked with fstat and refused with an error naming the path, so no read
// can hang or flood.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/result.hpp"

namespace runmon {

inline constexpr size_t kMaxFileBytes = 16 * 1024 * 1024;

// How the kernel produces a file's text.
enum class Generated {
  kInRecords,     // records (lines) of any length, in page-sized parts: read until pread returns 0
  kShortRecords,  // records under kShortRecordBytes (diskstats, net/dev, children lists): the kernel fills at
                  // least a page per read, so a short read of at most kShortRecordBytes in all is the end
  kWhole,         // in one piece (single_open): the first short read is the end
};
inline constexpr size_t kShortRecordBytes = 2048;

class KeptOpenFile {
 public:
  KeptOpenFile() = default;
  explicit KeptOpenFile(std::filesystem::path path, Generated generated = Generated::kInRecords)
      : path_(std::move(path)), generated_(generated) {}
  KeptOpenFile(const KeptOpenFile&) = delete;
  KeptOpenFile& operator=(const KeptOpenFile&) = delete;
  KeptOpenFile(KeptOpenFile&& other) noexcept;
  KeptOpenFile& operator=(KeptOpenFile&& other) noexcept;
  ~KeptOpenFile();

  // Reads the whole file into this object's buffer; the view stays valid until the next Read. Opens (again)
  // on demand, so a file that appears later is picked up. On error the descriptor is closed and reopened
  // next time.
  Result<std::string_view> Read();
  // The same into a caller's buffer (grown as needed and reused), so many small files can share one.
  Result<std::string_view> Read(std::string& buffer);
  // errno of the last failed Read (0 after success).
  int last_errno() const { return last_errno_; }
  const std::filesystem::path& path() const { return path_; }
  void Close();

 private:
  std::filesystem::path path_;
  Generated generated_ = Generated::kInRecords;
  int fd_ = -1;
  int last_errno_ = 0;
  std::string buffer_;
};

// How many descriptors KeptOpenFile keeps open at most, process-wide: three quarters of the soft
// RLIMIT_NOFILE at first use, less a reserve.
size_t KeptDescriptorBudget();
// Descriptors KeptOpenFile holds open now.
size_t KeptDescriptorCount();

// Raises the soft RLIMIT_NOFILE to the hard limit (at most 65536) for this process and returns the
// previous soft limit, so a child started later can be given it back.
unsigned long RaiseOpenFileLimit();

// Reads a whole (small) file at once; for files read at start-up only.
Result<std::string> ReadFileToString(const std::filesystem::path& path);

// Where start-up readers hand what they had to skip (a message naming the file); may be null.
using ProblemReporter = std::function<void(const std::string&)>;

// A file read at start-up that may legitimately be absent (a cgroup v1 file on a v2 host, a topology file
// an old kernel lacks): nullopt when it does not exist. A file that exists but cannot be read (not a
// regular file, no permission, too large) is nullopt too, after `report` was told why.
std::optional<std::string> ReadOptionalFile(const std::filesystem::path& path, const ProblemReporter& report);

// "PATH: message", for an error about the content of a file: names the file that was actually read (under
// --root too), not the kernel's usual path.
std::string FileError(const std::filesystem::path& path, std::string_view message);

// ReadOptionalFile, then `parse` (a parser returning Result<T>): the value, or nullopt when the file is
// absent, unreadable or malformed (the last two reported, naming the file).
template <typename Parse>
auto ReadOptionalParsed(const std::filesystem::path& path, Parse&& parse, const ProblemReporter& report)
    -> std::optional<std::remove_cvref_t<decltype(*parse(std::string_view()))>> {
  const auto text = ReadOptionalFile(path, report);
  if (!text) return std::nullopt;
  auto parsed = parse(std::string_view(*text));
  if (!parsed) {
    if (report) report(FileError(path, parsed.error()));
    return std::nullopt;
  }
  return std::move(*parsed);
}

// Names in a directory, without "." and "..". Missing or unreadable directories are an error.
Result<std::vector<std::string>> ListDirectory(const std::filesystem::path& path);

// True for ENOENT and ESRCH: the file or the process behind it is gone, not broken.
bool IsGoneErrno(int error_number);

}  // namespace runmon
