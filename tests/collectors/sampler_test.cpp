// The sampler with fake collectors: a sample at t = 0 and then every interval on a fixed grid (no drift),
// max_samples, the final sample at Stop(), runmon.sampleMillis, keys merged in lane order; a failing
// collector backs off 1, 2, 4 ticks (kFailing, logged once) and recovers (logged); one that errors but
// produces values is kDegraded and its values are kept; one that throws is contained; one that hangs in its
// own lane does not delay the others, is reported kHung (and its stuck pass in the samples' collector
// outcomes), and its values arrive later as a late sample; one that hangs in a shared lane keeps that lane
// while its lane-mates move to a new one. Every sample carries each collector's last pass: how long it took
// and whether it succeeded.
// Ordering and counts are asserted strictly; wall-clock times only loosely (CI machines are slow).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "sampler/sampler.hpp"

namespace runmon {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Collects what the sampler emits and logs, from its thread.
class Recorder {
 public:
  Sampler::Sink Sink() {
    return [this](const Sample& sample) {
      std::lock_guard guard(mutex_);
      samples_.push_back(sample);
    };
  }
  Sampler::Logger Logger() {
    return [this](const std::string& line) {
      std::lock_guard guard(mutex_);
      logs_.push_back(line);
    };
  }
  std::vector<Sample> Samples() const {
    std::lock_guard guard(mutex_);
    return samples_;
  }
  std::vector<Sample> OnTime() const {
    std::vector<Sample> on_time;
    for (auto& s : Samples()) {
      if (!s.late) on_time.push_back(s);
    }
    return on_time;
  }
  std::vector<std::string> Logs() const {
    std::lock_guard guard(mutex_);
    return logs_;
  }
  size_t LogsContaining(std::string_view text) const {
    const auto logs = Logs();
    return static_cast<size_t>(std::count_if(
        logs.begin(), logs.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; }));
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Sample> samples_;
  std::vector<std::string> logs_;
};

// The ticks a fake collector was called with, readable after the sampler took the collector.
struct CallLog {
  mutable std::mutex mutex;
  std::vector<Tick> ticks;
  void Add(const Tick& tick) {
    std::lock_guard guard(mutex);
    ticks.push_back(tick);
  }
  std::vector<Tick> Ticks() const {
    std::lock_guard guard(mutex);
    return ticks;
  }
  std::vector<uint64_t> Indices() const {
    std::vector<uint64_t> indices;
    for (const auto& t : Ticks()) indices.push_back(t.index);
    return indices;
  }
};

// Behaviour of a fake collector on its n-th call (0-based): what it adds and what it returns.
class FakeCollector final : public Collector {
 public:
  using Behaviour = std::function<Status(size_t call, const Tick& tick, MetricBatch& out)>;
  FakeCollector(std::string name, std::shared_ptr<CallLog> log, Behaviour behaviour)
      : name_(std::move(name)), log_(std::move(log)), behaviour_(std::move(behaviour)) {}
  std::string_view Name() const override { return name_; }
  Status Collect(const Tick& tick, MetricBatch& out) override {
    log_->Add(tick);
    return behaviour_(calls_++, tick, out);
  }

 private:
  std::string name_;
  std::shared_ptr<CallLog> log_;
  Behaviour behaviour_;
  size_t calls_ = 0;
};

CollectorSpec Spec(std::string name, std::string lane, std::shared_ptr<CallLog> log,
                   FakeCollector::Behaviour b) {
  return CollectorSpec{std::make_unique<FakeCollector>(std::move(name), std::move(log), std::move(b)),
                       std::move(lane)};
}

// Adds "<key>" = the call number.
FakeCollector::Behaviour Counting(std::string key) {
  return [key](size_t call, const Tick&, MetricBatch& out) {
    out.Add(key, static_cast<double>(call));
    return OkStatus();
  };
}

const CollectorState& StateOf(const std::vector<CollectorState>& states, std::string_view name) {
  for (const auto& s : states) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no collector " + std::string(name));
}

// Polls `done` every 5 ms for up to `limit`.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

const Clock::duration kInterval =
    std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(0.1));

