// Lanes, ticks, deadlines and backoff (see sampler.hpp). All coordination goes through one mutex in a
// shared block that lane threads co-own, so a lane stuck in a driver call can be detached at shutdown
// without leaving it pointing at freed memory.
#include "sampler/sampler.hpp"

#include <semaphore.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <cmath>
#include <exception>
#include <map>
#include <thread>

#include <fmt/format.h>

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

// A POSIX semaphore: posting makes a system call only when a thread is waiting, and waiting makes one
// only when nothing was posted. Condition variables cost three or four more futex calls per hand-off
// (the mutex a woken waiter re-takes is marked contended), which on a virtual machine is a visible part of
// a sample's cost.
class Semaphore {
 public:
  Semaphore() { ::sem_init(&sem_, 0, 0); }
  ~Semaphore() { ::sem_destroy(&sem_); }
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  void Post() { ::sem_post(&sem_); }
  void Wait() {
    while (::sem_wait(&sem_) != 0 && errno == EINTR) {
    }
  }
  // False when the deadline passed first.
  bool WaitUntil(Clock::time_point deadline) {
    const auto since_epoch = deadline.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    timespec when{};
    when.tv_sec = static_cast<time_t>(seconds.count());
    when.tv_nsec = static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
    for (;;) {
      if (::sem_clockwait(&sem_, CLOCK_MONOTONIC, &when) == 0) return true;
      if (errno != EINTR) return false;
    }
  }

 private:
  sem_t sem_{};
};

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string_view CollectorHealthName(CollectorHealth health) {
  switch (health) {
    case CollectorHealth::kOk:
      return "ok";
    case CollectorHealth::kDegraded:
      return "degraded";
    case CollectorHealth::kFailing:
      return "failing";
    case CollectorHealth::kHung:
      return "hung";
  }
  return "ok";
}

struct Sampler::Shared {
  mutable std::mutex mutex;
  Semaphore lane_done;  // posted whenever a lane finishes a tick
  Semaphore wake;       // posted once by Stop()
  bool stop = false;
  Logger log;
};

struct Sampler::LaneEntry {
  std::unique_ptr<Collector> collector;
  CollectorState state;
  uint64_t retry_at_tick = 0;
  Lane* owner = nullptr;  // guarded by shared->mutex: the lane that runs it now
};

struct Sampler::Lane {
  using Entry = LaneEntry;
  struct Done {
    Tick tick;
    MetricBatch batch;
  };

  std::string name;
  std::vector<std::shared_ptr<Entry>> entries;  // guarded by shared->mutex
  std::shared_ptr<Shared> shared;
  Semaphore work;               // posted for each pending tick and for quit
  std::optional<Tick> pending;  // guarded by shared->mutex
  bool busy = false;
  bool quit = false;
  bool reported_hung = false;
  Entry* running = nullptr;  // the entry inside Collect; guarded by shared->mutex
  Clock::time_point busy_since;
  std::vector<Done> done;
  uint64_t max_backoff_ticks = 1;
  std::thread thread;

  void Start(const std::shared_ptr<Lane>& self) {
    thread = std::thread([self] { self->Loop(); });
  }

  void Loop() {
    std::unique_lock lock(shared->mutex, std::defer_lock);
    for (;;) {
      work.Wait();
      lock.lock();
      if (quit) return;
      if (!pending) {
        lock.unlock();
        continue;
      }
      const Tick tick = *pending;
      pending.reset();
      const auto list = entries;  // a lane split during this pass must not change what is iterated
      lock.unlock();
      MetricBatch batch;
      RunCollectors(tick, list, batch);
      lock.lock();
      done.push_back({tick, std::move(batch)});
      busy = false;
      if (reported_hung) {
        reported_hung = false;
        if (shared->log) shared->log(fmt::format("lane {} returned after being hung", name));
      }
      lock.unlock();
      shared->lane_done.Post();
    }
  }

  void RunCollectors(const Tick& tick, const std::vector<std::shared_ptr<Entry>>& list, MetricBatch& batch) {
    for (const auto& shared_entry : list) {
      Entry& entry = *shared_entry;
      {
        std::lock_guard guard(shared->mutex);
        // Moved to another lane while this one was stuck: that lane runs it now.
        if (entry.owner != this) continue;
        if (!tick.final && tick.index < entry.retry_at_tick) continue;
        running = &entry;
      }
      const size_t before = batch.items().size();
      const auto started = Clock::now();
      std::optional<std::string> error;
      try {
        auto status = entry.collector->Collect(tick, batch);
        if (!status) error = status.error();
      } catch (const std::exception& e) {
        error = fmt::format("unexpected exception: {}", e.what());
      } catch (...) {
        error = "unexpected exception";
      }
      const double millis = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
      const bool produced = batch.items().size() > before;
      std::lock_guard guard(shared->mutex);
      running = nullptr;
      UpdateState(entry, tick, error, produced, millis);
    }
  }

