// The metric catalog: every family's metric descriptors (core/metric_descriptor.hpp), joined. Each family's
// folder holds its table and registers it in its CMakeLists.txt (runmon_metric_family, cmake/); the join is
// generated from that list, so adding a family touches no file here. docs/metrics.md is generated from the
// catalog, and every display (the sample table, the TUI, the dashboard, the exporter) takes titles, units and
// names from here.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/metric_descriptor.hpp"

namespace runmon {

using MetricDefinition = MetricDescriptor;

// Every definition, in documentation order: by section, then in the families' order within one.
std::span<const MetricDefinition> MetricCatalog();

// The definition whose pattern (or the spelling it also accepts) matches `key` ({x} matches one or more
// characters), or nullptr.
const MetricDefinition* FindMetricDefinition(std::string_view key);

std::string_view MetricKindName(MetricKind kind);

// docs/metrics.md, rendered from the catalog.
std::string RenderCatalogMarkdown();

// The families' tables in registration order (generated: metric_families.cpp in the build tree).
std::span<const std::span<const MetricDescriptor>> MetricFamilyTables();

}  // namespace runmon
