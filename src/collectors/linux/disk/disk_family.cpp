// The disk family's factory: I/O of the devices behind the disk paths, then the paths' usage. statvfs can
// block (a dead network mount), so usage goes last in the lane (FamilyStart::may_block): disk_io is a
// family row of its own for that reason.
#include <string_view>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon::collector_families {
namespace {

constexpr std::string_view kSettings[] = {"x_stats_disk_paths"};

FamilyStart StartIo(const CollectorContext& ctx) {
  return FamilyStart::Of(MakeDiskIoCollector(ctx));
}

FamilyStart StartUsage(const CollectorContext& ctx) {
  FamilyStart started;
  started.collectors.push_back(MakeDiskUsageCollector(ctx));
  started.may_block = true;
  return started;
}

}  // namespace

const CollectorFamily& disk_io() {
  static constexpr CollectorFamily kFamily{
      .name = "disk_io", .lane = "host", .settings = kSettings, .start = StartIo};
  return kFamily;
}

const CollectorFamily& disk_usage() {
  static constexpr CollectorFamily kFamily{
      .name = "disk_usage", .lane = "host", .settings = kSettings, .start = StartUsage};
  return kFamily;
}

}  // namespace runmon::collector_families
