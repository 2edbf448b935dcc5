// HOST:PORT parsing and the token rule of the /metrics server. See listen_address.hpp.
#include "export/listen_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/access.hpp"

namespace runmon {
namespace {

bool IsIpv4(std::string_view host) {
  in_addr address{};
  return ::inet_pton(AF_INET, std::string(host).c_str(), &address) == 1;
}

bool IsIpv6(std::string_view host) {
  in6_addr address{};
  return ::inet_pton(AF_INET6, std::string(host).c_str(), &address) == 1;
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error{fmt::format("\"{}\": {} (expected HOST:PORT, such as 127.0.0.1:9100 or [::1]:9100)",
                             std::string(text), why)};
  };
  // inet_pton reads C strings: a NUL inside would cut the address short ("::\0..." would pass as "::").
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7F; })) {
    return bad("spaces or control characters");
  }
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("no ] after the IPv6 address");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("no :PORT after the address");
    port = text.substr(close + 2);
    if (!IsIpv6(host)) return bad("not an IPv6 address between the brackets");
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("no :PORT");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.empty()) return bad("no address (0.0.0.0 listens on every interface, and needs --token)");
    if (host.find(':') != std::string_view::npos) return bad("an IPv6 address goes in brackets");
    if (host != "localhost" && !IsIpv4(host)) return bad("the address is not an IPv4 address or localhost");
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("the port is not a number from 0 to 65535");
  }
  const int number = std::stoi(std::string(port));
  if (number > 65535) return bad("the port is not a number from 0 to 65535");
  return ListenAddress{host == "localhost" ? "127.0.0.1" : std::string(host), number};
}

std::string FormatListenAddress(const ListenAddress& address) {
  if (address.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", address.host, address.port);
  return fmt::format("{}:{}", address.host, address.port);
}

Status CheckMetricsServerOptions(const MetricsServerOptions& options, std::string_view listen_flag,
                                 std::string_view token_flag) {
  if (!IsLoopbackAddress(options.listen.host) && options.token.empty()) {
    return Error{fmt::format("{} {} would expose the metrics beyond this machine: give {} too", listen_flag,
                             FormatListenAddress(options.listen), token_flag)};
  }
  if (!options.token.empty()) return CheckAccessToken(options.token, token_flag);
  return OkStatus();
}

}  // namespace runmon
