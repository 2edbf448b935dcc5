// Lanes, ticks, deadlines, backoff and the leader (see sampler.hpp). All coordination goes through one
// mutex in a block that every thread co-owns, so a lane stuck in a driver call can be detached at shutdown
// without leaving it pointing at freed memory.
//
// Cost: on every tick the leader wakes once, from its own timer, and runs its collectors itself; a sample
// of the host lane alone costs one thread wake-up and no hand-off. Other lanes cost one wake-up each. The
// watchdog wakes once per max(1 s, lane timeout), not per tick.
#include "sampler/sampler.hpp"
#include "collectors/linux/self/self_metrics.hpp"
#include "core/wall_clock.hpp"

#include <semaphore.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <exception>
#include <map>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// A POSIX semaphore: posting makes a system call only when a thread is waiting, and waiting makes one
// only when nothing was posted. Condition variables cost three or four more futex calls per hand-off
// (the mutex a woken waiter re-takes is marked contended), a visible part of a sample's cost on a
// virtual machine.
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

}  // namespace

struct Sampler::LaneEntry {
  std::unique_ptr<Collector> collector;
  CollectorState state;
  uint64_t retry_at_tick = 0;
  Lane* owner = nullptr;  // the lane that runs it now
};

// Everything the threads share. Fields without a note are guarded by `mutex`.
struct Sampler::Shared {
  std::mutex mutex;
  Semaphore lane_done;  // posted whenever a non-leading lane finishes a pass
  Semaphore wake;       // posted once by Stop(); the leader re-posts what it consumes
  Semaphore finished;   // posted by the leader when Run() should return
  Semaphore watchdog_quit;
  bool stop = false;
  bool finished_flag = false;
  bool quitting = false;
  std::vector<std::string> pending_log;
  Logger log;
  SamplerOptions options;
  Sink sink;  // called by the leading thread only, never with the mutex held
  Clock::time_point start;
  uint64_t next_index = 0;     // the tick the leader runs next
  uint64_t current_index = 0;  // the tick the leader is running
  uint64_t emitted = 0;
  unsigned lanes_split = 0;
  std::vector<std::shared_ptr<Lane>> lanes;  // merge order; the leader is one of them
  std::shared_ptr<Lane> leader;

  double LaneTimeoutSeconds() const {
    if (options.lane_timeout_seconds) return *options.lane_timeout_seconds;
    return std::min(options.interval_seconds * 0.5, 5.0);
  }
  // Called with the mutex held: the message is queued and written by the leading thread after it lets
  // the mutex go, so a slow stderr never blocks a lane or the watchdog. Nothing is queued once the sampler
  // is being destroyed (a detached lane that returns later must not reach a logger that may be gone).
  void Log(std::string message) {
    if (log && !quitting) pending_log.push_back(std::move(message));
  }
  // Mutex held; the caller writes what it took after unlocking.
  std::vector<std::string> TakeLog() { return std::exchange(pending_log, {}); }
  void WriteLog(const std::vector<std::string>& messages) const {
    for (const auto& message : messages) log(message);
  }
};

struct Sampler::Lane {
  using Entry = LaneEntry;
  struct Done {
    Tick tick;
    MetricBatch batch;
  };

  std::string name;
  std::vector<std::shared_ptr<Entry>> entries;
  std::shared_ptr<Shared> shared;
  Semaphore work;               // posted for each pending tick and for quit
  std::optional<Tick> pending;  // the tick handed to a non-leading lane
  bool busy = false;
  bool quit = false;
  bool deposed = false;  // was leading; the watchdog handed the lead to another lane
  bool reported_hung = false;
  Entry* running = nullptr;  // the entry inside Collect
  Clock::time_point running_since;
  Clock::time_point busy_since;
  std::vector<Done> done;
  uint64_t max_backoff_ticks = 1;
  std::thread thread;