  // Called with the mutex held.
  void UpdateState(Entry& entry, const Tick& tick, const std::optional<std::string>& error, bool produced,
                   double millis) {
    CollectorState& state = entry.state;
    const CollectorHealth previous = state.health;
    state.last_millis = millis;
    std::string message;
    if (!error) {
      state.health = CollectorHealth::kOk;
      state.message.clear();
      state.consecutive_failures = 0;
      ++state.collections;
      if (previous != CollectorHealth::kOk) message = fmt::format("collector {} recovered", state.name);
    } else if (produced) {
      ++state.collections;
      state.consecutive_failures = 0;
      if (previous != CollectorHealth::kDegraded || state.message != *error) {
        message = fmt::format("collector {}: {}", state.name, *error);
      }
      state.health = CollectorHealth::kDegraded;
      state.message = *error;
    } else {
      ++state.consecutive_failures;
      const uint64_t backoff =
          std::min<uint64_t>(uint64_t{1} << std::min(state.consecutive_failures - 1, 20u), max_backoff_ticks);
      entry.retry_at_tick = tick.index + backoff;
      if (previous != CollectorHealth::kFailing || state.message != *error) {
        message = fmt::format("collector {} failed: {} (retrying with backoff)", state.name, *error);
      }
      state.health = CollectorHealth::kFailing;
      state.message = *error;
    }
    if (!message.empty() && shared->log) shared->log(message);
  }
};

Sampler::Sampler(std::vector<CollectorSpec> collectors, SamplerOptions options, Sink sink, Logger log)
    : options_(options), sink_(std::move(sink)), shared_(std::make_shared<Shared>()) {
  shared_->log = std::move(log);
  const uint64_t max_backoff_ticks =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(options_.max_backoff_seconds /
                                                            std::max(options_.interval_seconds, 1e-3))));
  std::map<std::string, std::shared_ptr<Lane>> by_name;
  for (auto& spec : collectors) {
    auto& lane = by_name[spec.lane];
    if (!lane) {
      lane = std::make_shared<Lane>();
      lane->name = spec.lane;
      lane->shared = shared_;
      lane->max_backoff_ticks = max_backoff_ticks;
      lanes_.push_back(lane);
    }
    auto entry = std::make_shared<Lane::Entry>();
    entry->state.name = std::string(spec.collector->Name());
    entry->state.lane = spec.lane;
    entry->collector = std::move(spec.collector);
    entry->owner = lane.get();
    lane->entries.push_back(std::move(entry));
  }
  for (auto& lane : lanes_) lane->Start(lane);
}

Sampler::~Sampler() {
  std::vector<std::shared_ptr<Lane>> hung;
  {
    std::lock_guard guard(shared_->mutex);
    for (auto& lane : lanes_) {
      lane->quit = true;
      lane->work.Post();
    }
  }
  for (auto& lane : lanes_) {
    bool busy;
    {
      std::lock_guard guard(shared_->mutex);
      busy = lane->busy;
    }
    // A lane stuck in a call cannot be interrupted; it owns its state and ends with the process.
    if (busy) {
      lane->thread.detach();
    } else {
      lane->thread.join();
    }
  }
}

void Sampler::Stop() {
  std::lock_guard guard(shared_->mutex);
  if (shared_->stop) return;
  shared_->stop = true;
  shared_->wake.Post();
}

std::vector<CollectorState> Sampler::States() const {
  std::lock_guard guard(shared_->mutex);
  std::vector<CollectorState> states;
  for (const auto& lane : lanes_) {
    for (const auto& entry : lane->entries) states.push_back(entry->state);
  }
  return states;
}

double Sampler::LaneTimeoutSeconds() const {
  if (options_.lane_timeout_seconds) return *options_.lane_timeout_seconds;
  return std::min(options_.interval_seconds * 0.5, 5.0);
}

void Sampler::DrainLate(std::vector<Sample>& late) {
  // Called with the mutex held: results of earlier ticks that arrived after their deadline.
  for (auto& lane : lanes_) {
    for (auto it = lane->done.begin(); it != lane->done.end();) {
      Sample sample;
      sample.timestamp = it->tick.wall_seconds;
      sample.runtime = std::chrono::duration<double>(it->tick.monotonic - start_).count();
      sample.late = true;
      sample.metrics = std::move(it->batch);
      if (!sample.metrics.empty()) late.push_back(std::move(sample));
      it = lane->done.erase(it);
    }
  }
}

void Sampler::Trigger(Lane& lane, const Tick& tick, Clock::time_point started) {
  lane.busy = true;
  lane.busy_since = started;
  lane.pending = tick;
}

