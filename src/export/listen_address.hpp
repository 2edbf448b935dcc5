// Where the /metrics server listens and who may read it: HOST:PORT as --listen and --metrics-listen take it,
// and the rule that an address beyond this machine needs a token (core/access.hpp). Pure; the server itself
// is metrics_server.hpp.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 literal, without brackets ("localhost" is read as 127.0.0.1)
  int port = 0;      // 0: any free port
};

// HOST:PORT with HOST an IPv4 address or localhost, or [IPV6]:PORT; PORT 0 to 65535. Anything else
// (a name, an IPv6 address without brackets, an empty host, a sign, spaces) is refused with a message.
Result<ListenAddress> ParseListenAddress(std::string_view text);
// "127.0.0.1:9100", "[::1]:9100".
std::string FormatListenAddress(const ListenAddress& address);

struct MetricsServerOptions {
  ListenAddress listen{"127.0.0.1", 0};
  std::string token;  // empty: none (loopback addresses only)
};

// A non-loopback address without a token, or a token that is short or holds characters a header cannot.
// Messages name the flags as given (--listen and --token, --metrics-listen and --metrics-token).
Status CheckMetricsServerOptions(const MetricsServerOptions& options, std::string_view listen_flag,
                                 std::string_view token_flag);

}  // namespace runmon
