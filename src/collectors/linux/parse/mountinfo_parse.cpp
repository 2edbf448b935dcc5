// /proc/PID/mountinfo: "id parent major:minor root mount_point options [optional fields...] - fstype source
// super_options". The optional fields end at a lone "-". Spaces, tabs, newlines and backslashes in paths
// are escaped as octal (\040, \011, \012, \134).
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <fmt/format.h>

namespace runmon {
namespace {

std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const char a = s[i + 1], b = s[i + 2], c = s[i + 3];
      if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

Result<std::vector<Mount>> ParseMountinfo(std::string_view text) {
  std::vector<Mount> mounts;
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (text::Trim(line).empty()) continue;
    text::Fields fields(line);
    std::string_view id, parent, device, root, mount_point, options;
    if (!fields.Next(id) || !fields.Next(parent) || !fields.Next(device) || !fields.Next(root) ||
        !fields.Next(mount_point) || !fields.Next(options)) {
      return Error{"truncated line"};
    }
    std::string_view field;
    bool separator = false;
    while (fields.Next(field)) {
      if (field == "-") {
        separator = true;
        break;
      }
    }
    std::string_view fs_type, source, super_options;
    if (!separator || !fields.Next(fs_type)) return Error{"no filesystem type"};
    fields.Next(source);
    fields.Next(super_options);

    const size_t colon = device.find(':');
    if (colon == std::string_view::npos) return Error{fmt::format("bad device '{}'", device)};
    const auto major = text::ParseU64(device.substr(0, colon));
    const auto minor = text::ParseU64(device.substr(colon + 1));
    if (!major || !minor || *major > UINT32_MAX || *minor > UINT32_MAX) {
      return Error{fmt::format("bad device '{}'", device)};
    }
    mounts.push_back(Mount{static_cast<unsigned>(*major), static_cast<unsigned>(*minor), Unescape(root),
                           Unescape(mount_point), std::string(fs_type), Unescape(source),
                           std::string(super_options)});
  }
  return mounts;
}

}  // namespace runmon
