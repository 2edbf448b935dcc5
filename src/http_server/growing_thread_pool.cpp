// The growing worker pool of runmon's HTTP servers. See growing_thread_pool.hpp.
#include "http_server/growing_thread_pool.hpp"

#include <system_error>
#include <utility>

namespace runmon::http_server {

GrowingThreadPool::GrowingThreadPool(ThreadPoolLimits limits, std::function<void()> on_shrunk,
                                     std::function<void()> on_shutdown)
    : limits_(limits), on_shrunk_(std::move(on_shrunk)), on_shutdown_(std::move(on_shutdown)) {}

GrowingThreadPool::~GrowingThreadPool() {
  shutdown();
}

size_t GrowingThreadPool::workers() const {
  std::lock_guard lock(mutex_);
  return running_.size();
}

void GrowingThreadPool::enqueue(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  JoinFinished(lock);
  tasks_.push_back(std::move(task));
  if (idle_ >= tasks_.size() || running_.size() >= limits_.max_workers) {
    work_ready_.notify_one();
    return;
  }
  StartWorkerLocked();
}

void GrowingThreadPool::StartWorkerLocked() {
  try {
    std::thread worker([this] { Work(std::this_thread::get_id()); });
    const std::thread::id id = worker.get_id();
    running_.emplace(id, std::move(worker));
  } catch (const std::system_error&) {
    // No thread to be had now: the task waits for a worker that finishes.
    work_ready_.notify_one();
  }
}

void GrowingThreadPool::Work(std::thread::id self) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (tasks_.empty() && !shutting_down_) {
      ++idle_;
      const bool woken =
          work_ready_.wait_for(lock, limits_.idle_exit, [this] { return !tasks_.empty() || shutting_down_; });
      --idle_;
      if (!woken && running_.size() > limits_.min_workers) break;
      continue;
    }
    if (tasks_.empty()) break;  // shutting down with nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // whatever the task held goes before the lock is taken again
    lock.lock();
  }
  // Leaving: the handle moves to finished_ for a later join; nothing of this object is touched after the
  // lock is released, except on_shrunk_, which the destructor outlives (it joins this thread).
  auto node = running_.extract(self);
  finished_.push_back(std::move(node.mapped()));
  const bool back_at_floor = !shutting_down_ && running_.size() == limits_.min_workers;
  worker_exited_.notify_all();
  lock.unlock();
  if (back_at_floor && on_shrunk_) on_shrunk_();
}

void GrowingThreadPool::JoinFinished(std::unique_lock<std::mutex>& lock) {
  if (finished_.empty()) return;
  std::vector<std::thread> done = std::move(finished_);
  finished_.clear();
  lock.unlock();
  for (auto& thread : done) thread.join();
  lock.lock();
}

void GrowingThreadPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_ && running_.empty() && finished_.empty()) return;
    shutting_down_ = true;
  }
  if (on_shutdown_) on_shutdown_();
  std::unique_lock lock(mutex_);
  work_ready_.notify_all();
  worker_exited_.wait(lock, [this] { return running_.empty(); });
  JoinFinished(lock);
}

}  // namespace runmon::http_server
