// Fuzzes ParseDiskstats (/proc/diskstats): no crash; device names are single non-empty fields.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto disks = runmon::ParseDiskstats(runmon::fuzz::AsText(data, size));
  if (!disks) {
    FUZZ_CHECK(!disks.error().empty());
    return 0;
  }
  for (const auto& disk : *disks) {
    FUZZ_CHECK(!disk.name.empty());
    FUZZ_CHECK(!runmon::fuzz::HasSpace(disk.name));
  }
  return 0;
}
