// Grouping metric keys into charts, and the metric filter. See metric_groups.hpp.
#include "runview/metric_groups.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include <re2/re2.h>

#include "core/catalog.hpp"
#include "core/utf8.hpp"

namespace runmon::runview {
namespace {

// Catalog keys that share a chart with their partner: the chart's id and title, and what the key adds to
// the series name.
struct MergedChart {
  std::string_view pattern;
  std::string_view chart_id;
  std::string_view title;
  std::string_view series_suffix;
};

constexpr std::array kMergedCharts = {
    MergedChart{"disk.{dev}.in", "disk.{dev}.io", "Device I/O", "read"},
    MergedChart{"disk.{dev}.out", "disk.{dev}.io", "Device I/O", "write"},
    MergedChart{"disk.in", "disk.io", "Disk I/O", "read"},
    MergedChart{"disk.out", "disk.io", "Disk I/O", "write"},
    MergedChart{"disk.readMBPerSec", "disk.rate", "Disk I/O rate", "read"},
    MergedChart{"disk.writeMBPerSec", "disk.rate", "Disk I/O rate", "write"},
    MergedChart{"network.sent", "network", "Network traffic", "sent"},
    MergedChart{"network.recv", "network", "Network traffic", "received"},
    MergedChart{"network.sentBytesPerSec", "network.rate", "Network rate", "sent"},
    MergedChart{"network.recvBytesPerSec", "network.rate", "Network rate", "received"},
    MergedChart{"gpu.{i}.pcieTxBytes", "gpu.{i}.pcie", "PCIe traffic", "sent"},
    MergedChart{"gpu.{i}.pcieRxBytes", "gpu.{i}.pcie", "PCIe traffic", "received"},
    MergedChart{"gpu.{i}.nvlinkTxBytes", "gpu.{i}.nvlink", "NVLink traffic", "sent"},
    MergedChart{"gpu.{i}.nvlinkRxBytes", "gpu.{i}.nvlink", "NVLink traffic", "received"},
};

// The system sidebar's first charts, in order.
constexpr std::array<std::string_view, 14> kSidebarFirst = {
    "gpu.{i}.gpu",
    "gpu.{i}.memoryAllocatedBytes",
    "gpu.{i}.memoryAllocated",
    "cpu",
    "cpu_percent",
    "proc.memory.rssMB",
    "memory_percent",
    "disk.{dev}.io",
    "disk.rate",
    "disk.io",
    "network.rate",
    "network",
    "gpu.{i}.temp",
    "gpu.{i}.powerWatts",
};

// The part of `key` that the pattern's one placeholder matched ("" when the pattern has none).
std::string_view PlaceholderValue(std::string_view key, std::string_view pattern) {
  const size_t open = pattern.find('{');
  if (open == std::string_view::npos) return {};
  const size_t close = pattern.find('}', open);
  const size_t suffix_length = pattern.size() - close - 1;
  if (key.size() < open + suffix_length) return {};
  return key.substr(open, key.size() - open - suffix_length);
}

std::string SeriesName(std::string_view pattern, std::string_view value) {
  if (value.empty()) return {};
  if (pattern.starts_with("gpu.")) return "GPU " + std::string(value);
  if (pattern.starts_with("cpu.{i}")) return "Core " + std::string(value);
  return std::string(value);
}

std::string JoinSeries(std::string_view first, std::string_view second) {
  if (first.empty()) return std::string(second);
  if (second.empty()) return std::string(first);
  return std::string(first) + " " + std::string(second);
}

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

constexpr int kOtherOrder = 1 << 20;

std::vector<ChartGroup> BuildGroups(std::span<const RunModel* const> runs,
                                    std::span<const std::string> labels, bool history) {
  std::map<std::tuple<int, std::string>, ChartGroup> groups;
  for (size_t run = 0; run < runs.size(); ++run) {
    const auto& series = history ? runs[run]->history_series() : runs[run]->system_series();
    const std::string_view label = runs.size() > 1 && run < labels.size() ? labels[run] : std::string_view();
    for (const auto& [key, data] : series) {
      const KeyIdentity identity = history ? IdentifyHistoryKey(key) : IdentifySystemKey(key);
      auto& group = groups[{identity.order, identity.chart_id}];
      if (group.members.empty()) {
        group.id = identity.chart_id;
        group.title = identity.title;
        group.unit = identity.unit;
        group.section = identity.section;
        group.order = identity.order;
        group.x_axis = history ? XAxisKind::kStep : XAxisKind::kElapsedSeconds;
      }
      // A scraped series is named by its labels when the run holds the index -> labels table.
      const std::string* series_labels = runs[run]->SeriesLabels(key);
      group.members.push_back(
          {key, JoinSeries(label, series_labels != nullptr ? *series_labels : identity.series), run, &data});
    }
  }
  std::vector<ChartGroup> result;
  result.reserve(groups.size());
  for (auto& [sort_key, group] : groups) result.push_back(std::move(group));
  return result;
}

}  // namespace

KeyIdentity IdentifySystemKey(std::string_view key) {
  // W&B's "/l:<label>" suffix names a series (a node, a label set): group by the key without it.
  std::string_view label;
  if (const size_t at = key.find("/l:"); at != std::string_view::npos) {
    label = key.substr(at + 3);
    key = key.substr(0, at);
  }
  KeyIdentity identity;
  const MetricDefinition* definition = FindMetricDefinition(key);
  if (definition == nullptr) {
    // Unknown: grouped by the name without a trailing numeric index.
    identity.section = ChartSection::kOther;
    identity.order = kOtherOrder;
    const size_t dot = key.rfind('.');
    if (dot != std::string_view::npos && dot > 0 && AllDigits(key.substr(dot + 1))) {
      identity.chart_id = std::string(key.substr(0, dot));
      identity.series = JoinSeries("#" + std::string(key.substr(dot + 1)), label);
    } else {
      identity.chart_id = std::string(key);
      identity.series = std::string(label);
    }
    identity.title = identity.chart_id;
    return identity;
  }
  identity.unit = std::string(definition->unit);
  identity.order = static_cast<int>(definition - MetricCatalog().data());
  const std::string_view value = PlaceholderValue(key, definition->pattern);
  std::string series = SeriesName(definition->pattern, value);
  const auto merged = std::find_if(kMergedCharts.begin(), kMergedCharts.end(),
                                   [&](const MergedChart& m) { return m.pattern == definition->pattern; });
  if (merged != kMergedCharts.end()) {
    identity.chart_id = std::string(merged->chart_id);
    identity.title = std::string(merged->title);
    // Both halves sort where the first one is in the catalog.
    for (const auto& other : kMergedCharts) {
      if (other.chart_id == merged->chart_id) {
        if (const auto* first = FindMetricDefinition(other.pattern); first != nullptr) {
          identity.order = std::min(identity.order, static_cast<int>(first - MetricCatalog().data()));
        }
      }
    }
    series = JoinSeries(series, merged->series_suffix);
  } else {
    identity.chart_id = std::string(definition->pattern);
    identity.title = std::string(definition->title);
  }
  identity.series = JoinSeries(series, label);
  return identity;
}

KeyIdentity IdentifyHistoryKey(std::string_view key) {
  KeyIdentity identity;
  identity.chart_id = std::string(key);
  identity.title = std::string(key);
  identity.section = ChartSection::kLogged;
  return identity;
}

std::vector<ChartGroup> GroupSystemCharts(std::span<const RunModel* const> runs,
                                          std::span<const std::string> run_labels) {
  return BuildGroups(runs, run_labels, false);
}

std::vector<ChartGroup> GroupHistoryCharts(std::span<const RunModel* const> runs,
                                           std::span<const std::string> run_labels) {
  return BuildGroups(runs, run_labels, true);
}

void SortForSidebar(std::vector<ChartGroup>& groups) {
  const auto rank = [](const ChartGroup& group) {
    const auto it = std::find(kSidebarFirst.begin(), kSidebarFirst.end(), group.id);
    return it == kSidebarFirst.end() ? static_cast<int>(kSidebarFirst.size())
                                     : static_cast<int>(it - kSidebarFirst.begin());
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const ChartGroup& a, const ChartGroup& b) { return rank(a) < rank(b); });
}