SamplerOptions Options(std::optional<uint64_t> max_samples) {
  SamplerOptions options;
  options.interval_seconds = 0.1;
  options.max_samples = max_samples;
  // Every lane answers well within this, however slow the machine: no sample goes late by accident.
  options.lane_timeout_seconds = 5;
  return options;
}

// Whether the sampler had to skip ticks (an overloaded machine): then exact tick indices are not asserted.
bool Contiguous(const std::vector<uint64_t>& indices) {
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] != i) return false;
  }
  return true;
}

TEST(Sampler, TicksOnAFixedGridFromTimeZero) {
  auto calls = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("counting", "a", calls, Counting("count")));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(10), recorder.Sink(), recorder.Logger());
  sampler.Run();

  const auto samples = recorder.Samples();
  ASSERT_EQ(samples.size(), 10u);
  const auto ticks = calls->Ticks();
  ASSERT_EQ(ticks.size(), 10u);
  for (size_t k = 0; k < samples.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_FALSE(samples[k].late);
    EXPECT_FALSE(ticks[k].final);  // max_samples: no extra final sample
    ASSERT_NE(samples[k].metrics.Find("count"), nullptr);
    EXPECT_EQ(samples[k].metrics.Find("count")->value, static_cast<double>(k));
    const Metric* millis = samples[k].metrics.Find("runmon.sampleMillis");
    ASSERT_NE(millis, nullptr);
    EXPECT_GE(millis->value, 0.0);
    EXPECT_EQ(samples[k].metrics.items().back().key, "runmon.sampleMillis");
    if (k > 0) {
      EXPECT_GT(ticks[k].index, ticks[k - 1].index);
      EXPECT_GE(samples[k].timestamp, samples[k - 1].timestamp);
      EXPECT_GT(samples[k].runtime, samples[k - 1].runtime);
    }
    // No drift: tick k is due exactly at start + index x interval (the grid, not the previous tick +
    // interval).
    EXPECT_EQ(ticks[k].monotonic - ticks[0].monotonic, kInterval * static_cast<Clock::rep>(ticks[k].index));
    // Loose wall-time checks: never before its due time, and not absurdly after it.
    const double due = 0.1 * static_cast<double>(ticks[k].index);
    EXPECT_GE(samples[k].runtime, due - 1e-3);
    EXPECT_LT(samples[k].runtime, due + 0.5);
  }
  EXPECT_EQ(ticks[0].index, 0u);
  EXPECT_LT(samples[0].runtime, 0.25);  // the first sample is taken at start
  if (Contiguous(calls->Indices())) {
    EXPECT_EQ(ticks.back().index, 9u);
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(samples.back().timestamp, now, 60.0);
}

TEST(Sampler, KeysMergedInLaneThenCollectorOrder) {
  auto log = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("x", "first", log, Counting("x")));
  specs.push_back(Spec("z", "second", log, Counting("z")));
  specs.push_back(Spec("y", "first", log, Counting("y")));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(2), recorder.Sink(), recorder.Logger());
  sampler.Run();
  const auto samples = recorder.Samples();
  ASSERT_EQ(samples.size(), 2u);
  for (const auto& sample : samples) {
    std::vector<std::string> keys;
    for (const auto& m : sample.metrics.items()) keys.push_back(m.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"x", "y", "z", "runmon.sampleMillis"}));
  }
  const auto states = sampler.States();
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(StateOf(states, "x").lane, "first");
  EXPECT_EQ(StateOf(states, "z").lane, "second");
  EXPECT_EQ(StateOf(states, "y").collections, 2u);
}

TEST(Sampler, StopTakesAFinalSample) {
  auto calls = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("counting", "a", calls, Counting("count")));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(std::nullopt), recorder.Sink(), recorder.Logger());
  std::thread runner([&] { sampler.Run(); });
  EXPECT_TRUE(WaitFor([&] { return recorder.Samples().size() >= 3; }));
  sampler.Stop();
  runner.join();

  const auto samples = recorder.Samples();
  const auto ticks = calls->Ticks();
  ASSERT_GE(samples.size(), 4u);
  ASSERT_EQ(ticks.size(), samples.size());
  for (size_t k = 0; k + 1 < ticks.size(); ++k) {
    EXPECT_FALSE(ticks[k].final) << k;
  }
  EXPECT_TRUE(ticks.back().final);
  EXPECT_FALSE(samples.back().late);
  EXPECT_NE(samples.back().metrics.Find("count"), nullptr);
  EXPECT_NE(samples.back().metrics.Find("runmon.sampleMillis"), nullptr);
  EXPECT_GE(samples.back().runtime, samples[samples.size() - 2].runtime);
}

