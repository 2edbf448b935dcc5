// The disk collectors. disk_io: which /proc/diskstats devices stand behind the configured paths (longest
// path-component mount prefix, major:minor, else the mount source's name for btrfs; every physical whole disk
// when the root is an overlay with no device), and disk.{dev}.in/out, disk.in/out in MiB since the first
// sample (sectors x 512) with read/write rates. disk_usage: df semantics through an injected statvfs.
#include <gtest/gtest.h>

#include <map>

#include "collectors/linux/disk_devices.hpp"
#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

std::unique_ptr<Collector> MakeDiskIo(const FixtureTree& tree, std::vector<std::string> disk_paths,
                                      const test::FakeClocks& clocks) {
  Settings settings;
  settings.disk_paths = std::move(disk_paths);
  return MakeDiskIoCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks, settings));
}

// Keys of the form disk.{dev}.in present in a batch, i.e. the devices selected.
std::vector<std::string> Devices(const test::Collected& c) {
  std::vector<std::string> devices;
  for (const auto& key : c.Keys()) {
    if (key.starts_with("disk.") && key.ends_with(".in") && key != "disk.in") {
      devices.push_back(key.substr(5, key.size() - 8));
    }
  }
  return devices;
}

TEST(DiskIoCollector, NvmePartitionRoot) {
  FixtureTree tree(test::HostFixture("nvme-root"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(Devices(first), std::vector<std::string>{"nvme0n1p2"});
  EXPECT_DOUBLE_EQ(first["disk.nvme0n1p2.in"], 0.0);
  EXPECT_DOUBLE_EQ(first["disk.nvme0n1p2.out"], 0.0);
  EXPECT_DOUBLE_EQ(first["disk.in"], 0.0);
  EXPECT_DOUBLE_EQ(first["disk.out"], 0.0);
  EXPECT_FALSE(first.Has("disk.readMBPerSec"));

  tree.MirrorFrom(test::HostFixture("nvme-root") / "t1");
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  // nvme0n1p2: +4096 sectors read (2 MiB), +20480 written (10 MiB), in 2 s.
  EXPECT_DOUBLE_EQ(second["disk.nvme0n1p2.in"], 2.0);
  EXPECT_DOUBLE_EQ(second["disk.nvme0n1p2.out"], 10.0);
  EXPECT_DOUBLE_EQ(second["disk.in"], 2.0);
  EXPECT_DOUBLE_EQ(second["disk.out"], 10.0);
  EXPECT_DOUBLE_EQ(second["disk.readMBPerSec"], 1.0);
  EXPECT_DOUBLE_EQ(second["disk.writeMBPerSec"], 5.0);
  EXPECT_FALSE(second.Has("disk.nvme0n1.in"));  // the whole disk is not behind "/"
}

TEST(DiskIoCollector, BtrfsSubvolumeMatchedBySourceName) {
  // /home is btrfs (device 0:35, no diskstats entry): matched through its source /dev/nvme0n1p3.
  FixtureTree tree(test::HostFixture("nvme-root"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/home/user/data"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_EQ(Devices(first), std::vector<std::string>{"nvme0n1p3"});
  tree.MirrorFrom(test::HostFixture("nvme-root") / "t1");
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["disk.nvme0n1p3.in"], 1.0);  // +2048 sectors
  EXPECT_DOUBLE_EQ(second["disk.nvme0n1p3.out"], 0.0);
}

TEST(DiskIoCollector, MountPrefixIsPathComponentWise) {
  // "/homework" is not under "/home" (A.2.8; W&B's string prefix says it is): it is on the root's device.
  FixtureTree tree(test::HostFixture("nvme-root"));
  test::FakeClocks clocks(100, 100);
  EXPECT_EQ(Devices(test::CollectTick(*MakeDiskIo(tree, {"/homework"}, clocks), 0)),
            std::vector<std::string>{"nvme0n1p2"});
  EXPECT_EQ(Devices(test::CollectTick(*MakeDiskIo(tree, {"/home"}, clocks), 0)),
            std::vector<std::string>{"nvme0n1p3"});
  EXPECT_EQ(Devices(test::CollectTick(*MakeDiskIo(tree, {"/snap/core/1/bin"}, clocks), 0)),
            std::vector<std::string>{"loop0"});
  EXPECT_EQ(Devices(test::CollectTick(*MakeDiskIo(tree, {"/", "/home", "/boot/efi"}, clocks), 0)),
            (std::vector<std::string>{"nvme0n1p1", "nvme0n1p2", "nvme0n1p3"}));
}

TEST(DiskIoCollector, DeviceMapperRootAndData) {
  FixtureTree tree(test::HostFixture("dm-root"));
  test::FakeClocks clocks(100, 100);
  auto root_only = MakeDiskIo(tree, {"/"}, clocks);
  auto both = MakeDiskIo(tree, {"/", "/data"}, clocks);
  const auto first = test::CollectTick(*root_only, 0);
  EXPECT_EQ(Devices(first), std::vector<std::string>{"dm-0"});  // 254:0, not the sda2 beneath it
  EXPECT_EQ(Devices(test::CollectTick(*both, 0)), (std::vector<std::string>{"dm-0", "dm-1"}));

  tree.MirrorFrom(test::HostFixture("dm-root") / "t1");
  clocks.Advance(4);
  const auto root_second = test::CollectTick(*root_only, 1);
  EXPECT_DOUBLE_EQ(root_second["disk.dm-0.in"], 1.0);   // +2048 sectors
  EXPECT_DOUBLE_EQ(root_second["disk.dm-0.out"], 3.0);  // +6144 sectors
  EXPECT_DOUBLE_EQ(root_second["disk.readMBPerSec"], 0.25);
  EXPECT_DOUBLE_EQ(root_second["disk.writeMBPerSec"], 0.75);
  const auto both_second = test::CollectTick(*both, 1);
  EXPECT_DOUBLE_EQ(both_second["disk.dm-1.in"], 0.5);  // +1024 sectors
  EXPECT_DOUBLE_EQ(both_second["disk.dm-1.out"], 0.0);
  EXPECT_DOUBLE_EQ(both_second["disk.in"], 1.5);
  EXPECT_DOUBLE_EQ(both_second["disk.out"], 3.0);
}

TEST(DiskIoCollector, OverlayRootFallsBackToPhysicalDisks) {
  // A container: "/" is overlay (0:52), no device behind it. sys/block marks sda and nvme0n1 as physical
  // (device/ present); loop0 and dm-0 are virtual; partitions are not in sys/block at all.
  FixtureTree tree(test::HostFixture("container-overlay"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(Devices(first), (std::vector<std::string>{"nvme0n1", "sda"}));
  tree.MirrorFrom(test::HostFixture("container-overlay") / "t1");
  clocks.Advance(1);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["disk.nvme0n1.in"], 1.0);  // +2048 sectors
  EXPECT_DOUBLE_EQ(second["disk.sda.in"], 0.5);      // +1024 sectors
  EXPECT_DOUBLE_EQ(second["disk.in"], 1.5);
  EXPECT_DOUBLE_EQ(second["disk.out"], 0.0);
  EXPECT_DOUBLE_EQ(second["disk.readMBPerSec"], 1.5);
}

TEST(DiskIoCollector, OverlayFallbackWithoutSysfsUsesNames) {
  // No sys/block: virtual devices are known by name and partitions by a listed disk that prefixes them.
  FixtureTree tree(test::HostFixture("container-overlay"));
  tree.Remove("sys/block");
  test::FakeClocks clocks(100, 100);
  EXPECT_EQ(Devices(test::CollectTick(*MakeDiskIo(tree, {"/"}, clocks), 0)),
            (std::vector<std::string>{"nvme0n1", "sda"}));
}

TEST(DiskIoCollector, SelectDiskDevicesDirectly) {
  std::vector<Mount> mounts = {{0, 52, "/", "/", "overlay", "overlay", "rw"},
                               {259, 2, "/", "/workspace", "ext4", "/dev/nvme0n1p2", "rw"}};
  std::vector<DiskStat> disks = {
      {259, 0, "nvme0n1", 0, 0}, {259, 2, "nvme0n1p2", 0, 0}, {7, 0, "loop0", 0, 0}};
  auto physical = [](const std::string& name) { return name == "nvme0n1"; };
  // A path on a real device wins over the fallback.
  EXPECT_EQ(SelectDiskDevices({"/workspace/run1"}, mounts, disks, physical),
            std::vector<std::string>{"nvme0n1p2"});
  EXPECT_EQ(SelectDiskDevices({"/"}, mounts, disks, physical), std::vector<std::string>{"nvme0n1"});
  EXPECT_EQ(SelectDiskDevices({"/", "/workspace"}, mounts, disks, physical),
            std::vector<std::string>{"nvme0n1p2"});
  EXPECT_EQ(SelectDiskDevices({"/workspace/"}, mounts, disks, physical),
            std::vector<std::string>{"nvme0n1p2"});
}

TEST(DiskIoCollector, VanishedDeviceKeepsItsContribution) {
  FixtureTree tree(test::HostFixture("dm-root"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/", "/data"}, clocks);
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.MirrorFrom(test::HostFixture("dm-root") / "t1");
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["disk.in"], 1.5);
  // dm-1 (the /data volume) is deactivated: its line disappears; the sums keep its 0.5 MiB.
  std::string text = tree.Read("proc/diskstats");
  text.erase(text.find(" 254       1 dm-1"));
  tree.Write("proc/diskstats", text);
  const auto third = test::CollectTick(*collector, 2);
  ASSERT_TRUE(third.status.ok()) << third.status.error();
  EXPECT_DOUBLE_EQ(third["disk.in"], 1.5);
  EXPECT_DOUBLE_EQ(third["disk.out"], 3.0);
}

TEST(DiskIoCollector, CapturedVmRootOnVda) {
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(Devices(first), std::vector<std::string>{"vda"});  // "/" is 254:0 = vda here
  tree.MirrorFrom(test::HostFixture("debian12-vm") / "t1");
  clocks.Set(840.33, 840.33);
  const auto second = test::CollectTick(*collector, 1);
  // vda sectors read 2417154 -> 2418186 (+1032), written 1001696 -> 1001744 (+48).
  EXPECT_DOUBLE_EQ(second["disk.vda.in"], 1032.0 * 512 / (1024.0 * 1024.0));
  EXPECT_DOUBLE_EQ(second["disk.vda.out"], 48.0 * 512 / (1024.0 * 1024.0));
  EXPECT_DOUBLE_EQ(second["disk.readMBPerSec"], 1032.0 * 512 / (1024.0 * 1024.0) / (840.33 - 837.37));
}

TEST(DiskIoCollector, TruncatedDiskstatsIsAnError) {
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(100, 100);
  const auto bad = test::CollectTick(*MakeDiskIo(tree, {"/"}, clocks), 0);
  EXPECT_FALSE(bad.status.ok());
  EXPECT_TRUE(bad.batch.empty());
}

// --- disk usage ---------------------------------------------------------------------------------------

TEST(DiskUsageCollector, DfSemanticsPerPath) {
  FixtureTree tree;
  test::FakeClocks clocks(100, 100);
  Settings settings;
  settings.disk_paths = {"/", "/data"};
  auto ctx = test::FixtureContext(tree.paths(), std::nullopt, clocks, settings);
  ctx.stat_filesystem = [](const std::string& path) -> Result<FilesystemUsage> {
    // "/": 100 GiB, 30 GiB used, 60 GiB available to users (10 GiB reserved for root).
    if (path == "/") return FilesystemUsage{uint64_t{100} << 30, uint64_t{30} << 30, uint64_t{60} << 30};
    if (path == "/data") return FilesystemUsage{uint64_t{4} << 40, uint64_t{1} << 40, uint64_t{3} << 40};
    return Error{path + ": no such file"};
  };
  auto collector = MakeDiskUsageCollector(ctx);
  const auto c = test::CollectTick(*collector, 0);
  ASSERT_TRUE(c.status.ok()) << c.status.error();
  EXPECT_DOUBLE_EQ(c["disk./.usagePercent"], 100.0 * 30 / 90);  // used / (used + available)
  EXPECT_DOUBLE_EQ(c["disk./.usageGB"], 30.0);
  EXPECT_DOUBLE_EQ(c["disk./data.usagePercent"], 25.0);
  EXPECT_DOUBLE_EQ(c["disk./data.usageGB"], 1024.0);
  EXPECT_EQ(c.Keys(), (std::vector<std::string>{"disk./.usagePercent", "disk./.usageGB",
                                                "disk./data.usagePercent", "disk./data.usageGB"}));
}

TEST(DiskUsageCollector, FailingPathIsNamedOthersStillReported) {
  FixtureTree tree;
  test::FakeClocks clocks(100, 100);
  Settings settings;
  settings.disk_paths = {"/gone", "/"};
  auto ctx = test::FixtureContext(tree.paths(), std::nullopt, clocks, settings);
  ctx.stat_filesystem = [](const std::string& path) -> Result<FilesystemUsage> {
    if (path == "/") return FilesystemUsage{1000, 0, 1000};
    return Error{path + ": No such file or directory"};
  };
  auto collector = MakeDiskUsageCollector(ctx);
  const auto c = test::CollectTick(*collector, 0);
  EXPECT_FALSE(c.status.ok());
  EXPECT_NE(c.status.error().find("/gone"), std::string::npos);
  EXPECT_DOUBLE_EQ(c["disk./.usagePercent"], 0.0);
  EXPECT_DOUBLE_EQ(c["disk./.usageGB"], 0.0);
  EXPECT_FALSE(c.Has("disk./gone.usageGB"));
}

TEST(DiskUsageCollector, EmptyFilesystemHasNoPercent) {
  FixtureTree tree;
  test::FakeClocks clocks(100, 100);
  auto ctx = test::FixtureContext(tree.paths(), std::nullopt, clocks);
  ctx.stat_filesystem = [](const std::string&) -> Result<FilesystemUsage> {
    return FilesystemUsage{0, 0, 0};
  };
  const auto c = test::CollectTick(*MakeDiskUsageCollector(ctx), 0);
  EXPECT_FALSE(c.Has("disk./.usagePercent"));
  EXPECT_DOUBLE_EQ(c["disk./.usageGB"], 0.0);
}

TEST(DiskUsageCollector, RealStatvfsOfTheRoot) {
  const auto usage = StatFilesystem("/");
  ASSERT_TRUE(usage.ok()) << usage.error();
  EXPECT_GT(usage->total_bytes, 0u);
  EXPECT_LE(usage->used_bytes, usage->total_bytes);
  EXPECT_FALSE(StatFilesystem("/definitely/not/here").ok());
}

TEST(DiskIoCollector, NoDeviceToReadIsNoMeasurement) {
  // Only virtual devices and no path leading to a listed one: nothing measured, so no 0 MiB sums.
  FixtureTree tree;
  tree.Write("proc/diskstats", "   7       0 loop0 5 0 100 0 0 0 0 0 0 0 0 0 0\n");
  tree.Write("proc/self/mountinfo", "600 500 0:52 / / rw - overlay overlay rw\n");
  tree.Mkdir("sys/block/loop0");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  for (uint64_t tick = 0; tick < 2; ++tick) {
    const auto none = test::CollectTick(*collector, tick);
    EXPECT_FALSE(none.status.ok());
    EXPECT_NE(none.status.error().find(tree.Path("proc/diskstats").string()), std::string::npos)
        << none.status.error();
    EXPECT_TRUE(none.batch.empty()) << none.Keys().front();
  }
}

TEST(DiskIoCollector, ErrorsNameTheFilesRead) {
  FixtureTree tree(test::HostFixture("malformed"));
  test::FakeClocks clocks(100, 100);
  const auto bad = test::CollectTick(*MakeDiskIo(tree, {"/"}, clocks), 0);
  EXPECT_TRUE(bad.status.error().starts_with(tree.Path("proc/diskstats").string() + ": truncated line"))
      << bad.status.error();

  // An unreadable mountinfo: the first sample still comes (the physical disks) and says why.
  FixtureTree nvme(test::HostFixture("nvme-root"));
  nvme.Write("proc/self/mountinfo", "22 1 8-1 / / rw - ext4 /dev/sda1 rw\n");
  auto collector = MakeDiskIo(nvme, {"/"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  EXPECT_EQ(first.status.error(), nvme.Path("proc/self/mountinfo").string() + ": bad device '8-1'");
  EXPECT_TRUE(first.Has("disk.in"));
  EXPECT_TRUE(test::CollectTick(*collector, 1).status.ok());
}

TEST(DiskIoCollector, HugeSectorCountsDoNotWrap) {
  // 2^60 sectors are 2^69 bytes: the MiB value must not wrap around 64 bits.
  FixtureTree tree;
  tree.Write("proc/diskstats", "   8       0 sda 1 0 0 0 1 0 0 0 0 0 0\n");
  tree.Write("proc/self/mountinfo", "22 1 8:0 / / rw - ext4 /dev/sda rw\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.Write("proc/diskstats", "   8       0 sda 1 0 1152921504606846976 0 1 0 0 0 0 0 0\n");
  clocks.Advance(1);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["disk.in"], 1152921504606846976.0 * 512 / (1024.0 * 1024.0));
  EXPECT_DOUBLE_EQ(second["disk.readMBPerSec"], 1152921504606846976.0 * 512 / (1024.0 * 1024.0));
}

TEST(DiskIoCollector, DeviceNumberListedTwiceTakesTheSourcesDevice) {
  // partial-sysfs: 8:1 is listed as sda1, sdb1 and sdc1; "/" is on 8:1 from /dev/sda1. sda1 is also listed
  // twice, the second time with other counters, which must not count as traffic.
  FixtureTree tree(test::HostFixture("partial-sysfs"));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeDiskIo(tree, {"/"}, clocks);
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_EQ(Devices(first), std::vector<std::string>{"sda1"});
  EXPECT_DOUBLE_EQ(first["disk.in"], 0.0);
  tree.Substitute("proc/diskstats", "sda1 250 0 2000 36 10 0 400", "sda1 250 0 4048 36 10 0 400");
  clocks.Advance(1);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["disk.sda1.in"], 1.0);  // 2048 sectors
  EXPECT_DOUBLE_EQ(second["disk.sda1.out"], 0.0);
  EXPECT_DOUBLE_EQ(second["disk.readMBPerSec"], 1.0);
}

}  // namespace
}  // namespace runmon
