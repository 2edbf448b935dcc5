// Disk I/O from /proc/diskstats for the devices behind the configured paths (see disk_devices.hpp):
// disk.{dev}.in / disk.{dev}.out and their sums disk.in / disk.out in MiB since the first sample, and
// disk.readMBPerSec / disk.writeMBPerSec over the last interval. The devices are chosen once, at the first
// sample. Like the network totals, sums are built from positive per-device deltas, so a device that
// vanishes keeps what it contributed. Without any device to read (no path leads to one and there is no
// physical disk) the keys are left out and the collector says why.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "collectors/linux/disk/disk_metrics.hpp"
#include "collectors/linux/disk_devices.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kSectorBytes = 512;

// In floating point: a sector count times 512 can overflow 64 bits.
double SectorsToMiB(uint64_t sectors) {
  return static_cast<double>(sectors) * kSectorBytes / kMiB;
}

bool PathUnderMount(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path == mount_point || (path.starts_with(mount_point) && path[mount_point.size()] == '/');
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class DiskIoCollector final : public Collector {
 public:
  explicit DiskIoCollector(const CollectorContext& ctx)
      : paths_(ctx.paths),
        disk_paths_(ctx.settings.disk_paths),
        diskstats_file_(ctx.paths.Proc("diskstats"), Generated::kShortRecords),
        clocks_(ctx.clocks) {}

  std::string_view Name() const override { return "disk_io"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    auto text = diskstats_file_.Read();
    if (!text) return Error{text.error()};
    auto disks = ParseDiskstats(*text);
    if (!disks) return Error{FileError(diskstats_file_.path(), disks.error())};
    if (!selected_) SelectDevices(*disks);
    const double now = clocks_.monotonic_seconds();
    uint64_t read_delta = 0, write_delta = 0;
    ++reading_;
    for (const auto& disk : *disks) {
      auto it = devices_.find(disk.name);
      if (it == devices_.end()) continue;
      Device& device = it->second;
      // A name listed twice in one reading (never by a kernel) counts once: its first line.
      if (device.last_reading == reading_) continue;
      device.last_reading = reading_;
      if (device.seen) {
        const uint64_t r = CounterIncrease(disk.sectors_read, device.last_read);
        const uint64_t w = CounterIncrease(disk.sectors_written, device.last_written);
        device.read_sectors += r;
        device.written_sectors += w;
        read_delta += r;
        write_delta += w;
      }
      device.seen = true;
      device.last_read = disk.sectors_read;
      device.last_written = disk.sectors_written;
    }
    // Sums over the devices seen; none seen is no measurement (not 0 MiB).
    double read_total = 0, write_total = 0;
    bool any_seen = false;
    for (const auto& [name, device] : devices_) {
      if (!device.seen) continue;
      any_seen = true;
      read_total += SectorsToMiB(device.read_sectors);
      write_total += SectorsToMiB(device.written_sectors);
      out.Add(device.in_key, SectorsToMiB(device.read_sectors));
      out.Add(device.out_key, SectorsToMiB(device.written_sectors));
    }
    if (!any_seen) {
      std::string why =
          FileError(diskstats_file_.path(), "no device behind the disk paths and no physical disk");
      if (!selection_problems_.empty()) why += "; " + std::exchange(selection_problems_, {});
      return Error{why};
    }
    out.Add(disk_metrics::kRead, read_total);
    out.Add(disk_metrics::kWritten, write_total);
    if (have_previous_ && now > last_time_) {
      out.Add(disk_metrics::kReadRate, SectorsToMiB(read_delta) / (now - last_time_));
      out.Add(disk_metrics::kWriteRate, SectorsToMiB(write_delta) / (now - last_time_));
    }
    have_previous_ = true;
    last_time_ = now;
    if (!selection_problems_.empty()) return Error{std::exchange(selection_problems_, {})};
    return OkStatus();
  }

 private:
  struct Device {
    bool seen = false;
    uint64_t last_reading = 0;  // the reading_ that last counted this device
    uint64_t last_read = 0, last_written = 0;
    uint64_t read_sectors = 0, written_sectors = 0;
    std::string in_key, out_key;  // built once, not on every tick
  };

  void SelectDevices(const std::vector<DiskStat>& disks) {
    selected_ = true;
    // What cannot be read is reported with the first sample; the devices are chosen from what could.
    const ProblemReporter report = [this](const std::string& problem) {
      selection_problems_ += (selection_problems_.empty() ? "" : "; ") + problem;
    };
    std::vector<Mount> mounts = ReadOptionalParsed(paths_.Proc("self/mountinfo"), ParseMountinfo, report)
                                    .value_or(std::vector<Mount>{});
    const bool have_sys_block = std::filesystem::is_directory(paths_.Sys("block"));
    std::set<std::string> names;
    for (const auto& d : disks) names.insert(d.name);
    auto is_physical = [&](const std::string& name) {
      if (have_sys_block) return std::filesystem::exists(paths_.Sys("block/" + name + "/device"));
      for (const char* virtual_prefix : {"loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd"}) {
        if (name.starts_with(virtual_prefix)) return false;
      }
      // Without sysfs a partition is recognised by a listed disk whose name is a prefix of it.
      return std::none_of(names.begin(), names.end(),
                          [&](const std::string& other) { return other != name && name.starts_with(other); });
    };
    // Filesystems without a device number name their device by source; a device-mapper source
    // (/dev/mapper/NAME: LVM, LUKS) is diskstats' dm-N, whose sys/block/dm-N/dm/name is NAME.
    for (auto& mount : mounts) {
      if (!mount.source.starts_with("/dev/mapper/")) continue;
      const std::string mapper_name = mount.source.substr(std::string_view("/dev/mapper/").size());
      for (const auto& name : names) {
        if (!name.starts_with("dm-")) continue;
        auto text = ReadOptionalFile(paths_.Sys("block/" + name + "/dm/name"), report);
        if (text && text::Trim(*text) == mapper_name) mount.source = "/dev/" + name;
      }
    }
    for (const auto& name : SelectDiskDevices(disk_paths_, mounts, disks, is_physical)) {
      Device device;
      device.in_key = MetricKey(disk_metrics::kDeviceRead, name);
      device.out_key = MetricKey(disk_metrics::kDeviceWritten, name);
      devices_[name] = std::move(device);
    }
  }

  HostPaths paths_;
  std::vector<std::string> disk_paths_;
  KeptOpenFile diskstats_file_;
  Clocks clocks_;
  bool selected_ = false;
  std::string selection_problems_;
  uint64_t reading_ = 0;  // diskstats readings so far
  std::map<std::string, Device> devices_;
  bool have_previous_ = false;
  double last_time_ = 0;
};

}  // namespace

