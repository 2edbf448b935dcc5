// leet's charts of a run loaded through its summary index: a chart whose window covers few segments (zoomed,
// or a short run) is drawn from the samples read back from the log (runview::DetailReader), so it is the
// frame a full read of the run draws; without them it would be drawn from the summaries' few points per
// segment.
#include <chrono>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "runview/run_loader.hpp"
#include "support/temp_dir.hpp"
#include "view_test_support.hpp"

namespace runmon::tui {
namespace {

runview::RunModel Load(const std::filesystem::path& log, uint64_t min_log_bytes) {
  runview::IndexedLoadOptions options;
  options.min_log_bytes = min_log_bytes;
  auto loader = runview::RunLoader::Open(log, options);
  EXPECT_TRUE(loader.ok());
  runview::RunModel model;
  if (!loader.ok()) return model;
  while (!(*loader)->Read(model, std::chrono::seconds(1))) {
  }
  return model;
}

class ViewZoomDetailTest : public ViewTest {};

TEST_F(ViewZoomDetailTest, AZoomedChartOfAnIndexedRunIsDrawnFromEverySample) {
  test::TempDir dir("leet-zoom");
  const auto log = dir.path() / "run-zoom.wandb";
  RunLogBuilder builder;
  builder.Header().Run("zoom", "zoom", kStart, "vision", "gpu-node-1").Environment("python train.py");
  for (int i = 0; i < 20000; ++i) {
    const double t = i;
    const auto number = [](double value) { return std::to_string(std::round(value * 100) / 100); };
    builder.Stats(kStart + t, {{"cpu", number(40 + 30 * std::sin(t / 9))},
                               {"memory_percent", number(35 + std::fmod(t, 37))},
                               {"gpu.0.gpu", number(50 + 45 * std::sin(t / 7))},
                               {"gpu.1.gpu", number(50 + 45 * std::cos(t / 3))},
                               {"gpu.0.powerWatts", number(200 + 100 * std::sin(t / 5))},
                               {"gpu.1.powerWatts", number(190 + 90 * std::sin(t / 2))},
                               {"gpu.0.temp", number(60 + std::fmod(t, 11))},
                               {"gpu.1.temp", number(58 + std::fmod(t, 13))}});
  }
  builder.Exit(0, 20000);
  builder.WriteTo(log);
  const runview::RunModel full = Load(log, UINT64_MAX);
  const runview::RunModel indexed = Load(log, 0);
  ASSERT_EQ(full.detail(), nullptr);
  ASSERT_NE(indexed.detail(), nullptr);
  ASSERT_TRUE(indexed.summary_end_x().has_value());
  ASSERT_LT(*indexed.summary_end_x(), 19900.0);  // a tail read in full, the rest summarised

  LeetView full_view;
  LeetView indexed_view;
  const std::string full_whole = full_view.Render(SingleRun(full), 160, 48).ToString();
  // A run of few segments is drawn from its samples whole too.
  ExpectSameFrame(indexed_view.Render(SingleRun(indexed), 160, 48).ToString(), full_whole);
  // Zoomed to the last ~4,300 s: several summarised segments and the tail.
  Press(full_view, "+++");
  Press(indexed_view, "+++");
  const std::string full_zoomed = full_view.Render(SingleRun(full), 160, 48).ToString();
  EXPECT_NE(full_zoomed, full_whole);
  ExpectSameFrame(indexed_view.Render(SingleRun(indexed), 160, 48).ToString(), full_zoomed);

  // The same model without its detail reader draws the zoom from the summaries: another picture.
  runview::RunModel summaries_only = indexed;
  summaries_only.set_detail(nullptr);
  LeetView coarse_view;
  coarse_view.Render(SingleRun(summaries_only), 160, 48);
  Press(coarse_view, "+++");
  EXPECT_NE(coarse_view.Render(SingleRun(summaries_only), 160, 48).ToString(), full_zoomed);
}

}  // namespace
}  // namespace runmon::tui
