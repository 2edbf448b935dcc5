// The growing worker pool: as many tasks run at once as are queued (up to the cap), the cap holds, idle
// workers exit down to the floor (then the shrink callback runs), and shutdown runs what is queued.
#include "http_server/growing_thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "support/wait_until.hpp"

namespace runmon::http_server {
namespace {

using namespace std::chrono_literals;

using runmon::testing::WaitUntil;

// Tasks that block until released, counting how many run at once.
struct BlockingTasks {
  std::atomic<int> running{0};
  std::atomic<int> finished{0};
  std::atomic<bool> release{false};
  std::function<void()> Task() {
    return [this] {
      ++running;
      while (!release) std::this_thread::sleep_for(1ms);
      --running;
      ++finished;
    };
  }
};

TEST(GrowingThreadPool, GrowsToRunEveryBlockedTaskAtOnce) {
  BlockingTasks tasks;  // outlives the pool, whose workers run its tasks
  GrowingThreadPool pool({.max_workers = 300, .min_workers = 2, .idle_exit = 200ms}, nullptr, nullptr);
  for (int i = 0; i < 200; ++i) pool.enqueue(tasks.Task());
  EXPECT_TRUE(WaitUntil([&] { return tasks.running == 200; }, 10s)) << tasks.running;
  EXPECT_EQ(pool.workers(), 200u);
  tasks.release = true;
  EXPECT_TRUE(WaitUntil([&] { return tasks.finished == 200; }, 10s));
}

TEST(GrowingThreadPool, NoMoreWorkersThanTheCap) {
  BlockingTasks tasks;
  GrowingThreadPool pool({.max_workers = 4, .min_workers = 1, .idle_exit = 200ms}, nullptr, nullptr);
  for (int i = 0; i < 10; ++i) pool.enqueue(tasks.Task());
  EXPECT_TRUE(WaitUntil([&] { return tasks.running == 4; }, 10s));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(tasks.running, 4);
  EXPECT_EQ(pool.workers(), 4u);
  tasks.release = true;
  EXPECT_TRUE(WaitUntil([&] { return tasks.finished == 10; }, 10s));
}

TEST(GrowingThreadPool, IdleWorkersExitDownToTheFloor) {
  std::atomic<int> shrunk{0};
  BlockingTasks tasks;
  GrowingThreadPool pool(
      {.max_workers = 100, .min_workers = 3, .idle_exit = 200ms}, [&] { ++shrunk; }, nullptr);
  for (int i = 0; i < 50; ++i) pool.enqueue(tasks.Task());
  ASSERT_TRUE(WaitUntil([&] { return tasks.running == 50; }, 10s));
  tasks.release = true;
  EXPECT_TRUE(WaitUntil([&] { return pool.workers() == 3; }, 10s)) << pool.workers();
  EXPECT_TRUE(WaitUntil([&] { return shrunk == 1; }, 10s));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(pool.workers(), 3u);  // the floor stays
  // And it grows again.
  tasks.release = false;
  for (int i = 0; i < 20; ++i) pool.enqueue(tasks.Task());
  EXPECT_TRUE(WaitUntil([&] { return tasks.running == 20; }, 10s));
  tasks.release = true;
}

TEST(GrowingThreadPool, ShutdownRunsWhatIsQueuedAndCallsBack) {
  std::atomic<int> done{0};
  std::atomic<int> shutdowns{0};
  {
    GrowingThreadPool pool({.max_workers = 2, .min_workers = 1, .idle_exit = 1s}, nullptr,
                           [&] { ++shutdowns; });
    for (int i = 0; i < 20; ++i)
      pool.enqueue([&] {
        std::this_thread::sleep_for(1ms);
        ++done;
      });
    pool.shutdown();
    EXPECT_EQ(done, 20);
    EXPECT_EQ(pool.workers(), 0u);
  }
  EXPECT_EQ(shutdowns, 1);
}

}  // namespace
}  // namespace runmon::http_server
