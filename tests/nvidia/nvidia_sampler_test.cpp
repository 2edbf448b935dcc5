// The NVIDIA collector inside the real Sampler, against the fake libnvidia-ml.so.1: an NVML call that hangs
// holds only the "nvidia" lane (a host-like collector in lane "host" keeps its pace, the sampler reports the
// nvidia collector hung, and it comes back when the call returns); a GPU lost mid-run leaves the collector
// degraded with the other GPU's values still in every sample.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/nvidia/nvidia_collector.hpp"
#include "nvml_test_support.hpp"
#include "sampler/sampler.hpp"

namespace runmon {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::DefaultScenario;
using test::FakeHooks;
using test::Json;

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
  std::vector<Sample> OnTime() const {
    std::lock_guard guard(mutex_);
    std::vector<Sample> on_time;
    for (const auto& s : samples_) {
      if (!s.late) on_time.push_back(s);
    }
    return on_time;
  }
  std::vector<std::string> Logs() const {
    std::lock_guard guard(mutex_);
    return logs_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Sample> samples_;
  std::vector<std::string> logs_;
};

// Stands in for the host collectors: one key per tick, no I/O.
class HostLike final : public Collector {
 public:
  std::string_view Name() const override { return "host_like"; }
  Status Collect(const Tick& tick, MetricBatch& out) override {
    out.Add("cpu", static_cast<double>(tick.index));
    return OkStatus();
  }
};

const CollectorState& StateOf(const std::vector<CollectorState>& states, std::string_view name) {
  for (const auto& s : states) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no collector " + std::string(name));
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

class NvidiaSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeHooks::Full().ResetState(); }
  void TearDown() override { ::unsetenv("RUNMON_FAKE_NVML_SCENARIO"); }

  std::vector<CollectorSpec> Specs(const Json& scenario) {
    ::setenv("RUNMON_FAKE_NVML_SCENARIO", dir_.Write(scenario).c_str(), 1);
    NvidiaOptions options;
    options.library_path = test::FakeFullPath();
    std::string why_not;
    auto nvidia = MakeNvidiaCollector(std::move(options), &why_not);
    if (nvidia == nullptr) throw std::runtime_error(why_not);
    std::vector<CollectorSpec> specs;
    specs.push_back({std::make_unique<HostLike>(), "host"});  // the first lane leads
    specs.push_back({std::move(nvidia), "nvidia"});
    return specs;
  }

  test::ScenarioDir dir_;
};

TEST_F(NvidiaSamplerTest, HangingNvmlCallHoldsOnlyItsLane) {
  // The third power reading sleeps 1.5 s inside the driver, then answers.
  Json scenario = DefaultScenario(1);
  scenario["devices"][0]["fail"] = {
      {"nvmlDeviceGetPowerUsage", {{"hang_seconds", 1.5}, {"after_calls", 2}, {"times", 1}}}};
  SamplerOptions options;
  options.interval_seconds = 0.2;
  options.lane_timeout_seconds = 0.15;  // a sanitized build's first NVML walk fits easily
  Recorder recorder;
  Sampler sampler(Specs(scenario), options, recorder.Sink(), recorder.Logger());
  std::thread runner([&] { sampler.Run(); });
  struct Join {
    Sampler& sampler;
    std::thread& runner;
    ~Join() {
      sampler.Stop();
      if (runner.joinable()) runner.join();
    }
  } join{sampler, runner};

  const bool hung =
      WaitFor([&] { return StateOf(sampler.States(), "nvidia").health == CollectorHealth::kHung; });
  ASSERT_TRUE(hung);
  EXPECT_EQ(StateOf(sampler.States(), "nvidia").lane, "nvidia");
  const size_t at_hang = recorder.OnTime().size();
  // While the driver call sleeps, the host lane keeps sampling on the 0.2 s grid.
  EXPECT_TRUE(WaitFor([&] { return recorder.OnTime().size() >= at_hang + 4; }, 5s));
  EXPECT_EQ(StateOf(sampler.States(), "nvidia").health, CollectorHealth::kHung);
  EXPECT_EQ(StateOf(sampler.States(), "host_like").health, CollectorHealth::kOk);
  // The call returns: the lane is back and GPU values arrive again.
  EXPECT_TRUE(
      WaitFor([&] { return StateOf(sampler.States(), "nvidia").health != CollectorHealth::kHung; }, 10s));
  const size_t at_return = recorder.OnTime().size();
  EXPECT_TRUE(WaitFor(
      [&] {
        const auto samples = recorder.OnTime();
        return samples.size() > at_return && samples.back().metrics.Find("gpu.0.temp") != nullptr;
      },
      5s));
  sampler.Stop();
  runner.join();

  const auto samples = recorder.OnTime();
  ASSERT_GE(samples.size(), 8u);
  for (size_t k = 0; k < samples.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_NE(samples[k].metrics.Find("cpu"), nullptr);  // every on-time sample has the host's values
    // On time: never before its due time on the grid, never much after it (the hang does not push it).
    const Metric* cpu = samples[k].metrics.Find("cpu");
    if (cpu != nullptr && k + 1 < samples.size()) {
      const double due = 0.2 * cpu->value;
      EXPECT_GE(samples[k].runtime, due - 1e-3);
      EXPECT_LT(samples[k].runtime, due + 0.15 + 0.25);
    }
  }
  // The sampler said, in words, that the nvidia lane hung and that it came back.
  const auto logs = recorder.Logs();
  EXPECT_TRUE(std::any_of(logs.begin(), logs.end(), [](const std::string& line) {
    return line.find("nvidia") != std::string::npos && line.find("has not returned") != std::string::npos;
  })) << ::testing::PrintToString(logs);
  // Exactly one power call hung; the lane asked again after it returned.
  EXPECT_GE(FakeHooks::Full().Calls("nvmlDeviceGetPowerUsage", 0), 4u);
}

TEST_F(NvidiaSamplerTest, LostGpuLeavesTheCollectorDegraded) {
  Json scenario = DefaultScenario(2);
  scenario["devices"][1]["fail"] = {
      {"nvmlDeviceGetPowerUsage", {{"code", "GPU_IS_LOST"}, {"after_calls", 1}}}};
  SamplerOptions options;
  options.interval_seconds = 0.1;
  options.max_samples = 4;
  options.lane_timeout_seconds = 5;
  Recorder recorder;
  Sampler sampler(Specs(scenario), options, recorder.Sink(), recorder.Logger());
  sampler.Run();

  const auto state = StateOf(sampler.States(), "nvidia");
  EXPECT_EQ(state.health, CollectorHealth::kDegraded);
  EXPECT_NE(state.message.find("GPU 1"), std::string::npos) << state.message;
  EXPECT_NE(state.message.find("GPU is lost"), std::string::npos) << state.message;
  const auto samples = recorder.OnTime();
  ASSERT_EQ(samples.size(), 4u);
  for (const auto& s : samples) {
    EXPECT_NE(s.metrics.Find("gpu.0.temp"), nullptr);  // degraded: its values are kept
    EXPECT_NE(s.metrics.Find("cpu"), nullptr);
  }
  EXPECT_NE(samples[0].metrics.Find("gpu.1.temp"), nullptr);
  EXPECT_EQ(samples[3].metrics.Find("gpu.1.temp"), nullptr);
  const auto logs = recorder.Logs();
  EXPECT_TRUE(std::any_of(logs.begin(), logs.end(), [](const std::string& line) {
    return line.find("GPU 1") != std::string::npos;
  })) << ::testing::PrintToString(logs);
}

}  // namespace
}  // namespace runmon
