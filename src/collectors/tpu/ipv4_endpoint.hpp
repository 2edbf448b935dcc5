// "a.b.c.d:port" as a socket address: the one form of the runtime-metrics service's address runmon reads
// (the gRPC client connects to IPv4 literals; the family checks RUNMON_TPU_RUNTIME_ADDRESS with the same
// rule, so an address the client could not use is refused where it is set, with the reason). Header-only:
// the executable's factory and the gRPC module both use it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace runmon::tpu {

// nullopt for anything else: a name, IPv6, a missing, zero or too large port, a NUL inside.
inline std::optional<sockaddr_in> Ipv4Endpoint(std::string_view address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == address.size() || address.size() - colon > 6 ||
      address.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  unsigned port = 0;
  for (char digit : address.substr(colon + 1)) {
    if (digit < '0' || digit > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned>(digit - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  sockaddr_in endpoint{};
  endpoint.sin_family = AF_INET;
  endpoint.sin_port = htons(static_cast<std::uint16_t>(port));
  const std::string host(address.substr(0, colon));
  if (::inet_pton(AF_INET, host.c_str(), &endpoint.sin_addr) != 1) return std::nullopt;
  return endpoint;
}

}  // namespace runmon::tpu
