// The Google TPU collector: one collector in a lane of its own ("tpu"), made only when the PCI scan found
// chips (tpu_chips.hpp). Every tick it asks libtpu's monitoring SDK first, for every metric of the registry
// that has SDK names (tpu_emit.hpp), and then the runtime-metrics service, at each of its addresses, for
// the metrics the SDK did not give and the service lists as supported (ListSupportedMetrics, asked again
// when a service comes back and every minute), all of one address's metrics in one batch under one request
// timeout. The service lives inside the workload: an address where nothing listens (the workload has not
// started, or has ended) is passed over quietly, within the probe timeout, and a slow one costs its lane
// one request timeout a tick and delays no other lane. The SDK and the gRPC client are both opened on the
// lane's thread at the first tick (libtpu's library and client, the module with gRPC), never at start-up;
// the chips' metadata (tpu = {name, hbm_gib, devices_per_chip, count}) is published then too.
// Owner PIDs: the monitored tree's processes holding a TPU device node open (/dev/accel<N> on v2-v4,
// /dev/vfio/<N> from v5e), looked for at the first tick and once a minute after, and published into the
// metadata (tpu.owner_pids) when they change. Addresses are read one after another: each that stalls costs
// the lane its own timeouts.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collectors/collector.hpp"
#include "collectors/tpu/libtpu_sdk.hpp"
#include "collectors/tpu/runtime_metrics_client.hpp"
#include "collectors/tpu/tpu_chips.hpp"
#include "collectors/tpu/tpu_emit.hpp"
#include "host/host_paths.hpp"

namespace runmon {

struct TpuOptions {
  tpu::TpuChips chips;                 // what the PCI scan found (a type and at least one chip)
  std::vector<std::string> addresses;  // the service's, "127.0.0.1:8431", in TPU_RUNTIME_METRICS_PORTS order
  std::function<Result<std::unique_ptr<tpu::RuntimeMetricsClient>>(const std::string& address)> make_client;
  // libtpu's SDK, when it was found (null: the service alone); called once, at the first tick.
  std::function<Result<std::unique_ptr<tpu::LibtpuSdk>>()> open_sdk;
  HostPaths paths;
  std::optional<long> pid;  // the monitored process (owner PIDs)
  bool whole_tree = true;
  std::function<double()> monotonic_seconds;
  std::function<void(const nlohmann::json&)> publish_metadata;
  std::function<void(const std::string&)> warn;
};

// tpu = {name, hbm_gib, devices_per_chip, count} (W&B's), with other_types when generations are mixed.
nlohmann::json DescribeTpuChips(const tpu::TpuChips& chips);

// The device nodes a process's descriptors (/proc/PID/fd/*) point at that are TPUs; pure: the links' targets.
bool IsTpuDeviceNode(std::string_view link_target);

std::unique_ptr<Collector> MakeTpuCollector(TpuOptions options);

}  // namespace runmon