TEST(Sampler, StopDoesNotWaitForTheNextTick) {
  // A 30 s interval: Stop() wakes the sampler at once; a run of a few seconds still has two samples.
  auto calls = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("counting", "a", calls, Counting("count")));
  Recorder recorder;
  SamplerOptions options;
  options.interval_seconds = 30;
  Sampler sampler(std::move(specs), options, recorder.Sink(), recorder.Logger());
  std::thread runner([&] { sampler.Run(); });
  EXPECT_TRUE(WaitFor([&] { return !recorder.Samples().empty(); }));
  const auto stop_at = Clock::now();
  sampler.Stop();
  runner.join();
  EXPECT_LT(Clock::now() - stop_at, 10s);
  ASSERT_EQ(recorder.Samples().size(), 2u);
  ASSERT_EQ(calls->Ticks().size(), 2u);
  EXPECT_FALSE(calls->Ticks()[0].final);
  EXPECT_TRUE(calls->Ticks()[1].final);
}

TEST(Sampler, FailingCollectorBacksOffOneTwoFourTicks) {
  auto counting = std::make_shared<CallLog>();
  auto failing = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("counting", "a", counting, Counting("count")));
  specs.push_back(Spec("failing", "a", failing,
                       [](size_t, const Tick&, MetricBatch&) -> Status { return Error{"no source"}; }));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(10), recorder.Sink(), recorder.Logger());
  sampler.Run();

  const auto tried = failing->Indices();
  ASSERT_GE(tried.size(), 2u);
  EXPECT_EQ(tried[0], 0u);
  // After the k-th consecutive failure the next try is at least 2^(k-1) ticks later.
  for (size_t k = 1; k < tried.size(); ++k) {
    EXPECT_GE(tried[k] - tried[k - 1], uint64_t{1} << (k - 1)) << k;
  }
  if (Contiguous(counting->Indices())) {
    EXPECT_EQ(tried, (std::vector<uint64_t>{0, 1, 3, 7}));
  }

  const auto state = StateOf(sampler.States(), "failing");
  EXPECT_EQ(state.health, CollectorHealth::kFailing);
  EXPECT_EQ(state.message, "no source");
  EXPECT_EQ(state.consecutive_failures, tried.size());
  EXPECT_EQ(state.collections, 0u);
  EXPECT_EQ(StateOf(sampler.States(), "counting").health, CollectorHealth::kOk);
  // Logged once, not on every retry with the same message.
  EXPECT_EQ(recorder.LogsContaining("collector failing failed: no source"), 1u);
  // Its lane-mate ran on every tick.
  EXPECT_EQ(counting->Ticks().size(), 10u);
  for (const auto& s : recorder.Samples()) {
    EXPECT_NE(s.metrics.Find("count"), nullptr);
  }
}

TEST(Sampler, FailingCollectorRecoversAndSaysSo) {
  auto calls = std::make_shared<CallLog>();
  auto counting = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("counting", "a", counting, Counting("count")));
  specs.push_back(Spec("flaky", "a", calls, [](size_t call, const Tick&, MetricBatch& out) -> Status {
    if (call < 2) return Error{"device busy"};
    out.Add("flaky.value", 42);
    return OkStatus();
  }));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(8), recorder.Sink(), recorder.Logger());
  sampler.Run();

  const auto tried = calls->Indices();
  ASSERT_GE(tried.size(), 3u) << "the third try (tick 3 at the latest) must fall within 8 samples";
  if (Contiguous(counting->Indices())) {
    EXPECT_EQ(tried, (std::vector<uint64_t>{0, 1, 3, 4, 5, 6, 7}));
  }
  const auto state = StateOf(sampler.States(), "flaky");
  EXPECT_EQ(state.health, CollectorHealth::kOk);
  EXPECT_EQ(state.consecutive_failures, 0u);
  EXPECT_TRUE(state.message.empty());
  EXPECT_EQ(state.collections, tried.size() - 2);
  const auto logs = recorder.Logs();
  const auto failed = std::find_if(logs.begin(), logs.end(), [](const std::string& l) {
    return l.find("collector flaky failed: device busy") != std::string::npos;
  });
  const auto recovered = std::find(logs.begin(), logs.end(), "collector flaky recovered");
  EXPECT_EQ(recorder.LogsContaining("collector flaky failed"), 1u);
  EXPECT_EQ(recorder.LogsContaining("collector flaky recovered"), 1u);
  EXPECT_LT(failed, recovered);
  // Its values appear from the third try on, in the sample of that tick.
  const auto samples = recorder.Samples();
  size_t with_value = 0;
  for (const auto& s : samples) with_value += s.metrics.Find("flaky.value") != nullptr ? 1 : 0;
  EXPECT_EQ(with_value, tried.size() - 2);
}