std::vector<std::string> SelectDiskDevices(
    const std::vector<std::string>& disk_paths, const std::vector<Mount>& mounts,
    const std::vector<DiskStat>& disks,
    const std::function<bool(const std::string&)>& is_physical_whole_disk) {
  std::set<std::string> chosen;
  for (const auto& raw : disk_paths) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(raw, ec);
    if (ec) continue;
    std::string path = absolute.lexically_normal().string();
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    const Mount* best = nullptr;
    for (const auto& mount : mounts) {
      if (!PathUnderMount(path, mount.mount_point)) continue;
      // Longest mount point wins; at equal length the later (upper) mount of a stack.
      if (best == nullptr || mount.mount_point.size() >= best->mount_point.size()) best = &mount;
    }
    if (best == nullptr) continue;
    // The device with the mount's number; should a broken table list that number twice, the one the
    // mount's source names, else the first.
    const std::string source_name = best->source.starts_with("/dev/") ? BaseName(best->source) : "";
    const DiskStat* found = nullptr;
    if (best->major != 0) {
      for (const auto& d : disks) {
        if (d.major != best->major || d.minor != best->minor) continue;
        if (found == nullptr || d.name == source_name) found = &d;
        if (d.name == source_name) break;
      }
    }
    if (found == nullptr && !source_name.empty()) {
      for (const auto& d : disks) {
        if (d.name == source_name) {
          found = &d;
          break;
        }
      }
    }
    if (found != nullptr) chosen.insert(found->name);
  }
  if (chosen.empty()) {
    for (const auto& d : disks) {
      if (is_physical_whole_disk(d.name)) chosen.insert(d.name);
    }
  }
  return {chosen.begin(), chosen.end()};
}

std::unique_ptr<Collector> MakeDiskIoCollector(const CollectorContext& ctx) {
  return std::make_unique<DiskIoCollector>(ctx);
}

}  // namespace runmon
