// Who may talk to runmon's HTTP servers (the dashboard, the /metrics exporter): both bind loopback
// addresses by default, need a token for anything wider, and without a token only answer requests whose
// Host header names a loopback host (a page elsewhere cannot reach them through DNS rebinding). One set
// of rules for both, so they cannot drift apart.
#pragma once

#include <string_view>

#include "core/result.hpp"

namespace runmon {

// 127.0.0.0/8, ::1 (and ::ffff:127.x.x.x), localhost.
bool IsLoopbackAddress(std::string_view host);
// The Host header names a loopback host: "localhost:9100", "127.0.0.1", "[::1]:9100", and the unbracketed
// "::1:9100" some clients send (no DNS name, the only thing a rebinding page can send, holds a colon before
// its port).
bool IsLoopbackHostHeader(std::string_view header);
// A token is at least 16 printable characters without spaces, ; , " or \ (it travels in headers and
// cookies). Messages name the flag as given.
Status CheckAccessToken(std::string_view token, std::string_view token_flag);
// Compares in time independent of where the strings differ.
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace runmon
