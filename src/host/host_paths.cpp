// The one place that names the kernel's real trees.
#include "host/host_paths.hpp"

#include <string_view>
#include <utility>

namespace runmon {

HostPaths HostPaths::System() {
  return HostPaths{"/proc", "/sys", "/etc", "/"};
}

std::filesystem::path HostPaths::MapMountPoint(const std::string& mount_point) const {
  const std::string_view point = mount_point;
  for (const auto& [prefix, base] :
       {std::pair<std::string_view, const std::filesystem::path*>{"/sys", &sys},
        std::pair<std::string_view, const std::filesystem::path*>{"/proc", &proc}}) {
    if (point == prefix) return *base;
    if (point.starts_with(prefix) && point[prefix.size()] == '/') {
      return *base / std::filesystem::path(point.substr(prefix.size() + 1));
    }
  }
  return mount_point;
}

HostPaths HostPaths::Under(const std::filesystem::path& root) {
  return HostPaths{root / "proc", root / "sys", root / "etc", root};
}

}  // namespace runmon
