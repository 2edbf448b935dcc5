// Fuzzes PodUidFromCgroupFile and PodUidFromCgroupPath (/proc/PID/cgroup): no crash; a UID found has a UID's
// shape (a UUID, or 32 hex digits) and is in the text as it is or as the systemd driver escapes it ('_' for
// '-'), inside a path that names kubepods.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/job_identity.hpp"
#include "fuzz_check.hpp"

namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void CheckUid(std::string_view text, const std::string& uid) {
  FUZZ_CHECK(uid.size() == 32 || uid.size() == 36);
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = uid.size() == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
    FUZZ_CHECK(dash ? uid[i] == '-' : IsHex(uid[i]));
  }
  std::string escaped = uid;
  for (char& c : escaped) c = c == '-' ? '_' : c;
  FUZZ_CHECK(text.find(uid) != std::string_view::npos || text.find(escaped) != std::string_view::npos);
  FUZZ_CHECK(text.find("kubepods") != std::string_view::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  if (const auto uid = runmon::cluster::PodUidFromCgroupFile(text)) CheckUid(text, *uid);
  if (const auto uid = runmon::cluster::PodUidFromCgroupPath(text)) CheckUid(text, *uid);
  return 0;
}
