// files/output.log (see output_log_file.hpp).
#include "console/output_log_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace runmon::console {

Result<std::unique_ptr<OutputLogFile>> OutputLogFile::Create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("{}: {}", path.string(), std::strerror(errno))};
  return std::unique_ptr<OutputLogFile>(new OutputLogFile(fd));
}

OutputLogFile::~OutputLogFile() {
  ::close(fd_);
}

Status OutputLogFile::WriteAt(const std::string& text, uint64_t offset) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken_ = true;
      return Error{fmt::format("output.log: {}", n < 0 ? std::strerror(errno) : "nothing written")};
    }
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

Status OutputLogFile::Update(TerminalLines& lines) {
  std::string& finished = text_;
  finished.clear();
  for (const ConsoleLine& line : lines.TakeFinished()) {
    finished += line.text;
    finished += '\n';
  }
  if (broken_) return OkStatus();  // reported when it broke
  if (finished.empty() && lines.version() == written_version_) return OkStatus();
  written_version_ = lines.version();
  if (!finished.empty()) {
    if (auto status = WriteAt(finished, finished_bytes_); !status) return status;
    finished_bytes_ += finished.size();
  }
  std::string& open = text_;
  open.clear();
  for (const ConsoleLine& line : lines.OpenLines()) {
    open += line.text;
    open += '\n';
  }
  if (!open.empty()) {
    if (auto status = WriteAt(open, finished_bytes_); !status) return status;
  }
  if (::ftruncate(fd_, static_cast<off_t>(finished_bytes_ + open.size())) != 0) {
    broken_ = true;
    return Error{fmt::format("output.log: {}", std::strerror(errno))};
  }
  return OkStatus();
}

Status OutputLogFile::Close(TerminalLines& lines) {
  lines.FinishAll();
  return Update(lines);
}

}  // namespace runmon::console
