// cpp-httplib's Server with connection limits and error bodies. See bounded_server.hpp.
#include "http_server/bounded_server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <list>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "http_server/connection_stream.hpp"
#include "http_server/growing_thread_pool.hpp"
#include "http_server/process_resources.hpp"

namespace runmon::http_server {
namespace {

using Clock = std::chrono::steady_clock;

// How long a closing connection may still send what was left unread (a refused body).
constexpr auto kDrainOnClose = std::chrono::milliseconds(1000);
constexpr auto kDrainOnRefusal = std::chrono::milliseconds(200);
constexpr int kListenBacklog = 1024;

}  // namespace

std::string_view DescribeStatus(int status) {
  switch (status) {
    case 400:
      return "the request is malformed, or did not arrive in time";
    case 401:
      return "a token is required";
    case 403:
      return "forbidden";
    case 404:
      return "not found";
    case 405:
      return "the method is not allowed here";
    case 408:
      return "the request did not arrive in time";
    case 413:
      return "the request body is too large";
    case 414:
      return "the request line is too long";
    case 415:
      return "the body's encoding is not supported";
    case 416:
      return "the range cannot be satisfied";
    case 417:
      return "the expectation cannot be met";
    case 431:
      return "the request headers are too large";
    case 500:
      return "internal error";
    case 503:
      return "the server is busy: try again";
    default:
      return status >= 500 ? "server error" : "the request cannot be answered";
  }
}

bool HasBody(const httplib::Request& req) {
  const std::string length = req.get_header_value("Content-Length");
  return (!length.empty() && length != "0") || req.has_header("Transfer-Encoding");
}

void CloseAfterResponse(httplib::Response& res) {
  res.set_header("Connection", "close");
}

// A connection as the registry sees it. `phase` says whether it may be dropped to make room.
struct BoundedServer::Connection {
  enum class Phase { kIdle, kHead, kBody, kResponding };
  socket_t sock;
  ConnectionStream* stream;
  Phase phase = Phase::kIdle;
  Clock::time_point since = Clock::now();
  bool evicted = false;
  bool head_checked = false;  // the request reached the pre-routing handler
  bool close_after_response = false;
};

// The open connections, their phases, eviction at the cap and shutting every one down when the server stops.
class BoundedServer::Registry {
 public:
  explicit Registry(size_t max_connections) : max_(max_connections) {}

  // Admits a connection, dropping the one idle or in its head the longest when at the cap; nullptr when the
  // server is stopping or every connection is busy responding.
  Connection* Admit(socket_t sock, ConnectionStream& stream) {
    std::lock_guard lock(mutex_);
    if (stopping_) return nullptr;
    if (entries_.size() - evicted_ >= max_) {
      Connection* oldest = nullptr;
      for (Connection& entry : entries_) {
        const bool droppable =
            entry.phase == Connection::Phase::kIdle || entry.phase == Connection::Phase::kHead;
        if (!droppable || entry.evicted) continue;
        if (oldest == nullptr || entry.since < oldest->since) oldest = &entry;
      }
      if (oldest == nullptr) return nullptr;
      oldest->evicted = true;
      ++evicted_;
      ::shutdown(oldest->sock, SHUT_RDWR);  // its worker's next read ends; the worker closes it
    }
    entries_.push_back(Connection{sock, &stream});
    return &entries_.back();
  }

  void Release(Connection* connection) {
    std::lock_guard lock(mutex_);
    if (connection->evicted) --evicted_;
    entries_.remove_if([connection](const Connection& entry) { return &entry == connection; });
  }

  void SetPhase(Connection& connection, Connection::Phase phase) {
    std::lock_guard lock(mutex_);
    connection.phase = phase;
    connection.since = Clock::now();
  }

  void Start(GrowingThreadPool* pool) {
    std::lock_guard lock(mutex_);
    stopping_ = false;
    pool_ = pool;
  }

  // Wakes every connection's worker: their reads end, responses being written fail.
  void ShutdownAll() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    pool_ = nullptr;
    for (const Connection& entry : entries_) ::shutdown(entry.sock, SHUT_RDWR);
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

  size_t workers() const {
    std::lock_guard lock(mutex_);
    return pool_ != nullptr ? pool_->workers() : 0;
  }

