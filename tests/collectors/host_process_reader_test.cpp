// HostProcessReader on the gpu-processes fixture tree (tests/fixtures/hosts/gpu-processes/README.md): users
// from the tree's etc/passwd (a uid it does not name shows as the number), CPU % between two reads, RSS,
// command lines escaped and cut, a kernel thread's name, the `runmon run` rule (and what only looks like
// runmon), a PID that vanished, a huge command line and a parent loop.
#include <gtest/gtest.h>

#include <string>

#include "collectors/linux/host_process_reader.hpp"
#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;
using test::HostFixture;

HostProcessReader MakeReader(const FixtureTree& tree, size_t max_command_bytes = 1024) {
  return HostProcessReader({.paths = tree.paths(),
                            .ticks_per_second = 100,
                            .page_bytes = 4096,
                            .max_command_bytes = max_command_bytes});
}

TEST(HostProcessReaderTest, OwnerRssAndCommand) {
  FixtureTree tree(HostFixture("gpu-processes"));
  HostProcessReader reader = MakeReader(tree);
  const auto found = reader.Read({501, 600, 900}, 10);
  ASSERT_EQ(found.size(), 3u);
  const HostProcess& train = found.at(501);
  EXPECT_EQ(train.ppid, 500);
  EXPECT_EQ(train.user, "alice");  // the first name of uid 1000
  EXPECT_EQ(train.command, "python train.py --lr 3e-4");
  EXPECT_EQ(train.rss_bytes, (2500u + 501u) * 4096u);
  EXPECT_FALSE(train.cpu_percent.has_value()) << "no CPU % on a first read";
  EXPECT_EQ(found.at(600).user, "4242");  // passwd does not name it
  EXPECT_EQ(found.at(900).command, "[kworker/0:1]");
  EXPECT_FALSE(found.at(900).run.has_value());
}

TEST(HostProcessReaderTest, HostileCommandLineIsEscaped) {
  FixtureTree tree(HostFixture("gpu-processes"));
  const auto found = MakeReader(tree).Read({600}, 10);
  ASSERT_EQ(found.count(600), 1u);
  EXPECT_EQ(found.at(600).command, "evil \\x1B[2J\\x1B]0;pwned\\x07 tab\\there \\xFF\\xFE \\u{202E}");
}

TEST(HostProcessReaderTest, CpuPercentBetweenTwoReads) {
  FixtureTree tree(HostFixture("gpu-processes"));
  HostProcessReader reader = MakeReader(tree);
  ASSERT_EQ(reader.Read({501}, 10).size(), 1u);
  // 50 more ticks (0.5 s at 100 Hz) over 2 s of wall time: 25 % of one core.
  tree.Substitute("proc/501/stat", " 1501 200 ", " 1531 220 ");
  const auto found = reader.Read({501}, 12);
  ASSERT_TRUE(found.at(501).cpu_percent.has_value());
  EXPECT_NEAR(*found.at(501).cpu_percent, 25.0, 1e-9);
  // A new process at the same PID (another start time) starts afresh.
  tree.Substitute("proc/501/stat", " 5501 ", " 9999 ");
  EXPECT_FALSE(reader.Read({501}, 13).at(501).cpu_percent.has_value());
}

TEST(HostProcessReaderTest, RunRule) {
  FixtureTree tree(HostFixture("gpu-processes"));
  const auto found = MakeReader(tree).Read({501, 502, 801, 600}, 10);
  ASSERT_TRUE(found.at(501).run.has_value());
  EXPECT_EQ(found.at(501).run->runmon_pid, 500);
  EXPECT_EQ(found.at(501).run->child_pid, 501);  // the run's child itself
  ASSERT_TRUE(found.at(502).run.has_value());
  EXPECT_EQ(found.at(502).run->child_pid, 501);
  EXPECT_EQ(found.at(502).run->child_command, "python train.py --lr 3e-4");
  EXPECT_FALSE(found.at(801).run.has_value()) << "runmonitor is not runmon";
  EXPECT_FALSE(found.at(600).run.has_value());
  // 502's stat line ends at the start time: its RSS comes from statm instead.
  EXPECT_EQ(found.at(502).rss_bytes, 3002u * 4096u);
}

TEST(HostProcessReaderTest, VanishedProcessIsLeftOut) {
  FixtureTree tree(HostFixture("gpu-processes"));
  HostProcessReader reader = MakeReader(tree);
  EXPECT_EQ(reader.Read({501, 4040}, 10).count(4040), 0u);  // never there
  tree.Remove("proc/501");
  EXPECT_TRUE(reader.Read({501}, 11).empty());  // gone since
  tree.Write("proc/502/stat", "garbage");
  EXPECT_TRUE(reader.Read({502}, 12).empty());
}

TEST(HostProcessReaderTest, AncestorThatVanishedEndsTheChain) {
  FixtureTree tree(HostFixture("gpu-processes"));
  tree.Remove("proc/501");  // 502's parent exited (not yet re-parented in this reading)
  const auto found = MakeReader(tree).Read({502}, 10);
  ASSERT_EQ(found.count(502), 1u);
  EXPECT_FALSE(found.at(502).run.has_value());
}

TEST(HostProcessReaderTest, HugeCommandLineIsCut) {
  FixtureTree tree(HostFixture("gpu-processes"));
  std::string huge = "python";
  for (int i = 0; i < 100000; ++i) huge += std::string("\0--flag", 7);
  tree.Write("proc/801/cmdline", huge);
  const auto found = MakeReader(tree, 200).Read({801}, 10);
  const std::string& command = found.at(801).command;
  EXPECT_LE(command.size(), 200u + 3u);
  EXPECT_TRUE(command.ends_with("…"));
  EXPECT_TRUE(command.starts_with("python --flag --flag"));
}

TEST(HostProcessReaderTest, ParentLoopEnds) {
  FixtureTree tree(HostFixture("gpu-processes"));
  tree.Substitute("proc/800/stat", "S 1 ", "S 801 ");  // 800 <-> 801
  const auto found = MakeReader(tree).Read({801}, 10);
  ASSERT_EQ(found.count(801), 1u);
  EXPECT_FALSE(found.at(801).run.has_value());
}

TEST(HostProcessReaderTest, MissingPasswd) {
  FixtureTree tree(HostFixture("gpu-processes"));
  tree.Remove("etc/passwd");
  EXPECT_EQ(MakeReader(tree).Read({501}, 10).at(501).user, "1000");
}

}  // namespace
}  // namespace runmon