  // An ordinary lane: runs the ticks it is handed.
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
      const auto list = entries;  // a split during this pass must not change what is iterated
      lock.unlock();
      MetricBatch batch;
      RunCollectors(tick, list, batch);
      lock.lock();
      Finish(tick, std::move(batch));
      lock.unlock();
      shared->lane_done.Post();
    }
  }

  // Called with the mutex held, after a pass of a lane that is not leading.
  void Finish(const Tick& tick, MetricBatch batch) {
    done.push_back({tick, std::move(batch)});
    busy = false;
    if (reported_hung) {
      reported_hung = false;
      shared->Log(fmt::format("lane {} returned after being hung", name));
    }
  }

  // The leading lane: keeps the clock, hands each tick to the other lanes, runs its own collectors
  // itself, waits for the others up to the deadline and emits the sample.
  void Lead();

  void RunCollectors(const Tick& tick, const std::vector<std::shared_ptr<Entry>>& list, MetricBatch& batch) {
    for (const auto& shared_entry : list) {
      Entry& entry = *shared_entry;
      {
        std::lock_guard guard(shared->mutex);
        // The sampler is going away (this lane was stuck and detached): run nothing more.
        if (quit) break;
        // Moved to another lane while this one was stuck: that lane runs it now.
        if (entry.owner != this) continue;
        if (entry.state.health == CollectorHealth::kEnded) continue;
        if (!tick.final && tick.index < entry.retry_at_tick) continue;
        running = &entry;
        running_since = Clock::now();
      }
      const size_t before = batch.items().size();
      std::optional<std::string> error;
      try {
        auto status = entry.collector->Collect(tick, batch);
        if (!status) error = status.error();
      } catch (const std::exception& e) {
        error = fmt::format("unexpected exception: {}", e.what());
      } catch (...) {
        error = "unexpected exception";
      }
      const bool produced = batch.items().size() > before;
      const bool ended = !error && entry.collector->Ended();
      std::lock_guard guard(shared->mutex);
      const double millis = std::chrono::duration<double, std::milli>(Clock::now() - running_since).count();
      running = nullptr;
      if (ended) {
        entry.state.health = CollectorHealth::kEnded;  // the run's end for this source, not a failure
        entry.state.message.clear();
        entry.state.last_millis = millis;
        ++entry.state.collections;
        continue;
      }
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
    if (!message.empty()) shared->Log(message);
  }

  void Start(const std::shared_ptr<Lane>& self, bool lead) {
    thread = std::thread([self, lead] {
      if (lead) {
        self->Lead();
      } else {
        self->Loop();
      }
    });
  }
};

namespace {

// Moves every collector of `stuck_lane` but `stuck` to a new lane and returns it. Mutex held.
std::shared_ptr<Sampler::Lane> SplitOff(Sampler::Shared& shared,
                                        const std::shared_ptr<Sampler::Shared>& owner,
                                        Sampler::Lane& stuck_lane, Sampler::LaneEntry& stuck) {
  auto lane = std::make_shared<Sampler::Lane>();
  lane->name = fmt::format("{}~{}", stuck_lane.name, ++shared.lanes_split);
  lane->shared = owner;
  lane->max_backoff_ticks = stuck_lane.max_backoff_ticks;
  std::vector<std::shared_ptr<Sampler::LaneEntry>> keep;
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
  shared.Log(fmt::format("collector {} is stuck in lane {}; its other collectors continue in lane {}",
                         stuck.state.name, stuck_lane.name, lane->name));
  return lane;
}

// Samples of earlier ticks whose lanes finished after their deadline. Mutex held.
void DrainLate(Sampler::Shared& shared, std::vector<Sample>& late) {
  for (auto& lane : shared.lanes) {
    for (auto& done : lane->done) {
      if (done.batch.empty()) continue;
      Sample sample;
      sample.timestamp = done.tick.wall_seconds;
      sample.runtime = std::chrono::duration<double>(done.tick.monotonic - shared.start).count();
      sample.late = true;
      sample.metrics = std::move(done.batch);
      late.push_back(std::move(sample));
    }
    lane->done.clear();
  }
}

// How each collector's latest pass went, for the sample's readers. A stuck pass is its latest, counted
// until now. Mutex held.
std::vector<CollectorOutcome> Outcomes(const Sampler::Shared& shared, Clock::time_point now) {
  std::vector<CollectorOutcome> outcomes;
  for (const auto& lane : shared.lanes) {
    for (const auto& entry : lane->entries) {
      const CollectorState& state = entry->state;
      if (state.health == CollectorHealth::kHung && lane->running == entry.get()) {
        outcomes.push_back(
            {state.name, std::chrono::duration<double>(now - lane->running_since).count(), false});
      } else if (state.collections > 0 || state.health != CollectorHealth::kOk) {
        const bool success = state.health == CollectorHealth::kOk || state.health == CollectorHealth::kEnded;
        outcomes.push_back({state.name, state.last_millis / 1000, success});
      }
    }
  }
  return outcomes;
}

}  // namespace

