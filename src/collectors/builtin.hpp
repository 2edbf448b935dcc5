// The collector families and the lanes their collectors run in. Each family's folder defines one
// CollectorFamily (its factory: name, lane, whether it runs by default, the settings it reads, start and
// probe) and registers it with runmon_collector_family() (cmake/RunmonMetricFamily.cmake); the table is
// generated from those calls, so adding a family touches no file here. Lanes are threads; a source that is
// slow by nature (a vendor library, a tool, an HTTP endpoint) gets a lane of its own so it never delays the
// /proc readers, and a collector that hangs unexpectedly is split off its lane by the sampler.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/collector.hpp"
#include "collectors/collector_context.hpp"
#include "core/result.hpp"

namespace runmon {

// What starting a family gives: its collectors, or why there are none.
struct FamilyStart {
  std::vector<std::unique_ptr<Collector>> collectors = {};
  std::string absent_reason = {};  // when `collectors` is empty: "no libnvidia-ml.so.1", "... not set"
  // Collectors that may block (statvfs on a dead network mount) go last in their lane, so that when the
  // sampler splits one off, it delays nothing after it for longer than one deadline.
  bool may_block = false;

  // A family's start with one collector.
  static FamilyStart Of(std::unique_ptr<Collector> collector);
};

struct CollectorFamily {
  std::string_view name = {};
  std::string_view lane = {};  // empty: a lane per collector, named after the collector
  bool enabled_by_default = true;
  std::span<const std::string_view> settings = {};  // the x_stats_* settings (and variables) it reads
  FamilyStart (*start)(const CollectorContext& ctx) = nullptr;
  // Its part of the run's static metadata for `runmon info`, or why the family is unavailable; null when
  // it has none (then `start` says whether it is available).
  Result<nlohmann::json> (*probe)(const CollectorContext& ctx) = nullptr;
};

// Every family, in registration order (generated: collector_families.cpp in the build tree).
std::span<const CollectorFamily* const> CollectorFamilies();

struct CollectorSpec {
  std::unique_ptr<Collector> collector;
  std::string lane;
};

// Every family's collectors; order within a lane is the order of keys in a sample.
std::vector<CollectorSpec> BuiltinCollectors(const CollectorContext& ctx);

// The context every family starts from: the system clocks, the host's facts, the monitored process (`pid`;
// unset: no process metrics) and its CUDA_VISIBLE_DEVICES (runmon's own, from `environment`, when that
// process's environment has none or cannot be read). `environment` is the caller's, as NAME=value strings.
CollectorContext MakeCollectorContext(const Settings& settings, const HostPaths& paths,
                                      std::optional<long> pid, const std::vector<std::string>& environment,
                                      std::function<void(const std::string&)> warn);

}  // namespace runmon
