// The AMD collector (amd_collector.hpp): per card, the sysfs sampler's values (amdgpu_sampling.hpp) become
// the shared GPU keys (gpu/gpu_metrics.hpp) and AMD's own (amd_metrics.hpp). Derived keys need both of
// their inputs: memoryAllocated needs VRAM used and total, powerPercent the power and a cap. gpu.{i}.temp
// is the sensor W&B reads through rocm-smi: memory, else junction, else edge. energyJoules counts from the
// first sample; a counter that goes backwards (the driver was reloaded) starts counting again from there.
#include "collectors/amd/amd_collector.hpp"

#include <utility>

#include <fmt/format.h>

#include "collectors/amd/amd_metadata.hpp"
#include "collectors/amd/amd_metrics.hpp"
#include "collectors/amd/amdgpu_sampling.hpp"
#include "collectors/gpu/gpu_metrics.hpp"

namespace runmon {
namespace {

using amd::AmdCard;
using amd::CardValues;

struct CardState {
  AmdCard card;
  amd::CardSampler sampler;
  std::string index;  // i of gpu.{i}, as text
  std::optional<double> energy_counted_microjoules, energy_last_microjoules;
};

void AddCard(CardState& state, const CardValues& values, MetricBatch& out) {
  namespace shared = gpu_metrics;
  namespace own = amd_metrics;
  const auto add = [&](const MetricDescriptor& metric, double value) { out.Add(metric, state.index, value); };
  if (values.busy_percent) add(shared::kGpu, *values.busy_percent);
  if (values.memory_busy_percent) add(own::kMemoryReadWriteActivity, *values.memory_busy_percent);
  if (values.vram_used_bytes)
    add(shared::kMemoryAllocatedBytes, static_cast<double>(*values.vram_used_bytes));
  if (values.vram_used_bytes && values.vram_total_bytes && *values.vram_total_bytes > 0) {
    add(shared::kMemoryAllocated,
        100.0 * static_cast<double>(*values.vram_used_bytes) / static_cast<double>(*values.vram_total_bytes));
  } else if (values.vram_used_percent) {
    add(shared::kMemoryAllocated, *values.vram_used_percent);
  }
  if (values.gtt_used_bytes) add(own::kGttMemoryAllocatedBytes, static_cast<double>(*values.gtt_used_bytes));
  if (values.gtt_used_bytes && values.gtt_total_bytes && *values.gtt_total_bytes > 0) {
    add(own::kGttMemoryAllocated,
        100.0 * static_cast<double>(*values.gtt_used_bytes) / static_cast<double>(*values.gtt_total_bytes));
  }
  const auto& temp = values.temp_memory_celsius     ? values.temp_memory_celsius
                     : values.temp_junction_celsius ? values.temp_junction_celsius
                                                    : values.temp_edge_celsius;
  if (temp) add(shared::kTemp, *temp);
  if (values.temp_edge_celsius) add(own::kTempEdge, *values.temp_edge_celsius);
  if (values.temp_junction_celsius) add(own::kTempJunction, *values.temp_junction_celsius);
  if (values.temp_memory_celsius) add(own::kTempMemory, *values.temp_memory_celsius);
  if (values.power_watts) add(shared::kPowerWatts, *values.power_watts);
  if (values.power_cap_watts) add(shared::kEnforcedPowerLimitWatts, *values.power_cap_watts);
  if (values.power_watts && values.power_cap_watts) {
    add(shared::kPowerPercent, 100.0 * *values.power_watts / *values.power_cap_watts);
  }
  if (values.sclk_mhz) add(shared::kSmClock, *values.sclk_mhz);
  if (values.mclk_mhz) add(shared::kMemoryClock, *values.mclk_mhz);
  if (values.fan_percent) add(shared::kFanSpeed, *values.fan_percent);
  if (values.fan_rpm) add(own::kFanRpm, *values.fan_rpm);
  if (values.memory_overdrive_percent) add(own::kMemoryOverDrive, *values.memory_overdrive_percent);
  if (values.energy_microjoules) {
    const double now = *values.energy_microjoules;
    if (!state.energy_last_microjoules) {
      state.energy_counted_microjoules = 0;
    } else if (now >= *state.energy_last_microjoules) {
      *state.energy_counted_microjoules += now - *state.energy_last_microjoules;
    }
    state.energy_last_microjoules = now;
    add(shared::kEnergyJoules, *state.energy_counted_microjoules / 1e6);
  }
}

class AmdCollector final : public Collector {
 public:
  AmdCollector(AmdOptions options, amd::CardDiscovery discovery) : options_(std::move(options)) {
    for (auto& card : discovery.cards) {
      amd::CardSampler sampler(card);
      std::string index = fmt::format("{}", card.key_index);
      cards_.push_back(
          CardState{.card = std::move(card), .sampler = std::move(sampler), .index = std::move(index)});
    }
    for (const auto& problem : discovery.problems) Warn(problem);
  }

  std::string_view Name() const override { return "amd"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (!published_ && options_.publish_metadata) {
      std::vector<AmdCard> cards;
      for (const auto& state : cards_) cards.push_back(state.card);
      options_.publish_metadata(amd::DescribeCards(options_.paths, cards, options_.first_index));
    }
    published_ = true;
    const size_t before = out.items().size();
    std::vector<std::string> problems;
    for (auto& state : cards_) AddCard(state, state.sampler.Sample(problems), out);
    for (const auto& problem : problems) Warn(problem);
    if (out.items().size() == before) return Error{"no AMD GPU value could be read this tick"};
    return OkStatus();
  }

 private:
  void Warn(const std::string& message) const {
    if (options_.warn) options_.warn("amd: " + message);
  }

  AmdOptions options_;
  std::vector<CardState> cards_;
  bool published_ = false;
};

}  // namespace

std::unique_ptr<Collector> MakeAmdCollector(AmdOptions options, amd::CardDiscovery discovery) {
  return std::make_unique<AmdCollector>(std::move(options), std::move(discovery));
}

}  // namespace runmon
