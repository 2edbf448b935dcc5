// cpp-httplib's Server with limits that slow or stalled clients cannot exhaust, shared by runmon's dashboard
// (src/web/server.cpp) and its /metrics exporter (src/export/metrics_server.cpp):
// - a worker per connection from a pool that grows on demand (growing_thread_pool.hpp): httplib's fixed
//   pool let 5 stalled sockets delay a scrape by 10 s and 200 block the dashboard for 41 s;
// - a deadline for each request head, counted from its first byte (a client dripping a byte a second is cut,
//   not only a silent one), a cap on its size, and a deadline and a cap on the bytes read for a body;
// - a cap on open connections: at the cap the connection idle or stuck in its head the longest is dropped to
//   make room, and when none is, the new one gets a quick 503 instead of waiting;
// - an error body on every 4xx/5xx response that has none (those httplib produces itself: 400, 404, 413,
//   414, 416, 500, ...), written by the server's own formatter so each keeps its documented format;
// - one listener setup for both: the socket is bound with SO_REUSEADDR only (a port in use is an error, not
//   shared) and a deep backlog, with the same error for an address that cannot be bound, and served until a
//   stop that may come from any thread, even before serving began; responses are sent with TCP_NODELAY;
// - a connection whose response says `Connection: close`, or that httplib answered before its request was
//   whole (malformed, too long), is closed after it: httplib would read what follows, such as the rest of a
//   refused body, as the next request.
// On start it raises the open-file limit and caps malloc arenas (process_resources.hpp); when the pool is
// back at its floor after a burst, freed memory is returned to the system.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon::http_server {

struct ServerLimits {
  size_t max_connections = 1024;
  size_t min_workers = 2;
  std::chrono::milliseconds worker_idle_exit{3000};
  std::chrono::milliseconds read_timeout{5000};        // each read
  std::chrono::milliseconds write_timeout{5000};       // each write
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests (and before the first)
  std::chrono::milliseconds head_timeout{10000};       // from a request's first byte to its blank line
  size_t max_head_bytes = 64 * 1024;                   // the request line and headers
  std::chrono::milliseconds body_timeout{10000};       // a request body, once its head is in
  size_t max_body_bytes = 0;                           // the body's bytes on the wire (framing included)
  size_t keep_alive_max_requests = 1000;
};

// A sentence for an error status (an error httplib produced has no message of its own).
std::string_view DescribeStatus(int status);
// The request announces a body (Content-Length other than 0, or Transfer-Encoding).
bool HasBody(const httplib::Request& req);
// Marks the response so that the connection closes after it (`Connection: close`).
void CloseAfterResponse(httplib::Response& res);

class BoundedServer final : public httplib::Server {
 public:
  // Fills the body of an error response that has none: the response, its status, DescribeStatus's sentence.
  using ErrorBodyWriter = std::function<void(httplib::Response& res, int status, std::string_view message)>;

  BoundedServer(ServerLimits limits, ErrorBodyWriter error_body);
  ~BoundedServer() override;

  // Binds host:port (port 0: any free port) with a listen backlog that holds a burst of connections
  // (httplib's is 5: a burst beyond it had its SYNs dropped and retried a second later). Returns the bound
  // port, or an error naming the address ([IPv6]:port) and why.
  Result<int> Bind(const std::string& host, int port);
  // Serves on the calling thread until StopServing; returns at once when StopServing came first.
  void Serve();
  // From any thread, any number of times: makes Serve return, and waits for it when it has begun.
  // (httplib's stop() does nothing until the server is listening, so it is repeated until Serve returns.)
  void StopServing();
  // The check every request passes once its head is in (access rules, refused bodies): httplib's
  // pre-routing handler, which this class needs for itself.
  void SetRequestCheck(HandlerWithResponse check);
  // Open connections now.
  size_t connections() const;
  // Workers of the running pool (0 when not serving).
  size_t workers() const;

 protected:
  bool process_and_close_socket(socket_t sock) override;

 private:
  class Registry;
  struct Connection;
  // The connection the calling worker serves (the handlers run on it).
  static thread_local Connection* current_connection_;

  void RefuseConnection(socket_t sock);

  const ServerLimits limits_;
  const ErrorBodyWriter error_body_;
  HandlerWithResponse check_;
  std::shared_ptr<Registry> registry_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> serve_started_{false};
  std::atomic<bool> serve_finished_{false};
};

}  // namespace runmon::http_server
