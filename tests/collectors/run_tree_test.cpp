// RunTree (src/collectors/linux/run_tree.hpp) on fixture /proc trees: who is in the monitored run, asked
// bottom-up (a PID a GPU driver lists) and recorded top-down (the process-tree collector's adoptions):
// nested children, processes outside the tree, unreadable entries, the root alone, PID reuse, and a
// descendant whose parent exited.
#include "collectors/linux/run_tree.hpp"

#include <gtest/gtest.h>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fixture_tree.hpp"

namespace runmon {
namespace {

// process-exit: 1000 (root) -> 1001, 1002 -> 1003. pid-reuse: 2000 -> 2001, and in t1 PID 2001 is an
// unrelated process (parent init, another start time).
class RunTreeTest : public ::testing::Test {
 protected:
  PidStat StatOf(const test::FixtureTree& tree, long pid) {
    auto stat = ParsePidStat(tree.Read("proc/" + std::to_string(pid) + "/stat"));
    EXPECT_TRUE(stat.ok()) << pid;
    return stat.ok() ? *stat : PidStat{};
  }
  // One tick of bottom-up questions.
  static bool AskOnce(RunTree& run, long pid) {
    run.BeginLookups();
    const bool member = run.Contains(pid);
    run.EndLookups();
    return member;
  }
};

TEST_F(RunTreeTest, NestedChildrenAreInTheRun) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, /*whole_tree=*/true);
  run.BeginLookups();
  EXPECT_TRUE(run.Contains(1003));  // a grandchild, through 1002
  EXPECT_TRUE(run.Contains(1002));
  EXPECT_TRUE(run.Contains(1001));
  EXPECT_TRUE(run.Contains(1000));
  run.EndLookups();
}

TEST_F(RunTreeTest, ProcessesOutsideTheTreeAreNot) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  tree.Write("proc/1/stat", test::PidStatLine(1, "init", 'S', 0, 0, 0, 1, 1));
  tree.Write("proc/5000/stat", test::PidStatLine(5000, "other", 'S', 1, 0, 0, 1, 100));
  tree.Write("proc/5001/stat", test::PidStatLine(5001, "other-child", 'S', 5000, 0, 0, 1, 100));
  RunTree run(tree.paths(), 1000, true);
  run.BeginLookups();
  EXPECT_FALSE(run.Contains(5001));
  EXPECT_FALSE(run.Contains(5000));
  EXPECT_FALSE(run.Contains(1));     // the root's parent
  EXPECT_FALSE(run.Contains(6000));  // no /proc entry
  EXPECT_TRUE(run.Contains(1003));
  run.EndLookups();
}

TEST_F(RunTreeTest, AProcessLoopIsNotInTheRun) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  tree.Write("proc/5000/stat", test::PidStatLine(5000, "a", 'S', 5001, 0, 0, 1, 100));
  tree.Write("proc/5001/stat", test::PidStatLine(5001, "b", 'S', 5000, 0, 0, 1, 100));
  RunTree run(tree.paths(), 1000, true);
  EXPECT_FALSE(AskOnce(run, 5000));
}

// An entry that cannot be read yet leaves the answer open: asked again next tick, it is read again.
TEST_F(RunTreeTest, AnUnreadableProcessIsDecidedAgain) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, true);
  EXPECT_FALSE(AskOnce(run, 1005));
  tree.Write("proc/1005/stat", test::PidStatLine(1005, "late", 'S', 1002, 0, 0, 1, 60100));
  EXPECT_TRUE(AskOnce(run, 1005));
}

// While a PID is asked about every tick its answer is kept (nothing is read); a tick without it forgets it.
TEST_F(RunTreeTest, AnswersAreKeptWhileAskedAndForgottenAfter) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, true);
  EXPECT_TRUE(AskOnce(run, 1003));
  tree.Write("proc/1003/stat", test::PidStatLine(1003, "helper", 'S', 1, 0, 0, 2, 60020));  // reparented
  EXPECT_TRUE(AskOnce(run, 1003)) << "the kept answer, without reading /proc";
  run.BeginLookups();
  run.EndLookups();  // a tick in which 1003 was not asked about
  EXPECT_FALSE(AskOnce(run, 1003));
}

