// Where leet's config file is, and reading and writing it (see leet_config.hpp). Reading opens without
// blocking (a FIFO at the path must not hang leet) and checks the size on the open descriptor before
// reading, then reads at most a byte past the limit (the file may grow meanwhile). Writing goes through a
// temporary file beside the target, so a crash or a full disk leaves the old file whole; the directory is
// synced after the rename so the new name survives a power loss too.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "tui/leet_config.hpp"

namespace runmon::tui {
namespace fs = std::filesystem;
namespace {

bool Given(const std::optional<std::string>& value) {
  return value && !value->empty();
}

std::string Reason(int error) {
  return std::strerror(error);
}

// Closes a descriptor at the end of a scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, reporting close's own failure (a delayed write error on some file systems).
  int Close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

// Makes `directory` and its missing parents with mode 0700 (existing ones are left as they are).
Status MakeDirectories(const fs::path& directory) {
  if (directory.empty()) return OkStatus();
  std::error_code error;
  if (fs::is_directory(directory, error)) return OkStatus();
  if (auto parent = MakeDirectories(directory.parent_path()); !parent) return parent;
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error{fmt::format("{}: cannot make the directory: {}", directory.string(), Reason(errno))};
  }
  return OkStatus();
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return Error{Reason(errno)};
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return OkStatus();
}

}  // namespace

Result<fs::path> LeetConfigPath(const LeetConfigLocation& location) {
  if (Given(location.flag)) return fs::path(*location.flag);
  if (Given(location.runmon_config_dir)) return fs::path(*location.runmon_config_dir) / "leet.json";
  if (Given(location.xdg_config_home) && fs::path(*location.xdg_config_home).is_absolute()) {
    return fs::path(*location.xdg_config_home) / "runmon" / "leet.json";
  }
  if (Given(location.home)) return fs::path(*location.home) / ".config" / "runmon" / "leet.json";
  return Error{"no place for leet's config file: HOME is not set (set RUNMON_CONFIG_DIR or pass --config)"};
}

Result<LoadedLeetConfig> LoadLeetConfigFile(const fs::path& path) {
  LoadedLeetConfig loaded;
  Descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    if (errno == ENOENT) return loaded;
    return Error{fmt::format("{}: {}", path.string(), Reason(errno))};
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return Error{fmt::format("{}: {}", path.string(), Reason(errno))};
  if (!S_ISREG(info.st_mode)) return Error{fmt::format("{}: not a regular file", path.string())};
  if (static_cast<uint64_t>(info.st_size) > kMaxLeetConfigBytes) {
    return Error{fmt::format("{}: larger than 1 MiB ({} bytes)", path.string(), info.st_size)};
  }
  std::string text(kMaxLeetConfigBytes + 1, '\0');
  size_t size = 0;
  while (size < text.size()) {
    const ssize_t got = ::read(fd.get(), text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{fmt::format("{}: {}", path.string(), Reason(errno))};
    if (got == 0) break;
    size += static_cast<size_t>(got);
  }
  text.resize(size);
  auto parsed = ParseLeetConfig(text);
  if (!parsed) return Error{fmt::format("{}: {}", path.string(), parsed.error())};
  loaded.parsed = std::move(*parsed);
  loaded.exists = true;
  return loaded;
}

Status SaveLeetConfigFile(const fs::path& path, const LeetConfig& config) {
  std::error_code error;
  fs::path target = path;
  if (fs::is_symlink(path, error)) {
    target = fs::weakly_canonical(path, error);
    if (error) return Error{fmt::format("{}: {}", path.string(), error.message())};
  }
  const fs::path directory = target.parent_path();
  if (auto made = MakeDirectories(directory); !made) return made;
  std::string temporary = (directory / ("." + target.filename().string() + ".XXXXXX")).string();
  Descriptor fd(::mkostemp(temporary.data(), O_CLOEXEC));
  if (fd.get() < 0) {
    return Error{fmt::format("{}: cannot make a temporary file: {}", directory.string(), Reason(errno))};
  }
  const auto fail = [&](std::string_view what, int number) {
    ::unlink(temporary.c_str());
    return Error{fmt::format("{}: {}: {}", path.string(), what, Reason(number))};
  };
  if (::fchmod(fd.get(), 0600) != 0) return fail("cannot set its mode", errno);
  if (auto written = WriteAll(fd.get(), SerializeLeetConfig(config)); !written) {
    ::unlink(temporary.c_str());
    return Error{fmt::format("{}: cannot write: {}", path.string(), written.error())};
  }
  if (::fsync(fd.get()) != 0) return fail("cannot sync", errno);
  if (fd.Close() != 0) return fail("cannot write", errno);
  if (::rename(temporary.c_str(), target.c_str()) != 0) return fail("cannot replace it", errno);
  Descriptor dir(::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());  // best effort: the file itself is whole either way
  return OkStatus();
}

}  // namespace runmon::tui
