// Which block devices stand behind the configured disk paths (metrics.md A.2.8): the mount with the
// longest mount point that is a path-component prefix of the path (not W&B's raw string prefix), then
// the /proc/diskstats entry with that mount's major:minor. Filesystems without a block device number
// (btrfs subvolumes, zfs) are matched by their source's device name, as is a number that a broken table
// lists for several devices. When no path leads to a device (an overlay root in a container), every
// physical whole disk is used instead.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectors/linux/parse/procfs_parse.hpp"

namespace runmon {

// `is_physical_whole_disk` says whether a diskstats name is a real disk rather than a partition or a
// virtual device; it is consulted only for the fallback.
std::vector<std::string> SelectDiskDevices(
    const std::vector<std::string>& disk_paths, const std::vector<Mount>& mounts,
    const std::vector<DiskStat>& disks,
    const std::function<bool(const std::string&)>& is_physical_whole_disk);

}  // namespace runmon