void Sampler::Lane::Lead() {
  Shared& s = *shared;
  const auto interval = Seconds(s.options.interval_seconds);
  std::unique_lock lock(s.mutex);
  for (;;) {
    const uint64_t index = s.next_index;
    const auto due = s.start + interval * static_cast<Clock::rep>(index);
    lock.unlock();
    // Sleeps until the tick is due; Stop() wakes it early (its post is put back, so once stopped every
    // later wait returns at once).
    if (s.wake.WaitUntil(due)) s.wake.Post();
    lock.lock();
    const bool stopping = s.stop;
    const auto started = Clock::now();
    const Tick tick{stopping ? started : due, WallSeconds(), index, stopping};
    s.current_index = index;

    // Hand the tick to every idle lane; a lane still busy with an earlier tick is hung: its stuck
    // collector keeps the lane and the others move to a new one.
    std::vector<Sample> late;
    DrainLate(s, late);
    std::vector<Lane*> waiting;
    std::vector<std::shared_ptr<Lane>> split_off;
    for (auto& lane : s.lanes) {
      if (lane.get() == this) continue;
      if (lane->busy) {
        const double seconds = std::chrono::duration<double>(started - lane->busy_since).count();
        if (!lane->reported_hung) {
          lane->reported_hung = true;
          s.Log(fmt::format("lane {} has not returned for {:.1f} s; skipping it until it does", lane->name,
                            seconds));
        }
        if (Entry* stuck = lane->running) {
          stuck->state.health = CollectorHealth::kHung;
          stuck->state.message = fmt::format("has not returned for {:.1f} s", seconds);
          if (lane->entries.size() > 1) split_off.push_back(SplitOff(s, shared, *lane, *stuck));
        }
        continue;
      }
      waiting.push_back(lane.get());
    }
    for (auto& lane : split_off) {
      s.lanes.push_back(lane);
      lane->Start(lane, /*lead=*/false);
      waiting.push_back(lane.get());
    }
    for (Lane* lane : waiting) {
      lane->busy = true;
      lane->busy_since = started;
      lane->pending = tick;
    }
    const auto list = entries;
    lock.unlock();
    for (Lane* lane : waiting) lane->work.Post();

    MetricBatch own;
    RunCollectors(tick, list, own);

    lock.lock();
    if (deposed) {
      // The watchdog gave the lead to another lane while a collector of this one was stuck: what this
      // pass produced goes out late, and this thread serves its stuck collector as an ordinary lane.
      Finish(tick, std::move(own));
      lock.unlock();
      s.lane_done.Post();
      Loop();
      return;
    }
    lock.unlock();
    const auto deadline = started + Seconds(s.LaneTimeoutSeconds());
    // lane_done is posted once per finished pass, also by lanes finishing earlier (late) ticks, so each
    // post is a reason to look again, not a count of this tick's lanes.
    for (;;) {
      lock.lock();
      const bool all_done =
          std::none_of(waiting.begin(), waiting.end(), [](Lane* lane) { return lane->busy; });
      lock.unlock();
      if (all_done || !s.lane_done.WaitUntil(deadline)) break;
    }
    lock.lock();

    // Merge in lane order what arrived for this tick.
    Sample sample;
    sample.timestamp = tick.wall_seconds;
    sample.runtime = std::chrono::duration<double>(started - s.start).count();
    for (auto& lane : s.lanes) {
      if (lane.get() == this) {
        for (auto& metric : own.items()) sample.metrics.Add(std::move(metric.key), metric.value);
        continue;
      }
      for (auto it = lane->done.begin(); it != lane->done.end();) {
        if (it->tick.index == tick.index && it->tick.final == tick.final) {
          for (auto& metric : it->batch.items()) sample.metrics.Add(std::move(metric.key), metric.value);
          it = lane->done.erase(it);
        } else {
          ++it;
        }
      }
    }
    sample.collectors = Outcomes(s, Clock::now());
    sample.metrics.Add(self_metrics::kSampleMillis,
                       std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    ++s.emitted;
    const bool last = stopping || (s.options.max_samples && s.emitted >= *s.options.max_samples);
    // Next tick on the original grid; skip the ones already missed rather than bursting.
    const auto now = Clock::now();
    uint64_t next = index + 1;
    if (s.start + interval * static_cast<Clock::rep>(next) < now) {
      next = static_cast<uint64_t>((now - s.start) / interval) + 1;
    }
    s.next_index = next;
    const auto messages = s.TakeLog();
    lock.unlock();

    s.WriteLog(messages);
    for (const auto& l : late) s.sink(l);
    s.sink(sample);

    if (last) {
      lock.lock();
      s.finished_flag = true;
      lock.unlock();
      s.finished.Post();
      Loop();  // idle until the sampler quits
      return;
    }
    lock.lock();
  }
}

Sampler::Sampler(std::vector<CollectorSpec> collectors, SamplerOptions options, Sink sink, Logger log)
    : shared_(std::make_shared<Shared>()) {
  Shared& s = *shared_;
  s.options = options;
  s.sink = std::move(sink);
  s.log = std::move(log);
  const uint64_t max_backoff_ticks =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(options.max_backoff_seconds /
                                                            std::max(options.interval_seconds, 1e-3))));
  std::map<std::string, std::shared_ptr<Lane>> by_name;
  for (auto& spec : collectors) {
    auto& lane = by_name[spec.lane];
    if (!lane) {
      lane = std::make_shared<Lane>();
      lane->name = spec.lane;
      lane->shared = shared_;
      lane->max_backoff_ticks = max_backoff_ticks;
      s.lanes.push_back(lane);
    }
    auto entry = std::make_shared<Lane::Entry>();
    entry->state.name = std::string(spec.collector->Name());
    entry->state.lane = spec.lane;
    entry->collector = std::move(spec.collector);
    entry->owner = lane.get();
    lane->entries.push_back(std::move(entry));
  }
  if (s.lanes.empty()) {
    // A sampler without collectors still ticks (runmon.sampleMillis only); its leader is an empty lane.
    auto lane = std::make_shared<Lane>();
    lane->name = "leader";
    lane->shared = shared_;
    s.lanes.push_back(lane);
  }
  s.leader = s.lanes.front();
}

