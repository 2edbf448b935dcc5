// The one explicit list of collectors and the lane each runs in. Lanes are threads; a source that is slow by
// nature (a vendor library, a tool, an HTTP endpoint) gets a lane of its own so it never delays the /proc
// readers, and a collector that hangs unexpectedly is split off its lane by the sampler.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "collectors/nvidia/nvidia_collector.hpp"

namespace runmon {

struct CollectorSpec {
  std::unique_ptr<Collector> collector;
  std::string lane;
};

std::vector<CollectorSpec> BuiltinCollectors(const LinuxCollectorContext& ctx);

// The NVIDIA collector's options for a context (also what `runmon info` probes with).
NvidiaOptions NvidiaOptionsFor(const LinuxCollectorContext& ctx);

}  // namespace runmon
