// The AMD collector (amd_collector.hpp): per card, the sysfs sampler's values (amdgpu_sampling.hpp), with
// what sysfs lacked filled from the latest tool reading, become the shared GPU keys (gpu/gpu_metrics.hpp)
// and AMD's own (amd_metrics.hpp); then the run's share of each card. Derived keys need both of their
// inputs: memoryAllocated needs VRAM used and total, powerPercent the power and a cap. gpu.{i}.temp is the
// sensor W&B reads through rocm-smi: memory, else junction, else edge. energyJoules counts from the first
// sample; a counter that goes backwards (the driver was reloaded) counts on from its new value.
#include "collectors/amd/amd_collector.hpp"

#include <utility>

#include <fmt/format.h>

#include "collectors/amd/amd_metadata.hpp"
#include "collectors/amd/amd_metrics.hpp"
#include "collectors/amd/amdgpu_process_share.hpp"
#include "collectors/amd/amdgpu_sampling.hpp"
#include "collectors/amd/tool_values.hpp"
#include "collectors/gpu/gpu_metrics.hpp"
#include "collectors/linux/run_tree.hpp"

namespace runmon {
namespace {

using amd::AmdCard;
using amd::CardValues;

// What a card's keys need between ticks: its index, and the energy counted so far.
struct CardKeys {
  std::string index = {};  // i of gpu.{i}, as text
  std::optional<double> energy_counted_microjoules = {}, energy_last_microjoules = {};
};

struct CardState {
  AmdCard card;
  amd::CardSampler sampler;
  CardKeys keys;
};

// The sensor W&B reads as gpu.{i}.temp through rocm-smi: memory, else junction, else edge.
std::optional<double> WandbTemperature(const CardValues& values) {
  if (values.temp_memory_celsius) return values.temp_memory_celsius;
  if (values.temp_junction_celsius) return values.temp_junction_celsius;
  return values.temp_edge_celsius;
}

void AddValues(CardKeys& keys, const CardValues& values, MetricBatch& out) {
  namespace shared = gpu_metrics;
  namespace own = amd_metrics;
  const auto add = [&](const MetricDescriptor& metric, double value) { out.Add(metric, keys.index, value); };
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
  if (const auto temp = WandbTemperature(values)) add(shared::kTemp, *temp);
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
    if (!keys.energy_last_microjoules) {
      keys.energy_counted_microjoules = 0;
    } else if (now >= *keys.energy_last_microjoules) {
      *keys.energy_counted_microjoules += now - *keys.energy_last_microjoules;
    }
    keys.energy_last_microjoules = now;
    add(shared::kEnergyJoules, *keys.energy_counted_microjoules / 1e6);
  }
}

// The run's share of a card: its own memory and busy time, and the card's device-wide values repeated, as
// W&B and the NVIDIA family write them (metrics.md A.2.4).
void AddShare(const CardKeys& keys, const amd::TreeShare& share, const CardValues& values, MetricBatch& out) {
  namespace shared = gpu_metrics;
  const auto add = [&](const MetricDescriptor& metric, double value) { out.Add(metric, keys.index, value); };
  if (share.busy_percent) add(shared::kProcessGpu, *share.busy_percent);
  if (share.vram_bytes) {
    add(shared::kProcessMemoryAllocatedBytes, static_cast<double>(*share.vram_bytes));
    if (values.vram_total_bytes && *values.vram_total_bytes > 0) {
      add(shared::kProcessMemoryAllocated,
          100.0 * static_cast<double>(*share.vram_bytes) / static_cast<double>(*values.vram_total_bytes));
    }
  }
  if (const auto temp = WandbTemperature(values)) add(shared::kProcessTemp, *temp);
  if (values.power_watts) add(shared::kProcessPowerWatts, *values.power_watts);
  if (values.power_cap_watts) add(shared::kProcessEnforcedPowerLimitWatts, *values.power_cap_watts);
  if (values.power_watts && values.power_cap_watts) {
    add(shared::kProcessPowerPercent, 100.0 * *values.power_watts / *values.power_cap_watts);
  }
}

// Fills what sysfs left unset from a tool's values of the same card.
void FillFrom(CardValues& values, const CardValues& tool) {
  const auto fill = [](auto& field, const auto& other) {
    if (!field && other) field = other;
  };
  fill(values.busy_percent, tool.busy_percent);
  fill(values.memory_busy_percent, tool.memory_busy_percent);
  fill(values.vram_used_bytes, tool.vram_used_bytes);
  fill(values.vram_total_bytes, tool.vram_total_bytes);
  fill(values.vram_used_percent, tool.vram_used_percent);
  fill(values.gtt_used_bytes, tool.gtt_used_bytes);
  fill(values.gtt_total_bytes, tool.gtt_total_bytes);
  fill(values.power_watts, tool.power_watts);
  fill(values.power_cap_watts, tool.power_cap_watts);
  fill(values.temp_edge_celsius, tool.temp_edge_celsius);
  fill(values.temp_junction_celsius, tool.temp_junction_celsius);
  fill(values.temp_memory_celsius, tool.temp_memory_celsius);
  fill(values.sclk_mhz, tool.sclk_mhz);
  fill(values.mclk_mhz, tool.mclk_mhz);
  fill(values.fan_percent, tool.fan_percent);
  fill(values.fan_rpm, tool.fan_rpm);
  fill(values.energy_microjoules, tool.energy_microjoules);
  fill(values.memory_overdrive_percent, tool.memory_overdrive_percent);
}

// Whether a card's tick lacks one of the values every amdgpu card has a source for (what a tool could add).
bool LacksCoreValues(const CardValues& values) {
  return !values.busy_percent || !values.vram_used_bytes || !values.power_watts || !values.sclk_mhz ||
         !(values.temp_edge_celsius || values.temp_junction_celsius || values.temp_memory_celsius);
}

class AmdCollector final : public Collector {
 public:
  AmdCollector(AmdOptions options, amd::CardDiscovery discovery) : options_(std::move(options)) {
    for (auto& card : discovery.cards) {
      amd::CardSampler sampler(card);
      CardKeys keys{.index = fmt::format("{}", card.key_index)};
      addresses_.push_back({.pci_address = card.pci_address, .kfd_gpu_id = card.kfd_gpu_id});
      cards_.push_back(
          CardState{.card = std::move(card), .sampler = std::move(sampler), .keys = std::move(keys)});
    }
    if (options_.pid && *options_.pid > 0 && !cards_.empty()) {
      share_.emplace(options_.paths, RunTree(options_.paths, options_.pid, options_.whole_tree));
    }
    for (const auto& problem : discovery.problems) Warn(problem);
  }

