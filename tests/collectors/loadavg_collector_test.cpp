// The system load family on a fixture tree: /proc/loadavg's three averages as system.load1/5/15, a damaged
// file as the tick's error with nothing written, a missing one as nothing at all, and the parser's refusals.
#include <fstream>

#include <gtest/gtest.h>

#include "collectors/builtin.hpp"
#include "collectors/linux/loadavg/loadavg_metrics.hpp"
#include "collectors/linux/loadavg/loadavg_parse.hpp"
#include "support/temp_dir.hpp"

namespace runmon {
namespace {

using namespace loadavg_metrics;

const CollectorFamily& Loadavg() {
  for (const CollectorFamily* family : CollectorFamilies()) {
    if (family->name == "loadavg") return *family;
  }
  ADD_FAILURE() << "no loadavg family";
  return *CollectorFamilies().front();
}

class LoadavgTree {
 public:
  LoadavgTree() { std::filesystem::create_directories(dir_.path() / "proc"); }
  void Write(std::string_view text) { std::ofstream(dir_.path() / "proc" / "loadavg") << text; }
  CollectorContext Context() const {
    CollectorContext ctx;
    ctx.paths = HostPaths::Under(dir_.path());
    return ctx;
  }

 private:
  test::TempDir dir_;
};

TEST(LoadavgFamily, ThreeAveragesFromTheFile) {
  LoadavgTree tree;
  tree.Write("0.52 1.58 12.09 2/345 6789\n");
  FamilyStart started = Loadavg().start(tree.Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  MetricBatch batch;
  ASSERT_TRUE(started.collectors[0]->Collect(Tick{}, batch).ok());
  ASSERT_EQ(batch.items().size(), 3u);
  EXPECT_DOUBLE_EQ(batch.Find(MetricKey(kLoad1))->value, 0.52);
  EXPECT_DOUBLE_EQ(batch.Find(MetricKey(kLoad5))->value, 1.58);
  EXPECT_DOUBLE_EQ(batch.Find(MetricKey(kLoad15))->value, 12.09);
  // The file is read again on every tick.
  tree.Write("3.00 2.00 1.00 1/300 7000\n");
  MetricBatch next;
  ASSERT_TRUE(started.collectors[0]->Collect(Tick{}, next).ok());
  EXPECT_DOUBLE_EQ(next.Find(MetricKey(kLoad1))->value, 3.0);
}

TEST(LoadavgFamily, DamagedOrMissingFileWritesNothing) {
  LoadavgTree tree;
  FamilyStart started = Loadavg().start(tree.Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  MetricBatch missing;  // not on this host: no values and nothing to report
  EXPECT_TRUE(started.collectors[0]->Collect(Tick{}, missing).ok());
  EXPECT_TRUE(missing.empty());
  tree.Write("0.52 garbage\n");
  MetricBatch damaged;
  const Status status = started.collectors[0]->Collect(Tick{}, damaged);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().find("loadavg"), std::string::npos) << status.error();
  EXPECT_TRUE(damaged.empty());
}

TEST(ParseLoadAverages, RefusesWhatTheKernelNeverWrites) {
  ASSERT_TRUE(ParseLoadAverages("0.00 0.01 0.05 1/123 4567\n").ok());
  EXPECT_DOUBLE_EQ(ParseLoadAverages("0.00 0.01 0.05")->fifteen, 0.05);
  for (const char* bad : {"", "0.00 0.01", "-1.00 0.01 0.05", "+1.00 0.01 0.05", "1e3 0.01 0.05",
                          "nan 0.01 0.05", "1.0 0.01 0.05", "1.000 0.01 0.05", ".50 0.01 0.05",
                          "1.-5 0.01 0.05", "99999999999999.00 0.01 0.05"}) {
    EXPECT_FALSE(ParseLoadAverages(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace runmon
