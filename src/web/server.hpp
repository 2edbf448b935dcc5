// The dashboard's HTTP server (cpp-httplib): routes /api/ to api.hpp's handlers, streams changes as
// Server-Sent Events, and serves the dashboard's files from memory (embedded at build time; nothing is read
// from disk but the runs, so no path can reach outside --logdir). Security: it binds 127.0.0.1 unless told
// otherwise, and any other host needs a token; with a token every request must carry it (a bearer header,
// or a cookie set once from ?token=); without one, requests must name a loopback Host (a web page elsewhere
// cannot reach it by DNS rebinding). Connections are served by http_server::BoundedServer (a worker each,
// up to 1024 at once; a request head must arrive within 10 s of its first byte), whose listener the /metrics
// exporter shares (binding, its errors, stopping); only PUT /api/layout takes
// a body, read under its 64 KiB cap. Every error response has the JSON body of docs/serve-api.md.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "web/run_store.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib
namespace runmon::http_server {
class BoundedServer;
}

namespace runmon::web {

struct Asset {
  std::string_view path;  // "/index.html", "/assets/index-abc123.js"
  std::string_view content_type;
  std::string_view data;
};

struct ServeOptions {
  std::filesystem::path logdir = "wandb";
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port
  std::string token;
};

// Refuses what would expose runs without protection (a wider host without a token) and malformed values.
Status CheckServeOptions(const ServeOptions& options);
class DashboardServer {
 public:
  DashboardServer(RunStore& store, ServeOptions options, std::span<const Asset> assets);
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // Binds the socket (fails when the port is taken or the host cannot be bound).
  Status Bind();
  int port() const { return port_; }
  // Serves until Stop (from another thread or a signal handler's thread); returns at once when Stop came
  // first.
  void Serve();
  void Stop();

 private:
  void Routes();
  // Tokens and loopback hosts: true lets the request through; false when `res` holds the answer.
  bool Allowed(const httplib::Request& req, httplib::Response& res) const;

  RunStore& store_;
  ServeOptions options_;
  std::span<const Asset> assets_;
  std::unique_ptr<http_server::BoundedServer> server_;
  int port_ = 0;
};

}  // namespace runmon::web
