// The catalog: the families' tables joined in section order, the {placeholder} matcher and the generated
// docs/metrics.md. Keys are spelled exactly as W&B's system metrics (metrics.md A.1), plus the runmon
// additions of A.3; units are fixed per key (A.2.6).
#include "core/catalog.hpp"

#include <vector>

#include <fmt/format.h>

namespace runmon {
namespace {

constexpr MetricSection kSections[] = {
    MetricSection::kCpu,    MetricSection::kMemory, MetricSection::kDisk,        MetricSection::kNetwork,
    MetricSection::kCgroup, MetricSection::kGpu,    MetricSection::kAccelerator, MetricSection::kMonitor};

std::vector<MetricDefinition> JoinFamilies() {
  std::vector<MetricDefinition> joined;
  for (const MetricSection section : kSections) {
    for (const auto& table : MetricFamilyTables()) {
      for (const MetricDescriptor& descriptor : table) {
        if (descriptor.section == section) joined.push_back(descriptor);
      }
    }
  }
  return joined;
}

}  // namespace

std::span<const MetricDefinition> MetricCatalog() {
  static const std::vector<MetricDefinition> catalog = JoinFamilies();
  return catalog;
}

bool KeyMatchesPattern(std::string_view key, std::string_view pattern) {
  // Iterative glob where each {x} placeholder matches one or more characters.
  size_t k = 0, p = 0;
  size_t star_p = std::string_view::npos, star_k = 0;
  while (k < key.size()) {
    if (p < pattern.size() && pattern[p] == '{') {
      const size_t close = pattern.find('}', p);
      if (close == std::string_view::npos) return false;
      star_p = close + 1;
      star_k = k + 1;  // the placeholder takes at least one character
      k = star_k;
      p = star_p;
      continue;
    }
    if (p < pattern.size() && pattern[p] == key[k]) {
      ++k;
      ++p;
      continue;
    }
    if (star_p != std::string_view::npos) {
      k = ++star_k;
      p = star_p;
      if (k > key.size()) return false;
      continue;
    }
    return false;
  }
  // A trailing placeholder needs one character, which the key no longer has.
  return p == pattern.size();
}

std::string_view MatchingPattern(const MetricDescriptor& descriptor, std::string_view key) {
  if (KeyMatchesPattern(key, descriptor.pattern)) return descriptor.pattern;
  if (!descriptor.also_accepted.empty() && KeyMatchesPattern(key, descriptor.also_accepted)) {
    return descriptor.also_accepted;
  }
  return {};
}

std::string_view PlaceholderValue(std::string_view key, std::string_view pattern) {
  const size_t open = pattern.find('{');
  if (open == std::string_view::npos) return {};
  const size_t close = pattern.find('}', open);
  const size_t suffix_length = pattern.size() - close - 1;
  if (key.size() < open + suffix_length) return {};
  return key.substr(open, key.size() - open - suffix_length);
}

std::string MetricKey(const MetricDescriptor& descriptor, std::string_view value) {
  std::string key(descriptor.pattern);
  const size_t open = key.find('{');
  if (open == std::string::npos) return key;
  return key.replace(open, key.find('}', open) - open + 1, value);
}

const MetricDefinition* FindMetricDefinition(std::string_view key) {
  for (const auto& definition : MetricCatalog()) {
    if (!MatchingPattern(definition, key).empty()) return &definition;
  }
  return nullptr;
}

std::string_view MetricKindName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kSinceStart:
      return "since start";
    case MetricKind::kRate:
      return "rate";
  }
  return "gauge";
}

std::string RenderCatalogMarkdown() {
  std::string out =
      "# Metrics\n\n"
      "Generated from the collector families' metric descriptors (each family's `*_metrics.hpp` under "
      "`src/collectors/`, joined by `src/core/catalog.cpp`) by `runmon catalog --markdown`; do not edit by "
      "hand.\n\n"
      "Keys are spelled as W&B's system metrics. `{path}` is a configured disk path used verbatim "
      "(`disk./.usageGB`), `{dev}` a block device name (`disk.nvme0n1.in`), `{i}` an index, `{id}` an IPU's "
      "device id (`ipu.0.clock (MHz)`). A value that "
      "cannot be read is left out of the sample, never written as 0.\n\n"
      "| Key | Title | Unit | Kind | Source | Description |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& d : MetricCatalog()) {
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", d.pattern, d.title, d.unit,
                       MetricKindName(d.kind), d.source, d.description);
  }
  return out;
}

}  // namespace runmon
