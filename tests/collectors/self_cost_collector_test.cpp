// The monitor's own cost: runmon.rssMB from proc/self/statm (resident pages x the page size) and
// runmon.cpuPercent (getrusage over the injected monotonic clock, from the second tick on). A statm that
// is missing or malformed leaves runmon.rssMB out, never 0, with an error naming the file read.
#include <gtest/gtest.h>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

TEST(SelfCostCollector, ResidentPagesAndCpuFromTheSecondTick) {
  FixtureTree tree;
  tree.Write("proc/self/statm", "12000 1024 300 10 0 900 0\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeSelfCostCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["runmon.rssMB"], 4.0);  // 1024 pages of 4 KiB
  EXPECT_FALSE(first.Has("runmon.cpuPercent"));
  clocks.Advance(1);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_GE(second["runmon.cpuPercent"], 0.0);
}

TEST(SelfCostCollector, MissingOrMalformedStatmLeavesRssOut) {
  FixtureTree tree;
  tree.Mkdir("proc/self");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeSelfCostCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  const auto missing = test::CollectTick(*collector, 0);
  EXPECT_NE(missing.status.error().find(tree.Path("proc/self/statm").string()), std::string::npos)
      << missing.status.error();
  EXPECT_TRUE(missing.batch.empty()) << missing.Keys().front();
  tree.Write("proc/self/statm", "12000\n");
  clocks.Advance(1);
  const auto malformed = test::CollectTick(*collector, 1);
  EXPECT_TRUE(malformed.status.error().starts_with(tree.Path("proc/self/statm").string() + ": "))
      << malformed.status.error();
  EXPECT_FALSE(malformed.Has("runmon.rssMB"));
  EXPECT_TRUE(malformed.Has("runmon.cpuPercent"));  // getrusage does not depend on the file
}

}  // namespace
}  // namespace runmon
