// Grouping metric keys into charts, and the metric filter. See metric_groups.hpp.
#include "runview/metric_groups.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include <re2/re2.h>

#include "core/catalog.hpp"
#include "core/utf8.hpp"
#include "runview/media_log.hpp"

namespace runmon::runview {
namespace {

std::string SeriesName(const MetricDefinition& definition, std::string_view value) {
  if (value.empty()) return {};
  if (definition.series_label.empty()) return std::string(value);
  return std::string(definition.series_label) + " " + std::string(value);
}

// The chart a definition's keys go to: its merged chart's id, or its own pattern.
std::string_view ChartId(const MetricDefinition& definition) {
  return definition.merge.chart_id.empty() ? definition.pattern : definition.merge.chart_id;
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
      // A scraped series is named by its labels when the run holds the index -> labels table (its keys are
      // the scraped ones, without the run's /l: label).
      const LabelledKey split = SplitKeyLabel(key);
      const std::string* series_labels = runs[run]->SeriesLabels(split.base);
      group.members.push_back(
          {key,
           JoinSeries(label,
                      series_labels != nullptr ? JoinSeries(*series_labels, split.label) : identity.series),
           run, &data});
    }
  }
  std::vector<ChartGroup> result;
  result.reserve(groups.size());
  for (auto& [sort_key, group] : groups) {
    // Series in their run's order, each run's keys in natural order: Core 2 before Core 10.
    std::stable_sort(
        group.members.begin(), group.members.end(), [](const ChartMember& a, const ChartMember& b) {
          if (a.run != b.run) return a.run < b.run;
          const int order = CompareNatural(a.key, b.key);
          return order != 0 ? order < 0
                            : a.key < b.key;  // "gpu.09" and "gpu.9": the same number, ordered as text
        });
    result.push_back(std::move(group));
  }
  return result;
}

}  // namespace

LabelledKey SplitKeyLabel(std::string_view key) {
  constexpr std::string_view kSuffix = "/l:";
  size_t at = key.find(kSuffix);
  LabelledKey split{key.substr(0, at), {}};
  while (at != std::string_view::npos) {
    const size_t next = key.find(kSuffix, at + kSuffix.size());
    split.label = JoinSeries(split.label, key.substr(at + kSuffix.size(), next - at - kSuffix.size()));
    at = next;
  }
  return split;
}

KeyIdentity IdentifySystemKey(std::string_view full_key) {
  // W&B's "/l:<label>" suffix names a series (a node, a label set): the catalog matches the key without it,
  // the one place a reader's keys meet the catalog.
  const LabelledKey split = SplitKeyLabel(full_key);
  const std::string_view key = split.base;
  const std::string& label = split.label;
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
  const int index = static_cast<int>(definition - MetricCatalog().data());
  identity.order = index;
  const std::string_view value = PlaceholderValue(key, MatchingPattern(*definition, key));
  std::string series = SeriesName(*definition, value);
  identity.chart_id = std::string(ChartId(*definition));
  if (!definition->merge.chart_id.empty()) {
    identity.title = std::string(definition->merge.title);
    // Both halves sort where the first one is in the catalog.
    for (int other = 0; other < index; ++other) {
      if (ChartId(MetricCatalog()[static_cast<size_t>(other)]) == identity.chart_id) {
        identity.order = other;
        break;
      }
    }
    series = JoinSeries(series, definition->merge.series_suffix);
  } else {
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
  // A chart's rank is its definitions' sidebar_rank (the first charts, in order), else after them.
  const auto rank = [](const ChartGroup& group) {
    for (const MetricDefinition& definition : MetricCatalog()) {
      if (definition.sidebar_rank > 0 && ChartId(definition) == group.id) return definition.sidebar_rank;
    }
    return std::numeric_limits<int>::max();
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