TEST(Sampler, ErrorWithValuesIsDegradedAndValuesAreKept) {
  auto calls = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("partial", "a", calls, [](size_t, const Tick&, MetricBatch& out) -> Status {
    out.Add("partial.value", 7);
    return Error{"one of two sources missing"};
  }));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(5), recorder.Sink(), recorder.Logger());
  sampler.Run();

  // Not backed off: called on every tick.
  EXPECT_EQ(calls->Ticks().size(), 5u);
  const auto samples = recorder.Samples();
  ASSERT_EQ(samples.size(), 5u);
  for (const auto& s : samples) {
    ASSERT_NE(s.metrics.Find("partial.value"), nullptr);
    EXPECT_EQ(s.metrics.Find("partial.value")->value, 7.0);
  }
  const auto state = StateOf(sampler.States(), "partial");
  EXPECT_EQ(state.health, CollectorHealth::kDegraded);
  EXPECT_EQ(state.message, "one of two sources missing");
  EXPECT_EQ(state.collections, 5u);
  EXPECT_EQ(state.consecutive_failures, 0u);
  EXPECT_EQ(recorder.LogsContaining("one of two sources missing"), 1u);
}

const CollectorOutcome* OutcomeOf(const Sample& sample, std::string_view name) {
  for (const auto& o : sample.collectors) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

TEST(Sampler, EverySampleSaysHowEachCollectorsLastPassWent) {
  auto calls = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("slow", "a", calls, [](size_t, const Tick&, MetricBatch& out) -> Status {
    std::this_thread::sleep_for(20ms);
    out.Add("slow.value", 1);
    return OkStatus();
  }));
  specs.push_back(Spec("partial", "b", calls, [](size_t, const Tick&, MetricBatch& out) -> Status {
    out.Add("partial.value", 1);
    return Error{"half missing"};
  }));
  specs.push_back(Spec("failing", "b", calls, [](size_t, const Tick&, MetricBatch&) { return Error{"no"}; }));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(4), recorder.Sink(), recorder.Logger());
  sampler.Run();
  ASSERT_EQ(recorder.Samples().size(), 4u);
  for (const Sample& s : recorder.Samples()) {
    ASSERT_EQ(s.collectors.size(), 3u);
    EXPECT_EQ(s.collectors[0].name, "slow");  // lane, then collector order
    EXPECT_TRUE(s.collectors[0].success);
    EXPECT_GE(s.collectors[0].duration_seconds, 0.02);
    EXPECT_FALSE(OutcomeOf(s, "partial")->success);  // values, but an error: not a success
    EXPECT_FALSE(OutcomeOf(s, "failing")->success);  // also on the ticks it is backed off
    EXPECT_GE(OutcomeOf(s, "failing")->duration_seconds, 0.0);
  }
}

TEST(Sampler, ThrowingCollectorIsContained) {
  auto throwing = std::make_shared<CallLog>();
  auto counting = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("throwing", "a", throwing, [](size_t, const Tick&, MetricBatch&) -> Status {
    throw std::runtime_error("boom");
  }));
  specs.push_back(Spec("counting", "a", counting, Counting("count")));
  Recorder recorder;
  Sampler sampler(std::move(specs), Options(4), recorder.Sink(), recorder.Logger());
  sampler.Run();

  EXPECT_EQ(counting->Ticks().size(), 4u);  // the lane carried on after the throw
  const auto state = StateOf(sampler.States(), "throwing");
  EXPECT_EQ(state.health, CollectorHealth::kFailing);
  EXPECT_NE(state.message.find("unexpected exception: boom"), std::string::npos) << state.message;
  EXPECT_EQ(throwing->Indices().front(), 0u);
  EXPECT_LT(throwing->Ticks().size(), 4u);  // backed off like any failure
  EXPECT_GE(recorder.LogsContaining("boom"), 1u);
  for (const auto& s : recorder.Samples()) {
    EXPECT_NE(s.metrics.Find("count"), nullptr);
  }
}

