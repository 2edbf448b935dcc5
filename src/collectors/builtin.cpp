// Starting every family (see builtin.hpp). The host families share one lane: each lane costs a thread
// wake-up per tick, which on a virtual machine costs more than most of these collectors.
#include "collectors/builtin.hpp"

#include <algorithm>

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

}  // namespace runmon
