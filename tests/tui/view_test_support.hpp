// The fixture the LeetView tests share (view_test.cpp, view_keys_test.cpp): runs built from records in
// memory with fixed values, a fixed clock, times in UTC, and golden frame paths.
#pragma once

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "support/golden.hpp"
#include "support/run_log_builder.hpp"
#include "tui/view.hpp"

namespace runmon::tui {

using test::RunLogBuilder;
constexpr double kStart = 1'780'000'000;  // 2026-05-28 20:26:40 UTC

inline void ExpectSameFrame(const std::string& actual, const std::string& expected) {
  EXPECT_TRUE(actual == expected) << test::FirstDifference(actual, expected);
}

inline std::filesystem::path Golden(const std::string& name) {
  return std::filesystem::path(RUNMON_FIXTURES_DIR) / "tui" / (name + ".txt");
}

class ViewTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }

  static runview::RunModel Ingest(const RunLogBuilder& builder) {
    runview::RunModel model;
    for (const auto& record : builder.records()) model.Ingest(record);
    return model;
  }

  // Two GPUs, CPU, memory, a disk, the network and an unknown vendor key, 120 samples a second apart.
  static RunLogBuilder TrainingRun(bool exited = true) {
    RunLogBuilder builder;
    builder.Header()
        .Run("r3snet50", "resnet-50", kStart, "vision", "gpu-node-1")
        .Environment("python train.py");
    for (int i = 0; i < 120; ++i) {
      const double t = i;
      const auto number = [](double value) { return std::to_string(std::round(value * 100) / 100); };
      builder.Stats(kStart + t, {{"cpu", number(40 + 30 * std::sin(t / 9))},
                                 {"proc.memory.rssMB", number(800 + 10 * t)},
                                 {"memory_percent", number(35 + t / 12)},
                                 {"disk.sda.in", number(t * 3)},
                                 {"disk.sda.out", number(t * 5)},
                                 {"network.sent", number(1e6 * t)},
                                 {"network.recv", number(2e6 * t)},
                                 {"gpu.0.gpu", number(50 + 45 * std::sin(t / 7))},
                                 {"gpu.1.gpu", number(50 + 45 * std::cos(t / 7))},
                                 {"gpu.0.memoryAllocatedBytes", number(8e9 + 5e7 * t)},
                                 {"gpu.1.memoryAllocatedBytes", number(6e9 + 4e7 * t)},
                                 {"gpu.0.temp", number(60 + t / 10)},
                                 {"gpu.1.temp", number(58 + t / 12)},
                                 {"gpu.0.powerWatts", number(200 + 100 * std::sin(t / 5))},
                                 {"gpu.1.powerWatts", number(190 + 90 * std::sin(t / 6))},
                                 {"vendor.widget.0", number(t)},
                                 {"vendor.widget.1", number(120 - t)}});
    }
    if (exited) builder.Exit(0, 120);
    return builder;
  }

  static ViewModel SingleRun(const runview::RunModel& model,
                             runview::RunState state = runview::RunState::kFinished) {
    ViewModel view_model;
    view_model.mode = LeetMode::kSingleRun;
    view_model.location = "wandb/run-20260528_202640-r3snet50/run-r3snet50.wandb";
    view_model.chart_runs = {&model};
    view_model.chart_run_labels = {model.overview().name};
    view_model.overview_run = &model;
    view_model.overview_state = state;
    view_model.now_seconds = kStart + 200;
    return view_model;
  }

  static void Press(LeetView& view, std::string_view keys) {
    for (const char c : keys) view.Handle(CharacterEvent(static_cast<char32_t>(c)));
  }
};

}  // namespace runmon::tui
