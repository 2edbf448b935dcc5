// The network collector: network.sent / network.recv are bytes since the first sample over all interfaces
// (loopback included), built from positive per-interface deltas so they never go backwards when an
// interface disappears or its counters reset; rates over the interval from the injected monotonic clock.
#include <gtest/gtest.h>

#include <initializer_list>
#include <sstream>
#include <tuple>

#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::FixtureTree;

// /proc/net/dev text with (name, rx_bytes, tx_bytes) rows.
std::string NetDev(std::initializer_list<std::tuple<const char*, uint64_t, uint64_t>> rows) {
  std::ostringstream text;
  text << "Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
          "colls "
          "carrier compressed\n";
  for (const auto& [name, rx, tx] : rows) {
    text << "  " << name << ": " << rx << " 10 0 0 0 0 0 0 " << tx << " 10 0 0 0 0 0 0\n";
  }
  return text.str();
}

TEST(NetworkCollector, TotalsSinceFirstSampleAndRates) {
  FixtureTree tree;
  tree.Write("proc/net/dev", NetDev({{"lo", 1000, 1000}, {"eth0", 5000, 3000}, {"veth1", 100, 200}}));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));

  const auto first = test::CollectTick(*collector, 0);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  EXPECT_DOUBLE_EQ(first["network.sent"], 0.0);
  EXPECT_DOUBLE_EQ(first["network.recv"], 0.0);
  EXPECT_FALSE(first.Has("network.sentBytesPerSec"));  // no interval yet

  // +500/+500 on lo, +3000 rx / +1000 tx on eth0, +50 rx / +100 tx on veth1, over 2 s.
  tree.Write("proc/net/dev", NetDev({{"lo", 1500, 1500}, {"eth0", 8000, 4000}, {"veth1", 150, 300}}));
  clocks.Advance(2);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["network.recv"], 3550.0);
  EXPECT_DOUBLE_EQ(second["network.sent"], 1600.0);
  EXPECT_DOUBLE_EQ(second["network.recvBytesPerSec"], 1775.0);
  EXPECT_DOUBLE_EQ(second["network.sentBytesPerSec"], 800.0);

  // veth1 disappears (the container's interface went away): totals keep what it contributed.
  tree.Write("proc/net/dev", NetDev({{"lo", 1500, 1500}, {"eth0", 9000, 4500}}));
  clocks.Advance(1);
  const auto third = test::CollectTick(*collector, 2);
  EXPECT_DOUBLE_EQ(third["network.recv"], 4550.0);
  EXPECT_DOUBLE_EQ(third["network.sent"], 2100.0);
  EXPECT_DOUBLE_EQ(third["network.recvBytesPerSec"], 1000.0);
  EXPECT_DOUBLE_EQ(third["network.sentBytesPerSec"], 500.0);

  // veth1 comes back with restarted counters and a new interface appears: both count from zero.
  tree.Write("proc/net/dev",
             NetDev({{"lo", 1500, 1500}, {"eth0", 9000, 4500}, {"veth1", 40, 60}, {"wg0", 70, 80}}));
  clocks.Advance(1);
  const auto fourth = test::CollectTick(*collector, 3);
  EXPECT_DOUBLE_EQ(fourth["network.recv"], 4550.0 + 40 + 70);
  EXPECT_DOUBLE_EQ(fourth["network.sent"], 2100.0 + 60 + 80);

  // eth0's counters reset (driver reload): the new value is this interval's traffic; totals never drop.
  tree.Write("proc/net/dev",
             NetDev({{"lo", 1500, 1500}, {"eth0", 10, 20}, {"veth1", 40, 60}, {"wg0", 70, 80}}));
  clocks.Advance(1);
  const auto fifth = test::CollectTick(*collector, 4);
  EXPECT_DOUBLE_EQ(fifth["network.recv"], 4660.0 + 10);
  EXPECT_DOUBLE_EQ(fifth["network.sent"], 2240.0 + 20);
  EXPECT_GE(fifth["network.recv"], fourth["network.recv"]);
}

TEST(NetworkCollector, MalformedNetDevIsAnError) {
  FixtureTree tree;
  tree.Write("proc/net/dev", "Inter-|\n face |\n  eth0: 12 34\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  const auto bad = test::CollectTick(*collector, 0);
  EXPECT_FALSE(bad.status.ok());
  EXPECT_TRUE(bad.batch.empty());
}

TEST(NetworkCollector, CapturedVmIdleNetwork) {
  // The capture's two readings have identical /proc/net/dev (no traffic in 2.96 s).
  FixtureTree tree(test::HostFixture("debian12-vm"));
  test::FakeClocks clocks(837.37, 837.37);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), 7953, clocks));
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.MirrorFrom(test::HostFixture("debian12-vm") / "t1");
  clocks.Set(840.33, 840.33);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["network.sent"], 0.0);
  EXPECT_DOUBLE_EQ(second["network.recv"], 0.0);
  EXPECT_DOUBLE_EQ(second["network.sentBytesPerSec"], 0.0);
  EXPECT_DOUBLE_EQ(second["network.recvBytesPerSec"], 0.0);
}

TEST(NetworkCollector, NoInterfaceListedIsNoMeasurement) {
  // A net/dev with its headers only (or nothing at all) measured nothing: no 0-byte totals.
  FixtureTree tree;
  tree.Write("proc/net/dev", NetDev({}));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  for (const std::string& text : {NetDev({}), std::string()}) {
    tree.Write("proc/net/dev", text);
    const auto empty = test::CollectTick(*collector, 0);
    EXPECT_FALSE(empty.status.ok());
    EXPECT_NE(empty.status.error().find(tree.Path("proc/net/dev").string() + ": no interfaces"),
              std::string::npos)
        << empty.status.error();
    EXPECT_TRUE(empty.batch.empty()) << empty.Keys().front();
  }
}

TEST(NetworkCollector, ParseErrorNamesTheFileRead) {
  FixtureTree tree;
  tree.Write("proc/net/dev", "Inter-|\n face |\n  eth0: 12 34\n");
  test::FakeClocks clocks(100, 100);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  EXPECT_EQ(test::CollectTick(*collector, 0).status.error(),
            tree.Path("proc/net/dev").string() + ": truncated line for 'eth0'");
}

TEST(NetworkCollector, InterfaceListedTwiceCountsOnce) {
  FixtureTree tree;
  tree.Write("proc/net/dev", NetDev({{"eth0", 1000, 500}, {"eth0", 7000, 9000}}));
  test::FakeClocks clocks(100, 100);
  auto collector = MakeNetworkCollector(test::FixtureContext(tree.paths(), std::nullopt, clocks));
  ASSERT_TRUE(test::CollectTick(*collector, 0).status.ok());
  tree.Write("proc/net/dev", NetDev({{"eth0", 2000, 1500}, {"eth0", 7000, 9000}}));
  clocks.Advance(1);
  const auto second = test::CollectTick(*collector, 1);
  EXPECT_DOUBLE_EQ(second["network.recv"], 1000.0);
  EXPECT_DOUBLE_EQ(second["network.sent"], 1000.0);
}

}  // namespace
}  // namespace runmon
