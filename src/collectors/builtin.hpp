// The one explicit list of collectors and the lane each runs in. Lanes are threads: a collector that can
// block (statvfs on a dead network mount, later a driver call or a tool) gets its own so it never delays
// the /proc readers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/linux/linux_collectors.hpp"

namespace runmon {

struct CollectorSpec {
  std::unique_ptr<Collector> collector;
  std::string lane;
};

std::vector<CollectorSpec> BuiltinCollectors(const LinuxCollectorContext& ctx);

}  // namespace runmon
