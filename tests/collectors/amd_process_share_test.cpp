// The run's share of each AMD GPU (src/collectors/amd/amdgpu_process_share.hpp) on small /proc and /sys trees
// built here: descriptors sharing one DRM client (dup, fork), a process outside the run on the same card, two
// cards, busy time from engine counters (rates, counters going down, deltas too long, new clients, old
// kernels' percentages, ROCm clients without counters), processes exiting and PIDs reused between ticks,
// KFD-only VRAM and the KFD topology, late GPU users found by the periodic walk or at once through KFD.
#include "collectors/amd/amdgpu_process_share.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixture_tree.hpp"

namespace runmon::amd {
namespace {

namespace fs = std::filesystem;

constexpr char kCardA[] = "0000:03:00.0";
constexpr char kCardB[] = "0000:43:00.0";
constexpr long kRoot = 100;
constexpr uint64_t kMiB = 1024 * 1024;

// One client's fdinfo in the 5.19+ layout; engines are left out when unset, as the driver does at 0 ns.
std::string Fdinfo(std::string_view pdev, uint64_t client, std::optional<uint64_t> vram_kib,
                   std::optional<uint64_t> gfx_ns = std::nullopt,
                   std::optional<uint64_t> compute_ns = std::nullopt) {
  std::string text = "pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1061\npasid:\t" +
                     std::to_string(32768 + client) + "\ndrm-driver:\tamdgpu\ndrm-pdev:\t" +
                     std::string(pdev) + "\ndrm-client-id:\t" + std::to_string(client) + "\n";
  if (vram_kib) text += "drm-memory-vram:\t" + std::to_string(*vram_kib) + " KiB\n";
  text += "drm-memory-gtt: \t2048 KiB\n";
  if (gfx_ns) text += "drm-engine-gfx:\t" + std::to_string(*gfx_ns) + " ns\n";
  if (compute_ns) text += "drm-engine-compute:\t" + std::to_string(*compute_ns) + " ns\n";
  return text;
}

class AmdProcessShareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddProcess(kRoot, 1, 5000);
    cards_ = {CardAddress{kCardA, 1001}, CardAddress{kCardB, 1002}};
  }

  void AddProcess(long pid, long ppid, uint64_t start_ticks) {
    const std::string dir = "proc/" + std::to_string(pid);
    tree_.Write(dir + "/stat", test::PidStatLine(pid, "python", 'S', ppid, 10, 5, 1, start_ticks));
    tree_.Write(dir + "/task/" + std::to_string(pid) + "/children", "");
    tree_.Mkdir(dir + "/fd").Mkdir(dir + "/fdinfo");
  }
  void SetChildren(long pid, const std::vector<long>& children) {
    std::string list;
    for (long child : children) list += std::to_string(child) + " ";
    tree_.Write("proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children", list);
  }
  // Descriptor `fd` of `pid` open on `target`, with that fdinfo.
  void AddFd(long pid, int fd, const std::string& fdinfo, const std::string& target = "/dev/dri/renderD128") {
    const std::string dir = "proc/" + std::to_string(pid);
    const fs::path link = tree_.Path(dir + "/fd/" + std::to_string(fd));
    if (!fs::is_symlink(link)) fs::create_symlink(target, link);
    tree_.Write(dir + "/fdinfo/" + std::to_string(fd), fdinfo);
  }
  void SetFdinfo(long pid, int fd, const std::string& fdinfo) {
    tree_.Write("proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd), fdinfo);
  }
  void Exit(long pid) { tree_.Remove("proc/" + std::to_string(pid)); }
  void SetKfdVram(long pid, uint32_t gpu_id, uint64_t bytes) {
    tree_.Write("sys/class/kfd/kfd/proc/" + std::to_string(pid) + "/vram_" + std::to_string(gpu_id),
                std::to_string(bytes) + "\n");
  }
  void AddKfdNode(int node, uint32_t gpu_id, uint64_t location_id, uint64_t domain) {
    const std::string dir = "sys/class/kfd/kfd/topology/nodes/" + std::to_string(node);
    tree_.Write(dir + "/gpu_id", std::to_string(gpu_id) + "\n");
    tree_.Write(dir + "/properties", "cpu_cores_count 0\nsimd_count 256\nlocation_id " +
                                         std::to_string(location_id) + "\ndomain " + std::to_string(domain) +
                                         "\n");
  }

  ProcessShare Share(bool whole_tree = true) {
    return ProcessShare(tree_.paths(), RunTree(tree_.paths(), kRoot, whole_tree));
  }
  std::vector<std::optional<TreeShare>> Sample(ProcessShare& share, double seconds) {
    return share.Sample(cards_, seconds);
  }

  test::FixtureTree tree_;
  std::vector<CardAddress> cards_;
};

TEST_F(AmdProcessShareTest, TwoDescriptorsOfOneClientCountOnce) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024));
  AddFd(kRoot, 9, Fdinfo(kCardA, 7, 1024));  // dup(5)
  AddFd(kRoot, 3, "pos:\t0\nflags:\t02\nmnt_id:\t25\nino:\t7\n", "/home/user/train.log");
  ProcessShare share = Share();
  const auto shares = Sample(share, 10.0);
  ASSERT_EQ(shares.size(), 2u);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 1 * kMiB);
  EXPECT_FALSE(shares[0]->busy_percent);  // the first tick has nothing to compare with
  EXPECT_FALSE(shares[1]);                // the run has no client on card B
}