MetricFilter::MetricFilter() = default;
MetricFilter::~MetricFilter() = default;
MetricFilter::MetricFilter(MetricFilter&&) noexcept = default;
MetricFilter& MetricFilter::operator=(MetricFilter&&) noexcept = default;

void MetricFilter::Set(std::string_view pattern, bool glob) {
  pattern_ = std::string(pattern);
  glob_ = glob;
  lowered_ = AsciiLowercase(pattern);
  regex_.reset();
  if (pattern.empty()) return;
  std::string expression;
  if (glob) {
    if (pattern.find_first_of("*?") == std::string_view::npos) return;  // no wildcard: a substring
    for (const char c : pattern) {
      if (c == '*') {
        expression += ".*";
      } else if (c == '?') {
        expression += '.';
      } else {
        expression += RE2::QuoteMeta(std::string_view(&c, 1));
      }
    }
  } else {
    if (pattern.find_first_of(".^$*+?()[]{}|\\") == std::string_view::npos) return;
    expression = std::string(pattern);
  }
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);  // a pattern needing more is refused (then: substring)
  auto regex = std::make_unique<RE2>(expression, options);
  if (regex->ok()) regex_ = std::move(regex);
}

bool MetricFilter::Matches(std::string_view text) const {
  if (pattern_.empty()) return true;
  if (regex_) return RE2::PartialMatch(text, *regex_);
  return AsciiLowercase(text).find(lowered_) != std::string::npos;
}

bool MetricFilter::Matches(const ChartGroup& group) const {
  if (pattern_.empty()) return true;
  if (Matches(group.title) || Matches(group.id)) return true;
  return std::any_of(group.members.begin(), group.members.end(),
                     [&](const ChartMember& member) { return Matches(member.key); });
}

}  // namespace runmon::runview