std::shared_ptr<Sampler::Lane> Sampler::SplitOff(Lane& stuck_lane, Lane::Entry& stuck) {
  // The stuck collector keeps its thread; every other collector of its lane moves to a new lane, so one
  // hung call delays nothing else for more than one deadline.
  auto lane = std::make_shared<Lane>();
  lane->name = fmt::format("{}~{}", stuck_lane.name, ++lanes_split_);
  lane->shared = shared_;
  lane->max_backoff_ticks = stuck_lane.max_backoff_ticks;
  std::vector<std::shared_ptr<Lane::Entry>> keep;
  for (auto& entry : stuck_lane.entries) {
    if (entry.get() == &stuck) {
      keep.push_back(entry);
    } else {
      entry->owner = lane.get();
      entry->state.lane = lane->name;
      lane->entries.push_back(entry);
    }
  }
  stuck_lane.entries = std::move(keep);
  if (shared_->log) {
    shared_->log(fmt::format("collector {} is stuck in lane {}; its other collectors continue in lane {}",
                             stuck.state.name, stuck_lane.name, lane->name));
  }
  return lane;
}

void Sampler::EmitTick(const Tick& tick, Clock::time_point started) {
  std::vector<Sample> late;
  Sample sample;
  sample.timestamp = tick.wall_seconds;
  sample.runtime = std::chrono::duration<double>(started - start_).count();
  {
    std::unique_lock lock(shared_->mutex);
    DrainLate(late);
    std::vector<Lane*> waiting;
    std::vector<std::shared_ptr<Lane>> split_off;
    for (auto& lane : lanes_) {
      if (lane->busy) {
        if (!lane->reported_hung) {
          lane->reported_hung = true;
          const double seconds = std::chrono::duration<double>(started - lane->busy_since).count();
          if (shared_->log) {
            shared_->log(fmt::format("lane {} has not returned for {:.1f} s; skipping it until it does",
                                     lane->name, seconds));
          }
        }
        if (Lane::Entry* stuck = lane->running) {
          stuck->state.health = CollectorHealth::kHung;
          stuck->state.message =
              fmt::format("has not returned for {:.1f} s",
                          std::chrono::duration<double>(started - lane->busy_since).count());
          if (lane->entries.size() > 1) split_off.push_back(SplitOff(*lane, *stuck));
        }
        continue;
      }
      Trigger(*lane, tick, started);
      waiting.push_back(lane.get());
    }
    for (auto& lane : split_off) {
      lanes_.push_back(lane);
      lane->Start(lane);
      Trigger(*lane, tick, started);
      waiting.push_back(lane.get());
    }
    lock.unlock();
    for (Lane* lane : waiting) lane->work.Post();
    const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(LaneTimeoutSeconds()));
    // lane_done is posted once per finished pass, also by lanes finishing earlier (late) ticks, so each
    // post is a reason to look again, not a count of this tick's lanes.
    for (;;) {
      lock.lock();
      const bool all_done =
          std::all_of(waiting.begin(), waiting.end(), [](Lane* lane) { return !lane->busy; });
      lock.unlock();
      if (all_done || !shared_->lane_done.WaitUntil(deadline)) break;
    }
    lock.lock();
    // Merge in lane order what arrived for this tick.
    for (auto& lane : lanes_) {
      for (auto it = lane->done.begin(); it != lane->done.end();) {
        if (it->tick.index == tick.index && it->tick.final == tick.final) {
          for (auto& metric : it->batch.items()) sample.metrics.Add(std::move(metric.key), metric.value);
          it = lane->done.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  sample.metrics.Add("runmon.sampleMillis",
                     std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  for (const auto& l : late) sink_(l);
  sink_(sample);
  ++emitted_;
}

void Sampler::Run() {
  start_ = Clock::now();
  start_wall_ = WallNow();
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.interval_seconds));
  uint64_t index = 0;
  for (;;) {
    const auto due = start_ + interval * static_cast<Clock::rep>(index);
    // Sleeps until the tick is due; Stop() wakes it early (its post is never consumed elsewhere, so once
    // stopped every later wait returns at once).
    bool stopping = shared_->wake.WaitUntil(due);
    if (stopping) shared_->wake.Post();
    {
      std::lock_guard guard(shared_->mutex);
      stopping = shared_->stop;
    }
    const auto started = Clock::now();
    Tick tick{stopping ? started : due, WallNow(), index, stopping};
    EmitTick(tick, started);
    if (stopping) break;
    if (options_.max_samples && emitted_ >= *options_.max_samples) break;
    // Next tick on the original grid; skip the ones already missed.
    const auto now = Clock::now();
    ++index;
    if (start_ + interval * static_cast<Clock::rep>(index) < now) {
      index = static_cast<uint64_t>((now - start_) / interval) + 1;
    }
  }
  // Late values of the last ticks still get out if their lanes finish within one timeout.
  std::vector<Sample> late;
  {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(LaneTimeoutSeconds()));
    std::unique_lock lock(shared_->mutex);
    while (std::any_of(lanes_.begin(), lanes_.end(), [](const auto& lane) { return lane->busy; })) {
      lock.unlock();
      const bool posted = shared_->lane_done.WaitUntil(deadline);
      lock.lock();
      if (!posted) break;
    }
    DrainLate(late);
  }
  for (const auto& l : late) sink_(l);
}

}  // namespace runmon
