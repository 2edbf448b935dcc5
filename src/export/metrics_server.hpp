// The /metrics endpoint (cpp-httplib): GET or HEAD /metrics answers the cached exposition of the latest
// sample (exposition.hpp; a scrape never samples), every other path is 404, other methods 405, and a
// request with a body 413. Security follows `runmon serve` (web/server.cpp): it listens on a loopback
// address unless told otherwise, and any other address needs a token; with a token every request must
// carry `Authorization: Bearer TOKEN` (Prometheus: `authorization: {credentials: TOKEN}` in the scrape
// config), compared in constant time; without one, requests must name a loopback Host, so a web page
// elsewhere cannot read the metrics through DNS rebinding. Every error response is one line of text/plain.
// Connections are served by http_server::BoundedServer: a worker each, up to 1024 at once, a request head
// must arrive within 10 s of its first byte, and a connection that sends nothing is closed after 5 s. The
// listener is BoundedServer's, the one `runmon serve` uses too: bound with SO_REUSEADDR only (cpp-httplib's
// default adds SO_REUSEPORT, which would let a second exporter share a port that is already in use instead
// of failing), with the same errors, and stopped the same way. The runmon executable reaches it
// through the http-server module (app/http_server_module.hpp); tests link it as the object library
// runmon_export_server.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "core/result.hpp"
#include "export/exposition.hpp"
#include "export/listen_address.hpp"

namespace runmon::http_server {
class BoundedServer;
}

namespace runmon {

class MetricsServer {
 public:
  MetricsServer(const ExpositionCache& cache, MetricsServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds the socket: fails when the port is in use or the address is not this machine's.
  Status Bind();
  // The bound port (the one picked for port 0).
  int port() const { return port_; }
  // Serves on a thread of its own; returns once the server accepts connections.
  Status Start();
  // Stops serving and joins the thread; idempotent.
  void Stop();

 private:
  void Routes();

  const ExpositionCache& cache_;
  MetricsServerOptions options_;
  std::unique_ptr<http_server::BoundedServer> server_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  int port_ = 0;
};

}  // namespace runmon
