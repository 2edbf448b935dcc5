// Unit tests of SelectDiskDevices (collectors/linux/disk_devices.hpp): which /proc/diskstats devices stand
// behind the configured disk paths. Covers the longest path-component-prefix mount (/home must not match
// /homework), device-mapper and NVMe roots, btrfs (major 0) matched through its /dev source, bind mounts,
// stacked mounts, relative paths, and the fallback to physical whole disks (an overlay root in a container).
#include "collectors/linux/disk_devices.hpp"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace runmon {
namespace {

using Names = std::vector<std::string>;

Mount MakeMount(unsigned major, unsigned minor, std::string mount_point, std::string fs_type,
                std::string source, std::string root = "/") {
  Mount m;
  m.major = major;
  m.minor = minor;
  m.root = std::move(root);
  m.mount_point = std::move(mount_point);
  m.fs_type = std::move(fs_type);
  m.source = std::move(source);
  m.super_options = "rw";
  return m;
}

DiskStat Disk(unsigned major, unsigned minor, std::string name) {
  return DiskStat{major, minor, std::move(name), 100, 200};
}

// A predicate that knows the whole disks by name and counts its calls.
struct WholeDisks {
  std::set<std::string> names;
  int* calls;
  bool operator()(const std::string& name) const {
    ++*calls;
    return names.count(name) > 0;
  }
};

class SelectDiskDevicesTest : public testing::Test {
 protected:
  Names Select(const Names& paths, const std::vector<Mount>& mounts, const std::vector<DiskStat>& disks,
               std::set<std::string> whole = {}) {
    return SelectDiskDevices(paths, mounts, disks, WholeDisks{std::move(whole), &predicate_calls_});
  }
  int predicate_calls_ = 0;
};

// A typical workstation: root on sda1, /home on sdb1, /homework on sdc1.
const std::vector<Mount> kWorkstationMounts = {
    MakeMount(8, 1, "/", "ext4", "/dev/sda1"),
    MakeMount(0, 21, "/proc", "proc", "proc"),
    MakeMount(8, 17, "/home", "ext4", "/dev/sdb1"),
    MakeMount(8, 33, "/homework", "ext4", "/dev/sdc1"),
    MakeMount(0, 40, "/home/user/.cache", "tmpfs", "tmpfs"),
};
const std::vector<DiskStat> kWorkstationDisks = {
    Disk(8, 0, "sda"),   Disk(8, 1, "sda1"), Disk(8, 16, "sdb"),
    Disk(8, 17, "sdb1"), Disk(8, 32, "sdc"), Disk(8, 33, "sdc1"),
};

TEST_F(SelectDiskDevicesTest, RootPath) {
  EXPECT_EQ(Select({"/"}, kWorkstationMounts, kWorkstationDisks), (Names{"sda1"}));
  EXPECT_EQ(predicate_calls_, 0);  // the fallback predicate is not consulted when a path resolves
}

TEST_F(SelectDiskDevicesTest, PathComponentPrefixNotStringPrefix) {
  EXPECT_EQ(Select({"/home"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"/home/user"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"/homework"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdc1"}));
  EXPECT_EQ(Select({"/homework/x/y"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdc1"}));
  EXPECT_EQ(Select({"/homeworkx"}, kWorkstationMounts, kWorkstationDisks), (Names{"sda1"}));
  EXPECT_EQ(Select({"/hom"}, kWorkstationMounts, kWorkstationDisks), (Names{"sda1"}));
}

TEST_F(SelectDiskDevicesTest, HomeDoesNotMatchHomeworkWhenOnlyHomeworkIsMounted) {
  const std::vector<Mount> mounts = {MakeMount(8, 1, "/", "ext4", "/dev/sda1"),
                                     MakeMount(8, 33, "/homework", "ext4", "/dev/sdc1")};
  EXPECT_EQ(Select({"/home"}, mounts, kWorkstationDisks), (Names{"sda1"}));
  EXPECT_EQ(Select({"/home/work"}, mounts, kWorkstationDisks), (Names{"sda1"}));
}

TEST_F(SelectDiskDevicesTest, DeepestMountWithoutADeviceLeavesThePathUnresolved) {
  // /home/user/.cache is a tmpfs: it wins as the longest mount, has no device, and leaves no path resolved,
  // so the fallback is used.
  EXPECT_EQ(Select({"/home/user/.cache/pip"}, kWorkstationMounts, kWorkstationDisks, {"sda", "sdb", "sdc"}),
            (Names{"sda", "sdb", "sdc"}));
  EXPECT_GT(predicate_calls_, 0);
}

TEST_F(SelectDiskDevicesTest, PathsAreNormalised) {
  EXPECT_EQ(Select({"/home/"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"/home//user/./"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"/home/../homework"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdc1"}));
  EXPECT_EQ(Select({"/homework/../home/user"}, kWorkstationMounts, kWorkstationDisks), (Names{"sdb1"}));
}

TEST_F(SelectDiskDevicesTest, SeveralPathsAreDeduplicatedAndSorted) {
  EXPECT_EQ(Select({"/homework", "/", "/home/user", "/", "/home"}, kWorkstationMounts, kWorkstationDisks),
            (Names{"sda1", "sdb1", "sdc1"}));
}

TEST_F(SelectDiskDevicesTest, DeviceMapperRoot) {
  const std::vector<Mount> mounts = {MakeMount(8, 1, "/boot", "ext4", "/dev/sda1"),
                                     MakeMount(254, 0, "/", "ext4", "/dev/mapper/vg-root")};
  const std::vector<DiskStat> disks = {Disk(8, 0, "sda"), Disk(8, 1, "sda1"), Disk(8, 2, "sda2"),
                                       Disk(254, 0, "dm-0"), Disk(254, 1, "dm-1")};
  EXPECT_EQ(Select({"/"}, mounts, disks), (Names{"dm-0"}));
  EXPECT_EQ(Select({"/boot/efi"}, mounts, disks), (Names{"sda1"}));
}

TEST_F(SelectDiskDevicesTest, NvmePartition) {
  const std::vector<Mount> mounts = {MakeMount(259, 2, "/", "ext4", "/dev/nvme0n1p2"),
                                     MakeMount(259, 1, "/boot/efi", "vfat", "/dev/nvme0n1p1")};
  const std::vector<DiskStat> disks = {Disk(259, 0, "nvme0n1"), Disk(259, 1, "nvme0n1p1"),
                                       Disk(259, 2, "nvme0n1p2")};
  EXPECT_EQ(Select({"/"}, mounts, disks), (Names{"nvme0n1p2"}));
  EXPECT_EQ(Select({"/boot/efi"}, mounts, disks), (Names{"nvme0n1p1"}));
}

TEST_F(SelectDiskDevicesTest, BtrfsWithMajorZeroMatchedBySource) {
  const std::vector<Mount> mounts = {
      MakeMount(0, 31, "/", "btrfs", "/dev/nvme0n1p3", "/@"),
      MakeMount(0, 31, "/home", "btrfs", "/dev/nvme0n1p3", "/@home"),
  };
  const std::vector<DiskStat> disks = {Disk(259, 0, "nvme0n1"), Disk(259, 3, "nvme0n1p3"),
                                       Disk(7, 0, "loop0")};
  EXPECT_EQ(Select({"/"}, mounts, disks), (Names{"nvme0n1p3"}));
  EXPECT_EQ(Select({"/home/user"}, mounts, disks), (Names{"nvme0n1p3"}));
  EXPECT_EQ(predicate_calls_, 0);
}

TEST_F(SelectDiskDevicesTest, MajorZeroIsNeverMatchedByNumber) {
  // A diskstats entry that happens to read 0:31 must not be picked for a btrfs 0:31 mount.
  const std::vector<Mount> mounts = {MakeMount(0, 31, "/", "btrfs", "/dev/sdb2")};
  const std::vector<DiskStat> disks = {Disk(0, 31, "bogus"), Disk(8, 18, "sdb2")};
  EXPECT_EQ(Select({"/"}, mounts, disks), (Names{"sdb2"}));
}

TEST_F(SelectDiskDevicesTest, DevRootSourceResolvedByNumber) {
  // Raspberry Pi style: the source is /dev/root, which diskstats does not list; major:minor finds it.
  const std::vector<Mount> mounts = {MakeMount(179, 2, "/", "ext4", "/dev/root")};
  const std::vector<DiskStat> disks = {Disk(179, 0, "mmcblk0"), Disk(179, 1, "mmcblk0p1"),
                                       Disk(179, 2, "mmcblk0p2")};
  EXPECT_EQ(Select({"/"}, mounts, disks), (Names{"mmcblk0p2"}));
}

TEST_F(SelectDiskDevicesTest, NumberMissingFromDiskstatsFallsBackToSource) {
  const std::vector<Mount> mounts = {MakeMount(8, 99, "/", "ext4", "/dev/sda1")};
  EXPECT_EQ(Select({"/"}, mounts, kWorkstationDisks), (Names{"sda1"}));
}

TEST_F(SelectDiskDevicesTest, BindMountUsesTheUnderlyingDevice) {
  const std::vector<Mount> mounts = {MakeMount(8, 1, "/", "ext4", "/dev/sda1"),
                                     MakeMount(8, 17, "/data", "ext4", "/dev/sdb1", "/srv/datasets")};
  EXPECT_EQ(Select({"/data/imagenet"}, mounts, kWorkstationDisks), (Names{"sdb1"}));
}

TEST_F(SelectDiskDevicesTest, LaterMountOfAStackWins) {
  const std::vector<Mount> mounts = {MakeMount(8, 1, "/", "ext4", "/dev/sda1"),
                                     MakeMount(8, 17, "/data", "ext4", "/dev/sdb1"),
                                     MakeMount(8, 33, "/data", "ext4", "/dev/sdc1")};
  EXPECT_EQ(Select({"/data"}, mounts, kWorkstationDisks), (Names{"sdc1"}));
  EXPECT_EQ(Select({"/data/x"}, mounts, kWorkstationDisks), (Names{"sdc1"}));
}

TEST_F(SelectDiskDevicesTest, OverlayRootInAContainerFallsBackToPhysicalWholeDisks) {
  const std::vector<Mount> mounts = {
      MakeMount(0, 52, "/", "overlay", "overlay"),
      MakeMount(0, 55, "/proc", "proc", "proc"),
      MakeMount(0, 56, "/dev", "tmpfs", "tmpfs"),
      MakeMount(8, 1, "/etc/hosts", "ext4", "/dev/sda1"),
  };
  const std::vector<DiskStat> disks = {Disk(7, 0, "loop0"),       Disk(8, 0, "sda"),
                                       Disk(8, 1, "sda1"),        Disk(259, 0, "nvme0n1"),
                                       Disk(259, 1, "nvme0n1p1"), Disk(254, 0, "dm-0")};
  EXPECT_EQ(Select({"/"}, mounts, disks, {"sda", "nvme0n1"}), (Names{"nvme0n1", "sda"}));
  EXPECT_EQ(predicate_calls_, static_cast<int>(disks.size()));  // asked once per diskstats entry
}

TEST_F(SelectDiskDevicesTest, NetworkRootFallsBack) {
  const std::vector<Mount> mounts = {MakeMount(0, 45, "/", "nfs4", "fileserver:/export/root")};
  EXPECT_EQ(Select({"/"}, mounts, kWorkstationDisks, {"sda", "sdb", "sdc"}), (Names{"sda", "sdb", "sdc"}));
}

TEST_F(SelectDiskDevicesTest, PathOutsideEveryMountFallsBack) {
  const std::vector<Mount> mounts = {MakeMount(8, 17, "/data", "ext4", "/dev/sdb1")};
  EXPECT_EQ(Select({"/other"}, mounts, kWorkstationDisks, {"sdb"}), (Names{"sdb"}));
}

TEST_F(SelectDiskDevicesTest, OnePathResolvingIsEnoughToSkipTheFallback) {
  const std::vector<Mount> mounts = {MakeMount(0, 52, "/", "overlay", "overlay"),
                                     MakeMount(8, 17, "/data", "ext4", "/dev/sdb1")};
  EXPECT_EQ(Select({"/", "/data"}, mounts, kWorkstationDisks, {"sda", "sdb", "sdc"}), (Names{"sdb1"}));
  EXPECT_EQ(predicate_calls_, 0);
}

TEST_F(SelectDiskDevicesTest, EmptyInputs) {
  EXPECT_EQ(Select({"/"}, {}, {}), Names{});
  EXPECT_EQ(Select({}, kWorkstationMounts, kWorkstationDisks, {"sda"}), (Names{"sda"}));
  EXPECT_EQ(Select({"/"}, kWorkstationMounts, {}, {"sda"}), Names{});
  EXPECT_EQ(Select({"/"}, {}, kWorkstationDisks, {}), Names{});
}

TEST_F(SelectDiskDevicesTest, RelativePathResolvesAgainstTheWorkingDirectory) {
  const std::string cwd = std::filesystem::current_path().lexically_normal().string();
  ASSERT_FALSE(cwd.empty());
  // The working directory gets its own mount; relative paths must land on it, not on "/".
  const std::vector<Mount> mounts = {MakeMount(8, 1, "/", "ext4", "/dev/sda1"),
                                     MakeMount(8, 17, cwd, "ext4", "/dev/sdb1")};
  EXPECT_EQ(Select({"."}, mounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"sub/dir"}, mounts, kWorkstationDisks), (Names{"sdb1"}));
  EXPECT_EQ(Select({"./sub/../other"}, mounts, kWorkstationDisks), (Names{"sdb1"}));
}

}  // namespace
}  // namespace runmon
