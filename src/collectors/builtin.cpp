// Starting every family (see builtin.hpp). The host families share one lane: each lane costs a thread
// wake-up per tick, which on a virtual machine costs more than most of these collectors.
#include "collectors/builtin.hpp"

#include <algorithm>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {

FamilyStart FamilyStart::Of(std::unique_ptr<Collector> collector) {
  FamilyStart started;
  started.collectors.push_back(std::move(collector));
  return started;
}

std::vector<CollectorSpec> BuiltinCollectors(const CollectorContext& ctx) {
  std::vector<CollectorSpec> specs;
  std::vector<CollectorSpec> blocking;  // after the others of their lane (FamilyStart::may_block)
  for (const CollectorFamily* family : CollectorFamilies()) {
    FamilyStart started = family->start(ctx);
    for (auto& collector : started.collectors) {
      std::string lane(family->lane.empty() ? collector->Name() : family->lane);
      (started.may_block ? blocking : specs).push_back({std::move(collector), std::move(lane)});
    }
  }
  std::move(blocking.begin(), blocking.end(), std::back_inserter(specs));
  return specs;
}

CollectorContext MakeCollectorContext(const Settings& settings, const HostPaths& paths,
                                      std::optional<long> pid, const std::vector<std::string>& environment,
                                      std::function<void(const std::string&)> warn) {
  CollectorContext ctx;
  ctx.paths = paths;
  ctx.settings = settings;
  ctx.clocks = Clocks::System();
  ctx.environment = EnvironmentMap(environment);
  if (pid && *pid > 0) ctx.pid = pid;
  ctx.facts = DetectHostFacts(paths, settings, ctx.pid, warn);
  if (ctx.pid) {
    if (auto process_environment = ReadFileToString(paths.Proc(std::to_string(*ctx.pid) + "/environ"))) {
      if (auto value = FindEnvironValue(*process_environment, "CUDA_VISIBLE_DEVICES")) {
        ctx.cuda_visible_devices = std::string(*value);
      }
    }
  }
  if (!ctx.cuda_visible_devices) {
    if (auto it = ctx.environment.find("CUDA_VISIBLE_DEVICES"); it != ctx.environment.end()) {
      ctx.cuda_visible_devices = it->second;
    }
  }
  ctx.warn = std::move(warn);
  return ctx;
}

}  // namespace runmon