// A gate a collector blocks on until the test opens it.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  bool entered = false;
  void Open() {
    std::lock_guard guard(mutex);
    open = true;
    cv.notify_all();
  }
};

TEST(Sampler, HungLaneDoesNotDelayOthersAndReportsLate) {
  auto gate = std::make_shared<Gate>();
  auto fast = std::make_shared<CallLog>();
  auto slow = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("fast", "proc", fast, Counting("count")));
  specs.push_back(
      Spec("stuck", "driver", slow, [gate](size_t call, const Tick& tick, MetricBatch& out) -> Status {
        if (call == 1) {  // the second call blocks until released
          std::unique_lock lock(gate->mutex);
          gate->entered = true;
          gate->cv.wait(lock, [&] { return gate->open; });
        }
        out.Add("stuck.value", static_cast<double>(tick.index));
        return OkStatus();
      }));
  Recorder recorder;
  auto options = Options(std::nullopt);
  // A tick waits at most 1 s for its lanes: the stuck lane costs its tick that second once, and is skipped
  // afterwards; the fast lane always answers within it, so its values are never late.
  options.lane_timeout_seconds = 1;
  Sampler sampler(std::move(specs), options, recorder.Sink(), recorder.Logger());
  // However this test ends, the blocked collector is released before the sampler goes away.
  struct Release {
    std::shared_ptr<Gate> gate;
    ~Release() { gate->Open(); }
  } release{gate};
  std::thread runner([&] { sampler.Run(); });

  const bool hung =
      WaitFor([&] { return StateOf(sampler.States(), "stuck").health == CollectorHealth::kHung; });
  EXPECT_TRUE(hung);
  const size_t at_hang = recorder.OnTime().size();
  // The other lane keeps sampling while the driver lane is stuck.
  EXPECT_TRUE(WaitFor([&] { return recorder.OnTime().size() >= at_hang + 5; }));
  EXPECT_EQ(StateOf(sampler.States(), "fast").health, CollectorHealth::kOk);
  EXPECT_GE(recorder.LogsContaining("has not returned"), 1u);
  // The stuck pass is its last one: not a success, and its duration counts the time it has been stuck
  // (at least the 1 s tick it cost).
  const Sample while_stuck = recorder.OnTime().back();
  const CollectorOutcome* stuck_outcome = OutcomeOf(while_stuck, "stuck");
  ASSERT_NE(stuck_outcome, nullptr);
  EXPECT_FALSE(stuck_outcome->success);
  EXPECT_GE(stuck_outcome->duration_seconds, 1.0);
  EXPECT_TRUE(OutcomeOf(while_stuck, "fast")->success);

  const uint64_t stuck_tick = slow->Ticks().at(1).index;
  gate->Open();
  const bool late_arrived = WaitFor([&] {
    for (const auto& s : recorder.Samples()) {
      if (s.late) return true;
    }
    return false;
  });
  EXPECT_TRUE(late_arrived);
  // Sampling resumes for the stuck lane once it is back.
  const size_t at_release = slow->Ticks().size();
  EXPECT_TRUE(WaitFor([&] { return slow->Ticks().size() >= at_release + 2; }));
  sampler.Stop();
  runner.join();

  const auto samples = recorder.Samples();
  const auto late = std::find_if(samples.begin(), samples.end(), [](const Sample& s) { return s.late; });
  ASSERT_NE(late, samples.end());
  ASSERT_NE(late->metrics.Find("stuck.value"), nullptr);
  EXPECT_EQ(late->metrics.Find("stuck.value")->value, static_cast<double>(stuck_tick));
  EXPECT_EQ(late->metrics.Find("count"), nullptr);  // only the late lane's values
  EXPECT_EQ(late->metrics.Find("runmon.sampleMillis"), nullptr);
  // Stamped with its own tick, emitted after later ticks' samples.
  EXPECT_GE(late->runtime, 0.1 * static_cast<double>(stuck_tick) - 1e-3);
  EXPECT_LT(late->runtime, 0.1 * static_cast<double>(stuck_tick) + 0.5);
  EXPECT_GT(std::count_if(samples.begin(), late, [&](const Sample& s) { return s.runtime > late->runtime; }),
            0);
  EXPECT_EQ(std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.late; }), 1);
  // Every on-time sample carries the fast lane's value; none after the stuck tick carries a stuck value
  // until the lane is back.
  for (const auto& s : samples) {
    if (!s.late) {
      EXPECT_NE(s.metrics.Find("count"), nullptr);
    }
  }
  EXPECT_NE(StateOf(sampler.States(), "stuck").health, CollectorHealth::kHung);
  EXPECT_GE(recorder.LogsContaining("returned after being hung"), 1u);
}

