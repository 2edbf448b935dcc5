// Test helpers for collectors on fixture trees: a FixtureTree is a temp directory laid out like a host's
// proc/sys/etc (HostPaths::Under(root)), filled from a fixture (tests/fixtures/hosts/NAME, whose optional
// t1/ is a second reading) or built inline like node_exporter's buildFakeSysfs.
//
// Collectors keep files open and re-read them with pread from offset 0, and reopen a path only after a
// failed read. So a second reading must change files *in place*: Write truncates and rewrites the same
// inode (never rename), and a file that disappears (a process that exits) is first emptied, then unlinked,
// so a descriptor still open on it reads nothing, as reads of a gone process's /proc files fail.
// Symbolic links (sysfs's, /proc/PID/fd entries) are copied and mirrored as links, never followed.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "core/sample.hpp"
#include "host/host_paths.hpp"

namespace runmon::test {

namespace fs = std::filesystem;

inline fs::path FixturesDir() {
  return fs::path(RUNMON_FIXTURES_DIR);
}
inline fs::path HostFixture(const std::string& name) {
  return FixturesDir() / "hosts" / name;
}
inline fs::path SharedDir() {
  return fs::path(RUNMON_SHARED_DIR);
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `text` into `path` in place: an existing file keeps its inode (open descriptors see the new text).
inline void WriteInPlace(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("short write to " + path.string());
}

class FixtureTree {
 public:
  // An empty tree.
  FixtureTree() {
    std::string pattern = (fs::temp_directory_path() / "runmon-fixture-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  // A copy of a fixture's first reading: everything in `fixture` except its second reading t1/.
  explicit FixtureTree(const fs::path& fixture) : FixtureTree() {
    if (!fs::is_directory(fixture)) throw std::runtime_error("no fixture " + fixture.string());
    for (const auto& entry : fs::directory_iterator(fixture)) {
      if (entry.path().filename() == "t1") continue;
      fs::copy(entry.path(), root_ / entry.path().filename(),
               fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
  }
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;
  ~FixtureTree() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  const fs::path& root() const { return root_; }
  HostPaths paths() const { return HostPaths::Under(root_); }
  fs::path Path(const std::string& relative) const { return root_ / relative; }
  bool Exists(const std::string& relative) const { return fs::exists(Path(relative)); }
  std::string Read(const std::string& relative) const { return ReadFile(Path(relative)); }

  // Creates or rewrites (in place) a file, with its parent directories.
  FixtureTree& Write(const std::string& relative, std::string_view text) {
    WriteInPlace(Path(relative), text);
    return *this;
  }
  FixtureTree& Mkdir(const std::string& relative) {
    fs::create_directories(Path(relative));
    return *this;
  }
  // Removes a file or a directory; files are emptied first (see the header comment).
  FixtureTree& Remove(const std::string& relative) {
    EmptyAndRemove(Path(relative));
    return *this;
  }
  // Replaces every `from` in a file by `to` (in place).
  FixtureTree& Substitute(const std::string& relative, std::string_view from, std::string_view to) {
    std::string text = Read(relative);
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return Write(relative, text);
  }

  // Makes the tree equal to `reading` (a directory laid out like the tree, e.g. a fixture's t1/): files
  // in both are rewritten in place, new ones created, and what `reading` lacks is emptied and removed.
  void MirrorFrom(const fs::path& reading) {
    if (!fs::is_directory(reading)) throw std::runtime_error("no reading " + reading.string());
    std::set<fs::path> wanted;
    for (const auto& entry : fs::recursive_directory_iterator(reading)) {
      const fs::path relative = entry.path().lexically_relative(reading);
      wanted.insert(relative);
      const fs::path target = root_ / relative;
      if (entry.is_symlink()) {  // sysfs links and /proc/PID/fd entries: the link itself, never its target
        const fs::path link = fs::read_symlink(entry.path());
        if (fs::is_symlink(target) && fs::read_symlink(target) == link) continue;
        if (fs::exists(fs::symlink_status(target))) EmptyAndRemove(target);
        fs::create_directories(target.parent_path());
        fs::copy_symlink(entry.path(), target);
      } else if (entry.is_directory()) {
        if (fs::exists(target) && !fs::is_directory(target)) EmptyAndRemove(target);
        fs::create_directories(target);
      } else {
        if (fs::is_directory(target)) EmptyAndRemove(target);
        WriteInPlace(target, ReadFile(entry.path()));
      }
    }
    std::vector<fs::path> extra;
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      if (wanted.count(entry.path().lexically_relative(root_)) == 0) extra.push_back(entry.path());
    }
    for (const auto& path : extra) {
      if (fs::exists(fs::symlink_status(path))) EmptyAndRemove(path);  // a parent removed earlier took it along
    }
  }

 private:
  static void EmptyAndRemove(const fs::path& path) {
    if (fs::is_symlink(path)) {  // the link goes, whatever it points to stays as it is
      fs::remove(path);
      return;
    }
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (fs::is_regular_file(entry.symlink_status())) WriteInPlace(entry.path(), "");
      }
    } else if (fs::is_regular_file(path)) {
      WriteInPlace(path, "");
    }
    fs::remove_all(path);
  }

  fs::path root_;
};

// Clocks a test sets by hand: seconds since boot and monotonic seconds, shared with the collectors.
class FakeClocks {
 public:
  FakeClocks(double boot_seconds, double monotonic_seconds)
      : boot_(std::make_shared<double>(boot_seconds)), mono_(std::make_shared<double>(monotonic_seconds)) {}
  Clocks clocks() const {
    return Clocks{[boot = boot_] { return *boot; }, [mono = mono_] { return *mono; }};
  }
  void Set(double boot_seconds, double monotonic_seconds) {
    *boot_ = boot_seconds;
    *mono_ = monotonic_seconds;
  }
  // Moves both clocks forward.
  void Advance(double seconds) {
    *boot_ += seconds;
    *mono_ += seconds;
  }

 private:
  std::shared_ptr<double> boot_, mono_;
};

// A context for collectors on a fixture tree: facts detected from the tree, with USER_HZ = 100 and 4 KiB
// pages (what fixture files assume, whatever the build machine's), and no statvfs unless a test sets one.
// `warn` gets what detection and the metadata probe had to skip.
inline CollectorContext FixtureContext(const HostPaths& paths, std::optional<long> pid,
                                       const FakeClocks& clocks, Settings settings = Settings{},
                                       const ProblemReporter& warn = {}) {
  CollectorContext ctx;
  ctx.paths = paths;
  ctx.settings = settings;
  ctx.pid = pid;
  ctx.warn = warn;
  ctx.facts = DetectHostFacts(paths, settings, pid, warn);
  ctx.facts.clock_ticks_per_second = 100;
  ctx.facts.page_size_bytes = 4096;
  ctx.clocks = clocks.clocks();
  ctx.stat_filesystem = [](const std::string& path) -> Result<FilesystemUsage> {
    return Error{"no statvfs in fixture tests: " + path};
  };
  return ctx;
}

// One Collect with a tick of the given index; the batch and the status.
struct Collected {
  Status status = OkStatus();
  MetricBatch batch;

  bool Has(std::string_view key) const { return batch.Find(key) != nullptr; }
  // The value of `key`; fails the test (throws) when absent.
  double operator[](std::string_view key) const {
    const Metric* metric = batch.Find(key);
    if (metric == nullptr) throw std::runtime_error("no metric " + std::string(key));
    return metric->value;
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const auto& metric : batch.items()) keys.push_back(metric.key);
    return keys;
  }
};

inline Collected CollectTick(Collector& collector, uint64_t index, bool final = false) {
  Tick tick;
  tick.monotonic = std::chrono::steady_clock::now();
  tick.index = index;
  tick.final = final;
  Collected result;
  result.status = collector.Collect(tick, result.batch);
  return result;
}

// Lines of a /proc/PID/stat file with the fields the collectors read (pid, comm, state, ppid, utime, stime,
// cutime, cstime, num_threads, starttime) and plausible values elsewhere.
inline std::string PidStatLine(long pid, std::string_view comm, char state, long ppid, uint64_t utime,
                               uint64_t stime, long threads, uint64_t start_ticks, uint64_t cutime = 0,
                               uint64_t cstime = 0) {
  std::ostringstream line;
  line << pid << " (" << comm << ") " << state << ' ' << ppid << ' ' << pid << ' ' << pid
       << " 0 -1 4194304 100 0 0 0 " << utime << ' ' << stime << ' ' << cutime << ' ' << cstime << " 20 0 "
       << threads << " 0 " << start_ticks << " 12582912 100 "
       << "18446744073709551615";
  for (int i = 0; i < 27; ++i) line << " 0";
  line << '\n';
  return line.str();
}

}  // namespace runmon::test