Sampler::~Sampler() {
  shared_->watchdog_quit.Post();
  if (watchdog_.joinable()) watchdog_.join();
  std::vector<std::shared_ptr<Lane>> lanes;
  {
    std::lock_guard guard(shared_->mutex);
    lanes = shared_->lanes;
    shared_->quitting = true;
    for (auto& lane : lanes) lane->quit = true;
  }
  for (auto& lane : lanes) lane->work.Post();
  for (auto& lane : lanes) {
    if (!lane->thread.joinable()) continue;
    bool stuck;
    {
      std::lock_guard guard(shared_->mutex);
      stuck = lane->running != nullptr;
    }
    // A lane stuck in a call cannot be interrupted; it owns its state and ends with the process.
    if (stuck) {
      lane->thread.detach();
    } else {
      lane->thread.join();
    }
  }
  // Lanes point at the shared block and the block lists the lanes: break the cycle.
  std::lock_guard guard(shared_->mutex);
  shared_->lanes.clear();
  shared_->leader.reset();
}

void Sampler::Stop() {
  {
    std::lock_guard guard(shared_->mutex);
    if (shared_->stop) return;
    shared_->stop = true;
  }
  shared_->wake.Post();
}

std::vector<CollectorState> Sampler::States() const {
  std::lock_guard guard(shared_->mutex);
  std::vector<CollectorState> states;
  for (const auto& lane : shared_->lanes) {
    for (const auto& entry : lane->entries) states.push_back(entry->state);
  }
  return states;
}

void Sampler::Watch() {
  // Wakes once per period; when the leading lane has been inside one Collect for longer than the lane
  // timeout, the lead passes to a new lane holding the leader's other collectors, starting at the next tick.
  Shared& s = *shared_;
  const double timeout = s.LaneTimeoutSeconds();
  const auto period = Seconds(std::max(1.0, timeout));
  for (;;) {
    if (s.watchdog_quit.WaitUntil(Clock::now() + period)) return;
    std::lock_guard guard(s.mutex);
    if (s.finished_flag) continue;
    Lane& leader = *s.leader;
    Lane::Entry* stuck = leader.running;
    if (stuck == nullptr) continue;
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - leader.running_since).count();
    if (seconds < timeout) continue;
    stuck->state.health = CollectorHealth::kHung;
    stuck->state.message = fmt::format("has not returned for {:.1f} s", seconds);
    s.Log(fmt::format("lane {} has not returned for {:.1f} s; skipping it until it does", leader.name,
                      seconds));
    auto successor = SplitOff(s, shared_, leader, *stuck);
    leader.deposed = true;
    leader.busy = true;
    leader.busy_since = leader.running_since;
    leader.reported_hung = true;
    s.lanes.push_back(successor);
    s.leader = successor;
    s.next_index = std::max(s.next_index, s.current_index + 1);
    successor->Start(successor, /*lead=*/true);
  }
}

void Sampler::Run() {
  Shared& s = *shared_;
  {
    std::lock_guard guard(s.mutex);
    s.start = Clock::now();
    for (auto& lane : s.lanes) lane->Start(lane, /*lead=*/lane == s.leader);
  }
  watchdog_ = std::thread([this] { Watch(); });
  s.finished.Wait();
  shared_->watchdog_quit.Post();
  watchdog_.join();

  // Late values of the last ticks still get out if their lanes finish within one timeout.
  std::vector<Sample> late;
  std::vector<std::string> messages;
  {
    const auto deadline = Clock::now() + Seconds(s.LaneTimeoutSeconds());
    std::unique_lock lock(s.mutex);
    while (std::any_of(s.lanes.begin(), s.lanes.end(), [&](const auto& lane) { return lane->busy; })) {
      lock.unlock();
      const bool posted = s.lane_done.WaitUntil(deadline);
      lock.lock();
      if (!posted) break;
    }
    DrainLate(s, late);
    messages = s.TakeLog();
  }
  s.WriteLog(messages);
  for (const auto& l : late) s.sink(l);
}

}  // namespace runmon
