// The /metrics server. See metrics_server.hpp. Tokens and loopback hosts follow core/access.hpp, the
// rules the dashboard's server keeps too.
#include "export/metrics_server.hpp"

#include <httplib.h>

#include <chrono>
#include <thread>

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
  auto port = server_->Bind(options_.listen.host, options_.listen.port);
  if (!port) return Error{port.error()};
  port_ = *port;
  return OkStatus();
}

Status MetricsServer::Start() {
  finished_ = false;
  thread_ = std::thread([this] {
    server_->Serve();
    finished_ = true;
  });
  // Returns once the server accepts connections, so that the address printed next is already served.
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
  server_->StopServing();
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
