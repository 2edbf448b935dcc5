// HostPaths: where the kernel's proc and sys trees are. Every collector receives one; none spells the real
// locations, so each is tested on a fixture tree (tests/fixtures/hosts/...) and can watch a host's trees
// mounted elsewhere (a container with the host's /proc at /host/proc).
#pragma once

#include <filesystem>
#include <string>

namespace runmon {

struct HostPaths {
  std::filesystem::path proc;
  std::filesystem::path sys;
  std::filesystem::path etc;   // for os-release only
  std::filesystem::path root;  // the tree itself, for the few files elsewhere (Kubernetes' service account)

  // The running machine's trees.
  static HostPaths System();
  // root/proc, root/sys, root/etc and root, for fixture trees.
  static HostPaths Under(const std::filesystem::path& root);

  std::filesystem::path Proc(const std::string& relative) const { return proc / relative; }
  std::filesystem::path Sys(const std::string& relative) const { return sys / relative; }
  std::filesystem::path Root(const std::string& relative) const { return root / relative; }

  // A mount point as the kernel names it (mountinfo: "/sys/fs/cgroup") mapped into these trees, so a
  // cgroup hierarchy found in a fixture's mountinfo is read from the fixture.
  std::filesystem::path MapMountPoint(const std::string& mount_point) const;
};

}  // namespace runmon
