// Fuzzes ParseMountinfo (/proc/PID/mountinfo, octal escapes): no crash; fields are never longer than input.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto mounts = runmon::ParseMountinfo(runmon::fuzz::AsText(data, size));
  if (!mounts) {
    FUZZ_CHECK(!mounts.error().empty());
    return 0;
  }
  for (const auto& mount : *mounts) {
    FUZZ_CHECK(!mount.fs_type.empty());
    FUZZ_CHECK(!runmon::fuzz::HasSpace(mount.fs_type));
    // Unescaping only shrinks.
    FUZZ_CHECK(mount.root.size() <= size && mount.mount_point.size() <= size && mount.source.size() <= size);
  }
  return 0;
}