  std::string_view Name() const override { return "amd"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    const double now = options_.monotonic_seconds();
    if (cards_.empty()) return CollectFromTool(now, out);
    if (!published_ && options_.publish_metadata) {
      std::vector<AmdCard> cards;
      for (const auto& state : cards_) cards.push_back(state.card);
      options_.publish_metadata(amd::DescribeCards(options_.paths, cards, options_.host_gpus));
    }
    published_ = true;
    const size_t before = out.items().size();
    std::vector<std::string> problems;
    std::vector<CardValues> values;
    values.reserve(cards_.size());
    bool lacking = false;
    for (auto& state : cards_) {
      values.push_back(state.sampler.Sample(problems));
      lacking = lacking || LacksCoreValues(values.back());
    }
    if (lacking) {
      FillFromTool(now, values);
      for (auto& merged : values) amd::DropImpossibleValues(merged);  // sysfs's used beside a tool's total
    }
    for (size_t i = 0; i < cards_.size(); ++i) AddValues(cards_[i].keys, values[i], out);
    if (share_) {
      const auto shares = share_->Sample(addresses_, now);
      for (size_t i = 0; i < cards_.size() && i < shares.size(); ++i) {
        if (shares[i]) AddShare(cards_[i].keys, *shares[i], values[i], out);
      }
    }
    for (const auto& problem : problems) Warn(problem);
    if (out.items().size() == before) return Error{"no AMD GPU value could be read this tick"};
    return OkStatus();
  }

 private:
  amd::AmdToolFallback* Tool() {
    if (!tool_ && options_.start_tool) {
      tool_ = options_.start_tool();
      options_.start_tool = nullptr;  // one try: Find said whether a tool is there
    }
    return tool_.get();
  }

  // The latest tool reading's values for the cards sysfs found, paired by PCI address; a run is asked for.
  void FillFromTool(double now, std::vector<CardValues>& values) {
    amd::AmdToolFallback* tool = Tool();
    if (tool == nullptr) return;
    tool->Request(now);
    if (auto failure = tool->TakeFailure()) Warn(*failure);
    const auto reading = tool->Latest(now);
    if (!reading) return;
    for (size_t i = 0; i < cards_.size(); ++i) {
      for (const auto& tool_card : reading->cards) {
        if (tool_card.pci_bus && *tool_card.pci_bus == cards_[i].card.pci_address) {
          FillFrom(values[i], tool_card.values);
        }
      }
    }
  }

  // No card in sysfs: the tool's cards, in its order, from the AMD index on.
  Status CollectFromTool(double now, MetricBatch& out) {
    amd::AmdToolFallback* tool = Tool();
    if (tool == nullptr) return Error{"no AMD GPU in sysfs and no tool to ask"};
    tool->Request(now);
    if (auto failure = tool->TakeFailure()) return Error{*failure};
    const auto reading = tool->Latest(now);
    if (!reading) return OkStatus();  // the first run is under way
    if (!published_ && options_.publish_metadata) {
      options_.publish_metadata(
          amd::DescribeToolCards(reading->cards, options_.first_index, options_.device_ids));
      published_ = true;
    }
    tool_keys_.resize(reading->cards.size());
    for (size_t i = 0; i < reading->cards.size(); ++i) {
      const unsigned key_index = options_.first_index + static_cast<unsigned>(i);
      if (!amd::Selected(options_.device_ids, key_index)) continue;
      if (tool_keys_[i].index.empty()) tool_keys_[i].index = fmt::format("{}", key_index);
      AddValues(tool_keys_[i], reading->cards[i].values, out);
    }
    return OkStatus();
  }

  void Warn(const std::string& message) const {
    if (options_.warn) options_.warn("amd: " + message);
  }

  AmdOptions options_;
  std::vector<CardState> cards_;
  std::vector<amd::CardAddress> addresses_;
  std::optional<amd::ProcessShare> share_;
  std::unique_ptr<amd::AmdToolFallback> tool_;
  std::vector<CardKeys> tool_keys_;  // tool-only cards
  bool published_ = false;
};

}  // namespace

std::unique_ptr<Collector> MakeAmdCollector(AmdOptions options, amd::CardDiscovery discovery) {
  return std::make_unique<AmdCollector>(std::move(options), std::move(discovery));
}

}  // namespace runmon