TEST_F(RunTreeTest, AReusedPidIsLookedAtAfresh) {
  test::FixtureTree tree(test::HostFixture("pid-reuse"));
  RunTree run(tree.paths(), 2000, true);
  EXPECT_TRUE(AskOnce(run, 2001));
  tree.MirrorFrom(test::HostFixture("pid-reuse") / "t1");
  run.BeginLookups();
  run.EndLookups();  // 2001 left the driver's lists for a tick
  EXPECT_FALSE(AskOnce(run, 2001));
}

TEST_F(RunTreeTest, WithoutTheTreeOnlyTheRootIsInTheRun) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, /*whole_tree=*/false);
  run.BeginLookups();
  EXPECT_TRUE(run.Contains(1000));
  EXPECT_FALSE(run.Contains(1001));
  EXPECT_FALSE(run.Contains(1003));
  run.EndLookups();
  EXPECT_FALSE(run.Join(1001, StatOf(tree, 1001), 1000).ok());
}

TEST_F(RunTreeTest, NoMonitoredProcessMeansNothingIsInTheRun) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), std::nullopt, true);
  EXPECT_FALSE(run.watching());
  EXPECT_FALSE(AskOnce(run, 1000));
  EXPECT_FALSE(RunTree(tree.paths(), 0, true).watching());
}

TEST_F(RunTreeTest, JoinAdmitsTheRootAndChildrenOfMembers) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, true);
  EXPECT_FALSE(run.Join(1001, StatOf(tree, 1001), 0).ok()) << "only the root joins without a parent";
  EXPECT_FALSE(run.Join(1003, StatOf(tree, 1003), 1002).ok()) << "1002 is not a member yet";
  ASSERT_TRUE(run.Join(1000, StatOf(tree, 1000), 0).ok());
  ASSERT_TRUE(run.Join(1002, StatOf(tree, 1002), 1000).ok());
  EXPECT_TRUE(run.Join(1003, StatOf(tree, 1003), 1002).ok());
  const auto wrong_parent = run.Join(1001, StatOf(tree, 1001), 1002);
  ASSERT_FALSE(wrong_parent.ok());
  EXPECT_EQ(wrong_parent.error(), "no longer a child");
  tree.Write("proc/1001/stat", test::PidStatLine(1001, "short job", 'Z', 1000, 500, 500, 1, 60000));
  const auto zombie = run.Join(1001, StatOf(tree, 1001), 1000);
  ASSERT_FALSE(zombie.ok());
  EXPECT_EQ(zombie.error(), "exited");
}

TEST_F(RunTreeTest, AMemberIsRecognisedByItsStartTime) {
  test::FixtureTree tree(test::HostFixture("pid-reuse"));
  RunTree run(tree.paths(), 2000, true);
  ASSERT_TRUE(run.Join(2000, StatOf(tree, 2000), 0).ok());
  ASSERT_TRUE(run.Join(2001, StatOf(tree, 2001), 2000).ok());
  EXPECT_TRUE(run.Recognizes(2001, StatOf(tree, 2001)));
  tree.MirrorFrom(test::HostFixture("pid-reuse") / "t1");
  EXPECT_FALSE(run.Recognizes(2001, StatOf(tree, 2001))) << "PID 2001 now belongs to another process";
  EXPECT_FALSE(AskOnce(run, 2001)) << "bottom-up, the reused PID is not the member either";
  run.Leave(2000);
  EXPECT_FALSE(run.Recognizes(2000, StatOf(tree, 2000)));
}

// A descendant whose parent exited (reparented to init) is still the run's work: a recorded member ends
// the walk up, so both directions agree.
TEST_F(RunTreeTest, AReparentedMemberStaysInTheRun) {
  test::FixtureTree tree(test::HostFixture("process-exit"));
  RunTree run(tree.paths(), 1000, true);
  ASSERT_TRUE(run.Join(1000, StatOf(tree, 1000), 0).ok());
  ASSERT_TRUE(run.Join(1002, StatOf(tree, 1002), 1000).ok());
  tree.Write("proc/1002/stat", test::PidStatLine(1002, "worker", 'S', 1, 2000, 0, 1, 60010));
  EXPECT_TRUE(AskOnce(run, 1003));
  EXPECT_TRUE(AskOnce(run, 1002));
  RunTree unrecorded(tree.paths(), 1000, true);
  EXPECT_FALSE(AskOnce(unrecorded, 1003)) << "without the record, the chain ends at init";
}

}  // namespace
}  // namespace runmon
