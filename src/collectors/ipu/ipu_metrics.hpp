// Graphcore IPUs' metrics, as W&B's legacy IPU collector keyed them (metrics.md B §6): ipu.{id}.<field>,
// the field named as gcipuinfo names it with the unit W&B's parse_metric appends ("average board temp
// (C)"). LEET's IPU charts look for some of them without the unit ("ipu.0.average board temp"), so readers
// accept that spelling too. The ipu collector (ipu_collector.hpp) emits them; the fields that have no
// descriptor here (id, board ipu index, user process id, numa node, ...) are still emitted on a device's
// first sight, as W&B does, and readers show them under "Other".
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include <string>
#include <string_view>

#include "core/metric_descriptor.hpp"

namespace runmon::ipu_metrics {

inline constexpr MetricDescriptor kBoardTemp{
    .pattern = "ipu.{id}.average board temp (C)",
    .title = "IPU Board Temp",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description = "The average temperature of the board IPU id sits on (gcipuinfo's `average board temp`).",
    .prometheus_name = "runmon_ipu_board_temperature_celsius",
    .prometheus_label = "ipu",
    .series_label = "IPU",
    .also_accepted = "ipu.{id}.average board temp"};
inline constexpr MetricDescriptor kDieTemp{
    .pattern = "ipu.{id}.average die temp (C)",
    .title = "IPU Die Temp",
    .unit = "°C",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description = "The average temperature of IPU id's die (`average die temp`).",
    .prometheus_name = "runmon_ipu_die_temperature_celsius",
    .prometheus_label = "ipu",
    .series_label = "IPU",
    .also_accepted = "ipu.{id}.average die temp"};
inline constexpr MetricDescriptor kClock{.pattern = "ipu.{id}.clock (MHz)",
                                         .title = "IPU Clock",
                                         .unit = "MHz",
                                         .kind = MetricKind::kGauge,
                                         .section = MetricSection::kAccelerator,
                                         .source = "ipu",
                                         .description = "IPU id's clock frequency (`clock`).",
                                         .prometheus_name = "runmon_ipu_clock_hertz",
                                         .prometheus_label = "ipu",
                                         .series_label = "IPU",
                                         .also_accepted = "ipu.{id}.clock"};
inline constexpr MetricDescriptor kPower{
    .pattern = "ipu.{id}.ipu power (W)",
    .title = "IPU Power",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description =
        "The power IPU id draws (`ipu power`; boards that cannot measure it say N/A, and the key is "
        "absent).",
    .prometheus_name = "runmon_ipu_power_watts",
    .prometheus_label = "ipu",
    .series_label = "IPU",
    .also_accepted = "ipu.{id}.ipu power"};
inline constexpr MetricDescriptor kUtilisation{
    .pattern = "ipu.{id}.ipu utilisation (%)",
    .title = "IPU utilisation",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description = "How busy IPU id is (`ipu utilisation`), 0-100.",
    .prometheus_name = "runmon_ipu_utilization_ratio",
    .prometheus_label = "ipu",
    .series_label = "IPU"};
inline constexpr MetricDescriptor kSessionUtilisation{
    .pattern = "ipu.{id}.ipu utilisation (session) (%)",
    .title = "IPU Session",
    .unit = "%",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description =
        "How busy IPU id has been since the process using it attached (`ipu utilisation (session)`), "
        "0-100.",
    .prometheus_name = "runmon_ipu_session_utilization_ratio",
    .prometheus_label = "ipu",
    .series_label = "IPU",
    .also_accepted = "ipu.{id}.ipu utilisation (session)"};
inline constexpr MetricDescriptor kLinkSpeed{
    .pattern = "ipu.{id}.link speed (GT/s)",
    .title = "IPU link speed",
    .unit = "GT/s",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description =
        "The PCIe link speed of IPU id's board (`link speed`). Written on a device's first sight only.",
    .prometheus_name = "runmon_ipu_link_speed_transfers_per_second",
    .prometheus_label = "ipu",
    .series_label = "IPU"};
inline constexpr MetricDescriptor kBoardPower{
    .pattern = "ipu.{id}.total board power (W)",
    .title = "IPU board power",
    .unit = "W",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description =
        "The power drawn by the whole board IPU id sits on (`total board power`; C600 cards). Written on a "
        "device's first sight only.",
    .prometheus_name = "runmon_ipu_board_power_watts",
    .prometheus_label = "ipu",
    .series_label = "IPU"};
inline constexpr MetricDescriptor kLinkCorrectableErrors{
    .pattern = "ipu.{id}.link correctable error count",
    .title = "IPU link correctable errors",
    .unit = "count",
    .kind = MetricKind::kGauge,
    .section = MetricSection::kAccelerator,
    .source = "ipu",
    .description =
        "Correctable errors on IPU id's PCIe link since the driver loaded (`link correctable error "
        "count`). Written on a device's first sight only.",
    .prometheus_name = "runmon_ipu_link_correctable_errors_total",
    .prometheus_type = PrometheusType::kCounter,
    .prometheus_label = "ipu",
    .series_label = "IPU"};

// The key of a device's field as ParseIpuMetric names it ("clock (MHz)"): its descriptor's key when it has
// one, else ipu.{id}.<field> all the same (a field W&B writes that runmon has no descriptor for).
std::string FieldKey(std::string_view id, std::string_view field);

// The descriptor of a field ("clock (MHz)"), or nullptr.
const MetricDescriptor* FieldDescriptor(std::string_view field);

}  // namespace runmon::ipu_metrics
