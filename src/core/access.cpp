// The access rules of runmon's HTTP servers. See access.hpp.
#include "core/access.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace runmon {

bool IsLoopbackAddress(std::string_view host) {
  if (host == "localhost") return true;
  if (host.find('\0') != std::string_view::npos) return false;  // inet_pton would stop at the NUL
  in_addr v4{};
  if (::inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool IsLoopbackHostHeader(std::string_view header) {
  if (header.starts_with("[")) {
    const size_t close = header.find(']');
    return close != std::string_view::npos && IsLoopbackAddress(header.substr(1, close - 1));
  }
  const size_t first = header.find(':');
  if (first == std::string_view::npos) return IsLoopbackAddress(header);
  if (header.find(':', first + 1) == std::string_view::npos)
    return IsLoopbackAddress(header.substr(0, first));
  return IsLoopbackAddress(header) || IsLoopbackAddress(header.substr(0, header.rfind(':')));
}

Status CheckAccessToken(std::string_view token, std::string_view token_flag) {
  if (token.size() < 16) return Error{fmt::format("{}: use at least 16 characters", token_flag)};
  for (const char c : token) {
    if (c <= ' ' || c == 0x7F || c == ';' || c == ',' || c == '"' || c == '\\') {
      return Error{fmt::format("{}: printable characters without spaces, ; , \" or \\", token_flag)};
    }
  }
  return OkStatus();
}

bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    difference = static_cast<unsigned char>(difference | (x ^ y));
  }
  return difference == 0;
}

}  // namespace runmon