TEST_F(AmdProcessShareTest, TwoProcessesSharingAClientCountItOnce) {
  AddProcess(101, kRoot, 5100);
  SetChildren(kRoot, {101});
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 2048, 1'000'000'000));
  AddFd(101, 5, Fdinfo(kCardA, 7, 2048, 1'000'000'000));  // inherited across fork
  ProcessShare share = Share();
  auto shares = Sample(share, 10.0);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 2 * kMiB);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 2048, 1'250'000'000));
  SetFdinfo(101, 5, Fdinfo(kCardA, 7, 2048, 1'250'000'000));
  shares = Sample(share, 11.0);
  ASSERT_TRUE(shares[0] && shares[0]->busy_percent);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 25.0);  // not 50: one client's 0.25 s
}

TEST_F(AmdProcessShareTest, BetweenWalksAClientSharedByManyProcessesIsReadOnce) {
  SetChildren(kRoot, {101, 102, 103});
  for (long worker : {101, 102, 103}) {
    AddProcess(worker, kRoot, 5000 + worker);
    AddFd(worker, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));  // dataloader workers inherit the descriptor
  }
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));
  AddFd(kRoot, 6, Fdinfo(kCardB, 9, 2048));
  ProcessShare share = Share();
  Sample(share, 10.0);
  EXPECT_EQ(share.fdinfo_reads(), 5u);  // a walk reads every descriptor, to learn its client
  auto shares = Sample(share, 11.0);
  EXPECT_EQ(share.fdinfo_reads(), 2u);  // one per client
  EXPECT_EQ(shares[0]->vram_bytes, 1 * kMiB);
  EXPECT_EQ(shares[1]->vram_bytes, 2 * kMiB);
  // Whichever descriptor was read for client 7, the client is still read through another one when that one's
  // process is gone.
  SetChildren(kRoot, {103});
  Exit(101);
  Exit(102);
  for (long process : {kRoot, 103L}) SetFdinfo(process, 5, Fdinfo(kCardA, 7, 1024, 1'500'000'000));
  shares = Sample(share, 12.0);
  ASSERT_TRUE(shares[0] && shares[0]->busy_percent);
  EXPECT_EQ(shares[0]->vram_bytes, 1 * kMiB);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 50.0);
  Sample(share, 10.0 + ProcessShare::kWalkSeconds);
  EXPECT_EQ(share.fdinfo_reads(), 3u);
}

TEST_F(AmdProcessShareTest, AProcessOutsideTheRunOnTheSameCardIsNotCounted) {
  tree_.Write("proc/1/stat", test::PidStatLine(1, "init", 'S', 0, 0, 0, 1, 1));
  AddProcess(300, 1, 4000);
  AddFd(300, 4, Fdinfo(kCardA, 9, 8 * 1024 * 1024, 7'000'000'000));
  SetKfdVram(300, 1001, 8 * 1024 * kMiB);  // a ROCm process of someone else's
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024));
  ProcessShare share = Share();
  for (double t : {10.0, 11.0, 16.0}) {
    const auto shares = Sample(share, t);
    ASSERT_TRUE(shares[0]) << t;
    EXPECT_EQ(shares[0]->vram_bytes, 1 * kMiB) << t;
  }
}