 private:
  const size_t max_;
  mutable std::mutex mutex_;
  std::list<Connection> entries_;
  size_t evicted_ = 0;
  bool stopping_ = false;
  GrowingThreadPool* pool_ = nullptr;  // owned by httplib while it listens
};

thread_local BoundedServer::Connection* BoundedServer::current_connection_ = nullptr;

BoundedServer::BoundedServer(ServerLimits limits, ErrorBodyWriter error_body)
    : limits_(limits),
      error_body_(std::move(error_body)),
      registry_(std::make_shared<Registry>(limits.max_connections)) {
  RaiseOpenFileLimit();
  LimitMallocArenas();
  const auto seconds = [](std::chrono::milliseconds ms) {
    return static_cast<time_t>(std::chrono::ceil<std::chrono::seconds>(ms).count());
  };
  // What httplib still does itself: the Keep-Alive header's figures, and the socket timeouts it sets on
  // accepting (the stream below polls before every read and write, within its own limits).
  set_keep_alive_timeout(seconds(limits_.keep_alive_timeout));
  set_keep_alive_max_count(limits_.keep_alive_max_requests);
  set_read_timeout(seconds(limits_.read_timeout), 0);
  set_write_timeout(seconds(limits_.write_timeout), 0);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let a second server share a port
  // that is in use instead of failing.
  set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm holds the body until
  // the client's delayed ACK (40 ms a response).
  set_tcp_nodelay(true);

  new_task_queue = [this] {
    auto* pool =
        new GrowingThreadPool({.max_workers = limits_.max_connections + 16,
                               .min_workers = limits_.min_workers,
                               .idle_exit = limits_.worker_idle_exit},
                              ReleaseFreeMemory, [registry = registry_] { registry->ShutdownAll(); });
    registry_->Start(pool);
    return pool;
  };

  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (Connection* connection = current_connection_) {
      // The head is in: its deadline and budget give way to the body's, if there is a body.
      connection->head_checked = true;
      const bool body = HasBody(req);
      registry_->SetPhase(*connection, body ? Connection::Phase::kBody : Connection::Phase::kResponding);
      connection->stream->LimitReads(body ? Clock::now() + limits_.body_timeout : Clock::time_point::max(),
                                     body ? limits_.max_body_bytes : ConnectionStream::kUnlimited);
    }
    return check_ ? check_(req, res) : HandlerResponse::Unhandled;
  });
  set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    Connection* connection = current_connection_;
    if (connection == nullptr) return;
    registry_->SetPhase(*connection, Connection::Phase::kResponding);
    // An answer httplib gave before the request was whole (malformed, too long, a bad range) leaves the
    // stream at no known request boundary: the connection ends with it.
    if (!connection->head_checked || res.get_header_value("Connection") == "close") {
      CloseAfterResponse(res);
      connection->close_after_response = true;
    }
  });
  set_error_handler(HandlerWithResponse([this](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) return HandlerResponse::Unhandled;
    error_body_(res, res.status, DescribeStatus(res.status));
    return HandlerResponse::Handled;
  }));
}

BoundedServer::~BoundedServer() = default;

Result<int> BoundedServer::Bind(const std::string& host, int port) {
  const std::string where = host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                                                : fmt::format("{}:{}", host, port);
  if (port == 0) {
    port = bind_to_any_port(host);
    if (port <= 0) return Error{fmt::format("cannot listen on {}: no free port", where)};
  } else if (!bind_to_port(host, port)) {
    return Error{
        fmt::format("cannot listen on {} (the port is in use, or the address is not this machine's)", where)};
  }
  ::listen(svr_sock_, kListenBacklog);  // on a listening socket, sets its backlog
  return port;
}

void BoundedServer::Serve() {
  serve_started_ = true;
  if (!stop_requested_) listen_after_bind();
  serve_finished_ = true;
}

void BoundedServer::StopServing() {
  stop_requested_ = true;
  if (!serve_started_) return;  // Serve, if it comes, sees stop_requested_ and returns at once
  while (!serve_finished_) {
    stop();
    if (!serve_finished_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void BoundedServer::SetRequestCheck(HandlerWithResponse check) {
  check_ = std::move(check);
}

size_t BoundedServer::connections() const {
  return registry_->size();
}

size_t BoundedServer::workers() const {
  return registry_->workers();
}

void BoundedServer::RefuseConnection(socket_t sock) {
  httplib::Response res;
  res.status = 503;
  error_body_(res, 503, DescribeStatus(503));
  const std::string type = res.get_header_value("Content-Type");
  const std::string head = fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: {}\r\nContent-Length: {}\r\nRetry-After: 1\r\n"
      "Connection: close\r\n\r\n",
      type.empty() ? "text/plain" : type, res.body.size());
  const std::string response = head + res.body;
  ::send(sock, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  CloseAfterDraining(sock, kDrainOnRefusal);
}

bool BoundedServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock, {limits_.read_timeout, limits_.write_timeout});
  Connection* connection = registry_->Admit(sock, stream);
  if (connection == nullptr) {
    RefuseConnection(sock);
    return false;
  }
  current_connection_ = connection;
  bool ok = false;
  for (size_t left = limits_.keep_alive_max_requests; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    if (!stream.WaitForData(limits_.keep_alive_timeout)) break;
    registry_->SetPhase(*connection, Connection::Phase::kHead);
    stream.LimitReads(Clock::now() + limits_.head_timeout, limits_.max_head_bytes);
    connection->head_checked = false;
    bool closed_by_client = false;
    ok = process_request(stream, left == 1, closed_by_client, nullptr);
    registry_->SetPhase(*connection, Connection::Phase::kIdle);
    if (!ok || closed_by_client || connection->close_after_response) break;
  }
  const bool drain = connection->close_after_response;
  current_connection_ = nullptr;
  registry_->Release(connection);
  if (drain) {
    CloseAfterDraining(sock, kDrainOnClose);
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  return ok;
}

}  // namespace runmon::http_server
