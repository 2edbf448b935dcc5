// The system clocks and the collector context's environment helpers (see collector_context.hpp).
#include "collectors/collector_context.hpp"

#include <ctime>

namespace runmon {

Clocks Clocks::System() {
  auto read = [](clockid_t id) {
    timespec t{};
    ::clock_gettime(id, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  return Clocks{[read] { return read(CLOCK_BOOTTIME); }, [read] { return read(CLOCK_MONOTONIC); }};
}

std::optional<std::string> EnvironmentValue(const CollectorContext& ctx, const std::string& name) {
  const auto it = ctx.environment.find(name);
  if (it == ctx.environment.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> EnvironmentMap(const std::vector<std::string>& entries) {
  std::map<std::string, std::string> out;
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    out.emplace(entry.substr(0, equals), entry.substr(equals + 1));  // the first of a name twice wins
  }
  return out;
}

std::string ToolSearchPath(const CollectorContext& ctx) {
  if (auto path = EnvironmentValue(ctx, "PATH")) return *path;
  return ToolCommand{}.search_path;
}

}  // namespace runmon
