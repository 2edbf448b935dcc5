// The header-only C++ API (include/runmon/log.hpp) against the real channel (user_metrics): rows from
// several threads at once, each thread's values in order; a summary; keys that need escaping; non-finite
// values as Python's words; a negative step dropped and counted; a socket nobody listens on dropping and
// counting without blocking; and nothing sent or raised outside `runmon run`. One process per case: the API
// keeps one connection a process (ctest runs each test alone).
#include <runmon/log.hpp>

#include <stdlib.h>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "user_metrics/metric_channel.hpp"

namespace {

using runmon::user_metrics::HistoryRow;
using runmon::user_metrics::MetricChannel;

struct Collected {
  std::mutex mutex;
  std::vector<HistoryRow> rows;
};

std::unique_ptr<MetricChannel> Serve(const std::filesystem::path& path, Collected& collected) {
  auto channel = MetricChannel::Open(path);
  EXPECT_TRUE(channel.ok());
  (*channel)->Start(
      [&collected](std::vector<HistoryRow>& rows) {
        std::lock_guard lock(collected.mutex);
        for (auto& row : rows) collected.rows.push_back(std::move(row));
      },
      [](const std::string&) {});
  return std::move(*channel);
}

TEST(LogApi, ThreadsLogAtOnceAndEveryRowArrives) {
  const runmon::test::TempDir dir("log_api_test");
  Collected collected;
  auto channel = Serve(dir.path() / "run.sock", collected);
  ::setenv("RUNMON_RUN_SOCKET", channel->path().c_str(), 1);
  constexpr int kThreads = 4;
  constexpr int kRows = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      const std::string key = "thread" + std::to_string(t);
      for (int i = 0; i < kRows; ++i) runmon::log({{key, static_cast<double>(i)}});
    });
  }
  for (auto& thread : threads) thread.join();
  runmon::log({{"quote\"key\\", 1.5}, {"nan", std::nan("")}, {"inf", -INFINITY}}, 100000);
  runmon::log({{"never", 1}}, -1);
  runmon::summary({{"best", 0.125}});
  ASSERT_TRUE(runmon::flush());
  EXPECT_EQ(runmon::dropped(), 1u);  // the negative step
  channel->Finish(std::chrono::seconds(5));
  std::lock_guard lock(collected.mutex);
  ASSERT_EQ(collected.rows.size(), static_cast<size_t>(kThreads * kRows + 1));
  std::map<std::string, int> next;
  for (size_t i = 0; i + 1 < collected.rows.size(); ++i) {
    const auto& item = collected.rows[i].items.at(0);
    EXPECT_EQ(item.value_json, std::to_string(next[item.key]++));
  }
  const HistoryRow& last = collected.rows.back();
  EXPECT_EQ(last.step, 100000);
  ASSERT_EQ(last.items.size(), 3u);
  EXPECT_EQ(last.items[0].key, "quote\"key\\");
  EXPECT_EQ(last.items[0].value_json, "1.5");
  EXPECT_EQ(last.items[1].value_json, "NaN");
  EXPECT_EQ(last.items[2].value_json, "-Infinity");
  bool best = false;
  for (const auto& item : channel->Summary())
    best = best || (item.key == "best" && item.value_json == "0.125");
  EXPECT_TRUE(best);
}

TEST(LogApi, ASocketNobodyListensOnDropsWithoutBlocking) {
  const runmon::test::TempDir dir("log_api_test");
  ::setenv("RUNMON_RUN_SOCKET", (dir.path() / "nobody.sock").c_str(), 1);
  for (int i = 0; i < 100; ++i) runmon::log({{"x", 1}});
  EXPECT_EQ(runmon::dropped(), 100u);
  EXPECT_TRUE(runmon::flush(std::chrono::milliseconds(10)));
}

TEST(LogApi, OutsideRunmonRunNothingIsSent) {
  ::unsetenv("RUNMON_RUN_SOCKET");
  runmon::log({{"x", 1}}, 3);
  runmon::summary({{"y", 2}});
  EXPECT_EQ(runmon::dropped(), 0u);  // nothing was to be sent
  EXPECT_TRUE(runmon::flush(std::chrono::milliseconds(10)));
}

}  // namespace
