// Appends records to a run log. The file is created exclusively (an existing log is never overwritten)
// and starts with the file header. Each Append puts whole records in the file with one write: if the
// write fails part way (disk full, file size limit, I/O error), what it wrote is cut off again, so the
// file always ends at a record boundary and everything written before stays readable. Durability is
// the caller's choice: Sync() makes what was appended survive a machine crash. The writer holds an
// exclusive flock on the file while it is open, so readers following the log know when it is gone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon::runlog {

class LogWriter {
 public:
  static Result<LogWriter> Create(const std::filesystem::path& path);
  LogWriter(LogWriter&& other) noexcept;
  LogWriter& operator=(LogWriter&& other) noexcept;
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  ~LogWriter();

  // Appends serialized records (each non-empty) with one write; all of them or none.
  Status Append(std::span<const std::string> payloads);
  Status Append(std::string_view payload);
  // fdatasync: what was appended survives a crash of the machine.
  Status Sync();
  // Size of the file: the offset where the next record starts (before any block trailer).
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  LogWriter(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  Status WriteFramed(uint64_t end);

  int fd_ = -1;
  std::filesystem::path path_;
  uint64_t size_ = 0;
  std::string framed_;  // reused between appends
};

}  // namespace runmon::runlog