TEST(Sampler, StuckCollectorsLaneMatesMoveToANewLane) {
  auto gate = std::make_shared<Gate>();
  auto before = std::make_shared<CallLog>();
  auto stuck_log = std::make_shared<CallLog>();
  auto after = std::make_shared<CallLog>();
  std::vector<CollectorSpec> specs;
  specs.push_back(Spec("before", "proc", before, Counting("before")));
  specs.push_back(
      Spec("stuck", "proc", stuck_log, [gate](size_t call, const Tick& tick, MetricBatch& out) -> Status {
        if (call == 1) {
          std::unique_lock lock(gate->mutex);
          gate->entered = true;
          gate->cv.wait(lock, [&] { return gate->open; });
        }
        out.Add("stuck.value", static_cast<double>(tick.index));
        return OkStatus();
      }));
  specs.push_back(Spec("after", "proc", after, Counting("after")));
  Recorder recorder;
  auto options = Options(std::nullopt);
  options.lane_timeout_seconds = 1;
  Sampler sampler(std::move(specs), options, recorder.Sink(), recorder.Logger());
  struct Release {
    std::shared_ptr<Gate> gate;
    ~Release() { gate->Open(); }
  } release{gate};
  std::thread runner([&] { sampler.Run(); });

  // Once the stuck call is seen, its lane-mates leave the lane and keep sampling on time.
  EXPECT_TRUE(WaitFor([&] { return StateOf(sampler.States(), "after").lane != "proc"; }));
  const auto states = sampler.States();
  EXPECT_EQ(StateOf(states, "stuck").lane, "proc");
  EXPECT_EQ(StateOf(states, "stuck").health, CollectorHealth::kHung);
  EXPECT_EQ(StateOf(states, "before").lane, StateOf(states, "after").lane);
  const size_t at_split = recorder.OnTime().size();
  EXPECT_TRUE(WaitFor([&] { return recorder.OnTime().size() >= at_split + 5; }));
  EXPECT_EQ(recorder.LogsContaining("its other collectors continue in lane"), 1u);
  for (size_t i = at_split; i < recorder.OnTime().size(); ++i) {
    const Sample s = recorder.OnTime()[i];
    EXPECT_NE(s.metrics.Find("before"), nullptr);
    EXPECT_NE(s.metrics.Find("after"), nullptr);
  }

  gate->Open();
  const size_t at_release = stuck_log->Ticks().size();
  EXPECT_TRUE(WaitFor([&] { return stuck_log->Ticks().size() >= at_release + 2; }));
  sampler.Stop();
  runner.join();

  // No collector ran twice for one tick: the stuck lane, once back, did not run the collectors it lost.
  for (const auto& log : {before, after, stuck_log}) {
    const auto ticks = log->Ticks();
    for (size_t i = 1; i < ticks.size(); ++i) {
      EXPECT_TRUE(ticks[i].index > ticks[i - 1].index || (ticks[i].final && !ticks[i - 1].final)) << i;
    }
  }
  // The stuck value of the stuck tick still arrived, late.
  const auto samples = recorder.Samples();
  EXPECT_EQ(std::count_if(samples.begin(), samples.end(),
                          [](const Sample& s) { return s.late && s.metrics.Find("stuck.value") != nullptr; }),
            1);
}

}  // namespace
}  // namespace runmon