TEST_F(AmdProcessShareTest, AProcessUsingTwoCardsHasAShareOfEach) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 100));
  AddFd(kRoot, 6,
        Fdinfo(kCardB, 7, 3072, 100));  // client ids are per device: the same number, another client
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 100 + 500'000'000));
  SetFdinfo(kRoot, 6, Fdinfo(kCardB, 7, 3072, 100 + 100'000'000));
  const auto shares = Sample(share, 11.0);
  ASSERT_TRUE(shares[0] && shares[1]);
  EXPECT_EQ(shares[0]->vram_bytes, 1 * kMiB);
  EXPECT_EQ(shares[1]->vram_bytes, 3 * kMiB);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 50.0);
  EXPECT_DOUBLE_EQ(*shares[1]->busy_percent, 10.0);
}

TEST_F(AmdProcessShareTest, BusyIsGfxPlusComputeOverTheRunsClientsCappedAt100) {
  AddProcess(101, kRoot, 5100);
  SetChildren(kRoot, {101});
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000, 2'000'000'000));
  AddFd(101, 6, Fdinfo(kCardA, 8, 1024, std::nullopt, 5'000'000'000));
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'200'000'000, 2'100'000'000));
  SetFdinfo(101, 6, Fdinfo(kCardA, 8, 1024, std::nullopt, 5'400'000'000));
  auto shares = Sample(share, 12.0);  // 2 s: (0.2 + 0.1 + 0.4) / 2
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 35.0);
  // Two clients each busy for most of the second: the card cannot be more than 100 % busy.
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 2'000'000'000, 2'100'000'000));
  SetFdinfo(101, 6, Fdinfo(kCardA, 8, 1024, std::nullopt, 6'300'000'000));
  shares = Sample(share, 13.0);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 100.0);
}

TEST_F(AmdProcessShareTest, AnEngineWithItsFirstLineCountsFromZero) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024));  // not busy yet: no engine line
  ProcessShare share = Share();
  EXPECT_FALSE(Sample(share, 10.0)[0]->busy_percent);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 300'000'000));
  const auto shares = Sample(share, 11.0);
  ASSERT_TRUE(shares[0]->busy_percent);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 30.0);
}

TEST_F(AmdProcessShareTest, ACounterGoingDownGivesNoDeltaAndTheLargerValueStands) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 4'000'000'000));
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 3'000'000'000));
  EXPECT_FALSE(Sample(share, 11.0)[0]->busy_percent);
  // Caught up: the delta is taken from the larger value read before (4 s), not from 3 s.
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 4'500'000'000));
  const auto shares = Sample(share, 12.0);
  ASSERT_TRUE(shares[0]->busy_percent);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 50.0);
}

TEST_F(AmdProcessShareTest, ADeltaLongerThanTheElapsedTimeIsRejected) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 3'000'000'000));  // 2 s of work in 1 s
  EXPECT_FALSE(Sample(share, 11.0)[0]->busy_percent);
}

TEST_F(AmdProcessShareTest, AClientNewThisTickGivesNoDelta) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetFdinfo(kRoot, 5, Fdinfo(kCardA, 7, 1024, 1'100'000'000));
  AddFd(kRoot, 6, Fdinfo(kCardA, 8, 1024, 900'000'000));  // opened since; found by the next walk
  auto shares = Sample(share, 15.0);                      // a walk tick: 6 is new, its 0.9 s is not a delta
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 100.0 * 0.1 / 5.0);
  EXPECT_EQ(shares[0]->vram_bytes, 2 * kMiB);
}

TEST_F(AmdProcessShareTest, OldKernelsPercentagesAreAddedAsTheyAre) {
  const std::string old =
      "pos:\t0\npdev:\t0000:03:00.0\npasid:\t32770\nvram mem:\t4096 kB\n"
      "gfx0:\t12.5%\ncompute0:\t20.25%\ncompute1:\t10.0%\ndma0:\t50.0%\n";
  AddFd(kRoot, 5, old);
  AddFd(kRoot, 6, old);  // the same pasid: the same client
  ProcessShare share = Share();
  const auto shares = Sample(share, 10.0);
  ASSERT_TRUE(shares[0] && shares[0]->busy_percent);
  EXPECT_DOUBLE_EQ(*shares[0]->busy_percent, 42.75);  // gfx and compute rings; dma is not counted
  EXPECT_EQ(shares[0]->vram_bytes, 4 * kMiB);
}

