// The task queue of runmon's HTTP servers: cpp-httplib hands it one task per accepted connection, and a
// connection holds its worker until it closes. httplib's own ThreadPool has a fixed number of workers, so a
// few clients that connect and stall took every worker and queued everyone else behind them. This pool
// starts a worker whenever a task finds none idle, up to a cap (connections beyond the cap are turned away
// by the server before they reach it, see bounded_server.hpp); workers that stay idle for a while exit, down
// to a floor, and when the pool is back at its floor `on_shrunk` runs (the server returns freed memory to
// the system there). Should the system refuse a new thread, the task waits for the next free worker.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace runmon::http_server {

struct ThreadPoolLimits {
  size_t max_workers = 1024;
  size_t min_workers = 2;  // kept when idle
  std::chrono::milliseconds idle_exit{3000};
};

class GrowingThreadPool final : public httplib::TaskQueue {
 public:
  // `on_shrunk` runs on an exiting worker, outside the pool's lock; `on_shutdown` when shutdown begins
  // (before waiting for the tasks to end: it should make them end).
  GrowingThreadPool(ThreadPoolLimits limits, std::function<void()> on_shrunk,
                    std::function<void()> on_shutdown);
  ~GrowingThreadPool() override;
  GrowingThreadPool(const GrowingThreadPool&) = delete;
  GrowingThreadPool& operator=(const GrowingThreadPool&) = delete;

  void enqueue(std::function<void()> task) override;
  // Runs the queued tasks, waits for every task to end and joins every worker.
  void shutdown() override;

  size_t workers() const;

 private:
  void StartWorkerLocked();
  void Work(std::thread::id self);
  void JoinFinished(std::unique_lock<std::mutex>& lock);

  const ThreadPoolLimits limits_;
  const std::function<void()> on_shrunk_;
  const std::function<void()> on_shutdown_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable worker_exited_;
  std::deque<std::function<void()>> tasks_;
  std::map<std::thread::id, std::thread> running_;
  std::vector<std::thread> finished_;  // exited (or exiting) workers, joined later
  size_t idle_ = 0;
  bool shutting_down_ = false;
};

}  // namespace runmon::http_server
