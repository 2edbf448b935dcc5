// Run directory naming, creation and discovery (see run_directory.hpp).
#include "runlog/run_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <random>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace runmon::runlog {
namespace fs = std::filesystem;
namespace {

std::string LocalTimeStamp(double seconds) {
  const auto whole = static_cast<time_t>(seconds);
  tm local{};
  localtime_r(&whole, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d_%H%M%S", &local);
  return text;
}

}  // namespace

std::string GenerateRunId() {
  static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device entropy;
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string id;
  for (int i = 0; i < 8; ++i) id += kAlphabet[pick(entropy)];
  return id;
}

Status ValidateRunId(std::string_view id) {
  if (id.empty()) return Error{"a run id must not be empty"};
  if (id.size() > 128) return Error{"a run id must be at most 128 bytes"};
  if (!IsValidUtf8(id)) return Error{"a run id must be valid UTF-8"};
  if (id == "." || id == "..") return Error{fmt::format("'{}' is not a run id", id)};
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  if (is_space(id.front()) || is_space(id.back()))
    return Error{"a run id must not start or end with whitespace"};
  for (const char c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return Error{"a run id must not contain control characters"};
    if (std::string_view(":;,#?/'\\").find(c) != std::string_view::npos) {
      return Error{fmt::format("a run id must not contain any of : ; , # ? / ' \\ (found '{}')", c)};
    }
  }
  return OkStatus();
}

std::string RunDirectoryName(double start_time, std::string_view id) {
  return fmt::format("run-{}-{}", LocalTimeStamp(start_time), id);
}

Result<RunPaths> CreateRunDirectory(const fs::path& wandb_dir, double start_time, std::string_view id) {
  std::error_code error;
  fs::create_directories(wandb_dir, error);
  if (error) return Error{fmt::format("cannot create {}: {}", wandb_dir.string(), error.message())};
  RunPaths paths;
  paths.directory = wandb_dir / RunDirectoryName(start_time, id);
  if (::mkdir(paths.directory.c_str(), 0755) != 0) {
    return Error{fmt::format("cannot create {}: {}", paths.directory.string(), std::strerror(errno))};
  }
  paths.files = paths.directory / "files";
  if (::mkdir(paths.files.c_str(), 0755) != 0) {
    return Error{fmt::format("cannot create {}: {}", paths.files.string(), std::strerror(errno))};
  }
  paths.log = paths.directory / fmt::format("run-{}.wandb", id);
  return paths;
}

Status UpdateLatestRunLink(const fs::path& wandb_dir, const fs::path& run_directory) {
  const fs::path link = wandb_dir / "latest-run";
  const fs::path temporary = wandb_dir / fmt::format(".latest-run.{}", ::getpid());
  ::unlink(temporary.c_str());
  // Relative, so the wandb directory can be moved or mounted elsewhere.
  if (::symlink(run_directory.filename().c_str(), temporary.c_str()) != 0) {
    return Error{fmt::format("cannot create {}: {}", temporary.string(), std::strerror(errno))};
  }
  if (::rename(temporary.c_str(), link.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Error{fmt::format("cannot replace {}: {}", link.string(), std::strerror(error))};
  }
  return OkStatus();
}

Status WriteFileAtomically(const fs::path& path, std::string_view content) {
  const fs::path temporary = path.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", temporary.string(), std::strerror(errno))};
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(temporary.c_str());
      return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(error))};
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Error{fmt::format("cannot write {}: {}", path.string(), std::strerror(error))};
  }
  return OkStatus();
}

namespace {

// The run-*.wandb files directly in `directory` (regular files only; nothing below it is searched).
std::vector<fs::path> LogsIn(const fs::path& directory, std::error_code& error) {
  std::vector<fs::path> logs;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    std::error_code type_error;
    if (name.starts_with("run-") && name.ends_with(".wandb") && entry.is_regular_file(type_error)) {
      logs.push_back(entry.path());
    }
  }
  return logs;
}

}  // namespace

Result<fs::path> FindRunLog(const fs::path& path) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status)) return Error{fmt::format("{}: no such file or directory", path.string())};
  if (!fs::is_directory(status)) return path;

  const auto logs = LogsIn(path, error);
  if (error) return Error{fmt::format("{}: {}", path.string(), error.message())};
  if (logs.size() == 1) return logs.front();
  if (logs.size() > 1) {
    return Error{fmt::format("{} holds {} run logs; name one of them", path.string(), logs.size())};
  }
  // A directory of runs: the run latest-run points to, else the newest by the time stamp in the directory
  // name. Only one level down, and run directories that are symbolic links are not followed (latest-run
  // is the one link), so a link loop cannot send the search in circles.
  std::vector<fs::path> candidates;
  if (fs::is_directory(path / "latest-run", error)) candidates.push_back(path / "latest-run");
  std::vector<std::string> runs;
  for (const auto& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    std::error_code type_error;
    if ((name.starts_with("run-") || name.starts_with("offline-run-")) && !entry.is_symlink(type_error) &&
        entry.is_directory(type_error)) {
      runs.push_back(name);
    }
  }
  const auto stamp = [](const std::string& name) {
    return std::string_view(name).substr(name.starts_with("offline-") ? 12 : 4);
  };
  std::sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) { return stamp(a) > stamp(b); });
  for (const auto& run : runs) candidates.push_back(path / run);
  for (const auto& candidate : candidates) {
    std::error_code candidate_error;
    const auto found = LogsIn(candidate, candidate_error);
    if (found.size() == 1) return found.front();
  }
  return Error{fmt::format("{}: no run log here (no run-*.wandb file and no run directory holding one)",
                           path.string())};
}

}  // namespace runmon::runlog