TEST_F(AmdProcessShareTest, ClientsWithoutCountersTellNothingAboutBusyness) {
  // ROCm work runs on KFD's user-mode queues and is in no drm-engine counter: unknown, not 0 %.
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 4096));
  ProcessShare share = Share();
  Sample(share, 10.0);
  const auto shares = Sample(share, 11.0);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 4 * kMiB);
  EXPECT_FALSE(shares[0]->busy_percent);
}

TEST_F(AmdProcessShareTest, AProcessThatExitsBetweenTicksIsNoLongerCounted) {
  AddProcess(101, kRoot, 5100);
  SetChildren(kRoot, {101});
  AddFd(101, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));
  AddFd(kRoot, 5, Fdinfo(kCardB, 3, 1024));
  ProcessShare share = Share();
  ASSERT_TRUE(Sample(share, 10.0)[0]);
  SetChildren(kRoot, {});
  Exit(101);
  const auto shares = Sample(share, 11.0);
  EXPECT_FALSE(shares[0]);
  EXPECT_TRUE(shares[1]);
}

TEST_F(AmdProcessShareTest, APidReusedByAnotherProcessIsNotTheRuns) {
  tree_.Write("proc/1/stat", test::PidStatLine(1, "init", 'S', 0, 0, 0, 1, 1));
  AddProcess(101, kRoot, 5100);
  SetChildren(kRoot, {101});
  AddFd(101, 5, Fdinfo(kCardA, 7, 1024, 1'000'000'000));
  ProcessShare share = Share();
  ASSERT_TRUE(Sample(share, 10.0)[0]);
  // 101 exits; an unrelated process gets its PID and opens card A with the same descriptor number.
  SetChildren(kRoot, {});
  Exit(101);
  AddProcess(101, 1, 9000);
  AddFd(101, 5, Fdinfo(kCardA, 20, 512 * 1024, 1'000'000'000));
  SetKfdVram(101, 1001, 512 * kMiB);
  for (double t : {11.0, 16.0}) {  // between walks, and after one
    EXPECT_FALSE(Sample(share, t)[0]) << t;
  }
}

TEST_F(AmdProcessShareTest, APidReusedByAKfdProcessBetweenWalksIsNotTheRuns) {
  tree_.Write("proc/1/stat", test::PidStatLine(1, "init", 'S', 0, 0, 0, 1, 1));
  AddProcess(101, kRoot, 5100);  // a member without GPU files: only looked at again by the next walk
  SetChildren(kRoot, {101});
  AddFd(kRoot, 5, Fdinfo(kCardB, 3, 1024));
  ProcessShare share = Share();
  Sample(share, 10.0);
  SetChildren(kRoot, {});
  Exit(101);
  AddProcess(101, 1, 9000);
  SetKfdVram(101, 1001, 512 * kMiB);
  const auto shares = Sample(share, 11.0);
  EXPECT_FALSE(shares[0]);
  EXPECT_TRUE(shares[1]);
}

TEST_F(AmdProcessShareTest, KfdGivesTheVramWhenFdinfoHasNone) {
  // Card A's gpu_id comes from the topology (node 1: location_id 0x300 = 03:00.0); node 0 is the CPU.
  cards_ = {CardAddress{kCardA, std::nullopt}, CardAddress{kCardB, std::nullopt}};
  tree_.Write("sys/class/kfd/kfd/topology/nodes/0/gpu_id", "0\n");
  tree_.Write("sys/class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 16\n");
  AddKfdNode(1, 43690, 0x300, 0);
  AddKfdNode(2, 5555, 0x4300, 0);
  SetKfdVram(kRoot, 43690, 2048 * kMiB);  // the root has no descriptor on /dev/dri we can read
  SetKfdVram(kRoot, 5555, 0);             // ROCm opened card B too, but holds nothing there
  ProcessShare share = Share();
  const auto shares = Sample(share, 10.0);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 2048 * kMiB);
  EXPECT_FALSE(shares[0]->busy_percent);
  EXPECT_FALSE(shares[1]);
}

TEST_F(AmdProcessShareTest, KfdIsNotAddedWhereFdinfoHasTheVram) {
  SetKfdVram(kRoot, 1001, 64 * kMiB);
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 64 * 1024));  // the same allocations, through the render node's VM
  ProcessShare share = Share();
  const auto shares = Sample(share, 10.0);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 64 * kMiB);
}

