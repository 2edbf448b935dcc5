// Network traffic metrics (linux/network_collector.cpp emits them).
// The family's metric descriptors: each key is spelled here and nowhere else (core/metric_descriptor.hpp).
#pragma once

#include "core/metric_descriptor.hpp"

namespace runmon::network_metrics {

inline constexpr MetricDescriptor kSent{
    .pattern = "network.sent",
    .title = "Network sent",
    .unit = "bytes",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kNetwork,
    .source = "network",
    .description = "Bytes sent since the first sample, all interfaces including loopback.",
    .prometheus_name = "runmon_network_sent_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .merge = {"network", "Network traffic", "sent"},
    .sidebar_rank = 12};
inline constexpr MetricDescriptor kReceived{
    .pattern = "network.recv",
    .title = "Network received",
    .unit = "bytes",
    .kind = MetricKind::kSinceStart,
    .section = MetricSection::kNetwork,
    .source = "network",
    .description = "Bytes received since the first sample, all interfaces including loopback.",
    .prometheus_name = "runmon_network_received_bytes_total",
    .prometheus_type = PrometheusType::kCounter,
    .merge = {"network", "Network traffic", "received"},
    .sidebar_rank = 12};
inline constexpr MetricDescriptor kSendRate{.pattern = "network.sentBytesPerSec",
                                            .title = "Network send rate",
                                            .unit = "bytes/s",
                                            .kind = MetricKind::kRate,
                                            .section = MetricSection::kNetwork,
                                            .source = "network",
                                            .description = "Bytes sent per second during the last interval.",
                                            .prometheus_name = "runmon_network_sent_bytes_per_second",
                                            .merge = {"network.rate", "Network rate", "sent"},
                                            .sidebar_rank = 11};
inline constexpr MetricDescriptor kReceiveRate{
    .pattern = "network.recvBytesPerSec",
    .title = "Network receive rate",
    .unit = "bytes/s",
    .kind = MetricKind::kRate,
    .section = MetricSection::kNetwork,
    .source = "network",
    .description = "Bytes received per second during the last interval.",
    .prometheus_name = "runmon_network_received_bytes_per_second",
    .merge = {"network.rate", "Network rate", "received"},
    .sidebar_rank = 11};

}  // namespace runmon::network_metrics
