// Filesystem usage of each configured path (disk.{path}.usagePercent, disk.{path}.usageGB), with df's
// semantics: used = (blocks - free) and percent = used / (used + available to users), so blocks
// reserved for root are left out. statvfs on a dead network mount can block, which is why this collector
// runs in a lane of its own. A path that cannot be read is left out and named in the error; the others
// are still reported.
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "collectors/linux/disk/disk_metrics.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

class DiskUsageCollector final : public Collector {
 public:
  explicit DiskUsageCollector(const CollectorContext& ctx) : stat_(ctx.stat_filesystem) {
    for (const auto& path : ctx.settings.disk_paths) {
      paths_.push_back(
          {path, MetricKey(disk_metrics::kUsagePercent, path), MetricKey(disk_metrics::kUsageGB, path)});
    }
  }

  std::string_view Name() const override { return "disk_usage"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    std::string errors;
    for (const auto& [path, percent_key, used_key] : paths_) {
      auto usage = stat_(path);
      if (!usage) {
        errors += (errors.empty() ? "" : "; ") + usage.error();
        continue;
      }
      const double used = static_cast<double>(usage->used_bytes);
      const double denominator = used + static_cast<double>(usage->available_bytes);
      if (denominator > 0) out.Add(percent_key, used / denominator * 100.0);
      out.Add(used_key, used / kGiB);
    }
    if (!errors.empty()) return Error{errors};
    return OkStatus();
  }

 private:
  struct Path {
    std::string path;
    std::string percent_key;  // keys built once, not on every tick
    std::string used_key;
  };
  std::vector<Path> paths_;
  FilesystemStatFunction stat_;
};

}  // namespace

Result<FilesystemUsage> StatFilesystem(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return Error{fmt::format("{}: {}", path, std::strerror(errno))};
  const uint64_t unit = fs.f_frsize != 0 ? fs.f_frsize : fs.f_bsize;
  FilesystemUsage usage;
  usage.total_bytes = static_cast<uint64_t>(fs.f_blocks) * unit;
  usage.used_bytes = static_cast<uint64_t>(fs.f_blocks - std::min(fs.f_bfree, fs.f_blocks)) * unit;
  usage.available_bytes = static_cast<uint64_t>(fs.f_bavail) * unit;
  return usage;
}

std::unique_ptr<Collector> MakeDiskUsageCollector(const CollectorContext& ctx) {
  return std::make_unique<DiskUsageCollector>(ctx);
}

}  // namespace runmon
