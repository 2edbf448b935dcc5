// The /metrics server. See metrics_server.hpp. Tokens and loopback hosts follow core/access.hpp, the
// rules the dashboard's server keeps too.
#include "export/metrics_server.hpp"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/access.hpp"
#include "http_server/bounded_server.hpp"

namespace runmon {
namespace {

using http_server::BoundedServer;

bool IsIpv4(std::string_view host) {
  in_addr address{};
  return ::inet_pton(AF_INET, std::string(host).c_str(), &address) == 1;
}

bool IsIpv6(std::string_view host) {
  in6_addr address{};
  return ::inet_pton(AF_INET6, std::string(host).c_str(), &address) == 1;
}

// Every error response, the library's own included, is one line of text (docs/cli.md).
void SendText(httplib::Response& res, int status, std::string_view text) {
  res.status = status;
  res.set_content(std::string(text) + "\n", "text/plain; charset=utf-8");
}

http_server::ServerLimits Limits() {
  http_server::ServerLimits limits;
  limits.keep_alive_max_requests = 100;
  return limits;
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

MetricsServer::MetricsServer(const ExpositionCache& cache, MetricsServerOptions options)
    : cache_(cache),
      options_(std::move(options)),
      server_(std::make_unique<BoundedServer>(Limits(), SendText)) {
  server_->set_payload_max_length(0);
  Routes();
}

MetricsServer::~MetricsServer() {
  Stop();
}

Status MetricsServer::Bind() {
  const std::string where = FormatListenAddress(options_.listen);
  if (options_.listen.port == 0) {
    port_ = server_->BindToAnyPort(options_.listen.host);
    if (port_ <= 0) return Error{fmt::format("cannot listen on {}: no free port", where)};
    return OkStatus();
  }
  if (!server_->BindToPort(options_.listen.host, options_.listen.port)) {
    return Error{
        fmt::format("cannot listen on {} (the port is in use, or the address is not this machine's)", where)};
  }
  port_ = options_.listen.port;
  return OkStatus();
}

Status MetricsServer::Start() {
  finished_ = false;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    finished_ = true;
  });
  // httplib's stop() does nothing until the server runs: wait for it, so that Stop() cannot be missed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_->is_running()) {
    if (finished_ || std::chrono::steady_clock::now() > deadline) {
      Stop();
      return Error{fmt::format("cannot serve on {}", FormatListenAddress(options_.listen))};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return OkStatus();
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  while (!finished_) {
    server_->stop();
    if (finished_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  thread_.join();
}

void MetricsServer::Routes() {
  BoundedServer& server = *server_;
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-store"}});

  server.SetRequestCheck([this](const httplib::Request& req, httplib::Response& res) {
    using Handled = httplib::Server::HandlerResponse;
    if (options_.token.empty()) {
      if (!IsLoopbackHostHeader(req.get_header_value("Host"))) {
        SendText(res, 403, "this server answers only requests addressed to a loopback host");
        return Handled::Handled;
      }
    } else {
      const std::string authorization = req.get_header_value("Authorization");
      if (!authorization.starts_with("Bearer ") || !SameSecret(authorization.substr(7), options_.token)) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"runmon\"");
        SendText(res, 401, "a bearer token is required");
        return Handled::Handled;
      }
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      SendText(res, 405, "only GET and HEAD");
      return Handled::Handled;
    }
    if (http_server::HasBody(req)) {
      http_server::CloseAfterResponse(res);  // the body is never read
      SendText(res, 413, "no request body is accepted");
      return Handled::Handled;
    }
    return Handled::Unhandled;
  });

  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    SendText(res, 500, "internal error");
  });

  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const std::shared_ptr<const std::string> text = cache_.Text();
    res.set_content(*text, std::string(kExpositionContentType));
  });
  server.Get(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
    SendText(res, 404, "not found: the metrics are at /metrics");
  });
}

}  // namespace runmon
