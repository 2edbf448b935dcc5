// The /metrics server. See metrics_server.hpp. Tokens and loopback hosts follow core/access.hpp, the
// rules the dashboard's server keeps too.
#include "export/metrics_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/access.hpp"
#include "http_server/bounded_server.hpp"

namespace runmon {
namespace {

using http_server::BoundedServer;

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