TEST_F(AmdProcessShareTest, AGpuIdClaimedByTwoTopologyNodesIsNotGuessed) {
  cards_ = {CardAddress{kCardA, std::nullopt}};
  AddKfdNode(1, 43690, 0x300, 0);
  AddKfdNode(2, 43691, (1ull << 28) | 0x300, 0);  // a second partition of the same GPU
  EXPECT_TRUE(ReadKfdGpuIds(tree_.paths()).empty());
  SetKfdVram(kRoot, 43690, 2048 * kMiB);
  ProcessShare share = Share();
  EXPECT_FALSE(Sample(share, 10.0)[0]);
}

TEST_F(AmdProcessShareTest, AGraphicsUserStartedLaterIsFoundByTheNextWalk) {
  ProcessShare share = Share();
  EXPECT_FALSE(Sample(share, 10.0)[0]);
  AddProcess(102, kRoot, 5200);
  SetChildren(kRoot, {102});
  AddFd(102, 4, Fdinfo(kCardA, 11, 1024));
  EXPECT_FALSE(Sample(share, 11.0)[0]);  // no walk yet, and not a KFD process
  ASSERT_TRUE(Sample(share, 10.0 + ProcessShare::kWalkSeconds)[0]);
}

TEST_F(AmdProcessShareTest, AKfdProcessStartedLaterIsFoundAtOnce) {
  ProcessShare share = Share();
  EXPECT_FALSE(Sample(share, 10.0)[0]);
  AddProcess(102, kRoot, 5200);
  AddProcess(103, 102, 5300);  // a grandchild, under a parent the walk has not seen
  SetChildren(kRoot, {102});
  SetChildren(102, {103});
  AddFd(103, 4, Fdinfo(kCardA, 11, 3072));
  SetKfdVram(103, 1001, 3 * kMiB);
  const auto shares = Sample(share, 11.0);
  ASSERT_TRUE(shares[0]);
  EXPECT_EQ(shares[0]->vram_bytes, 3 * kMiB);  // from fdinfo, which KFD does not add to
}

TEST_F(AmdProcessShareTest, WithTheRootAloneChildrenAreNotCounted) {
  AddProcess(101, kRoot, 5100);
  SetChildren(kRoot, {101});
  AddFd(101, 5, Fdinfo(kCardA, 7, 1024));
  SetKfdVram(101, 1001, kMiB);
  AddFd(kRoot, 5, Fdinfo(kCardB, 3, 1024));
  ProcessShare share = Share(/*whole_tree=*/false);
  const auto shares = Sample(share, 10.0);
  EXPECT_FALSE(shares[0]);
  EXPECT_TRUE(shares[1]);
}

TEST_F(AmdProcessShareTest, WithoutAMonitoredProcessNothingIsTheRuns) {
  AddFd(kRoot, 5, Fdinfo(kCardA, 7, 1024));
  ProcessShare share(tree_.paths(), RunTree(tree_.paths(), std::nullopt, true));
  const auto shares = share.Sample(cards_, 10.0);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_FALSE(shares[0]);
  EXPECT_FALSE(shares[1]);
}

TEST_F(AmdProcessShareTest, AnotherDriversClientAndBrokenFilesAreLeftOut) {
  AddFd(kRoot, 5, test::ReadFile(test::FixturesDir() / "amd_fdinfo" / "i915.txt"), "/dev/dri/renderD129");
  AddFd(kRoot, 6,
        "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t12\ndrm-memory-vram:\tlots KiB\n");
  AddFd(kRoot, 7, "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t1024 KiB\n");  // no id
  ProcessShare share = Share();
  const auto shares = Sample(share, 10.0);
  EXPECT_FALSE(shares[0]);
  EXPECT_FALSE(shares[1]);
}

}  // namespace
}  // namespace runmon::amd
