// A misbehaving HTTP/1.1 server for the scraping and pushing tests, on raw sockets so a test controls every
// byte: it listens on 127.0.0.1 (port chosen by the kernel), reads each request's head, records it and hands
// it to the test's handler, which writes whatever it likes (a good response, garbage, a body dribbled a byte
// at a time, a gigabyte) through Connection. Keep-alive is supported, so connection reuse can be checked.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace runmon::testing {

struct HttpRequest {
  std::string method;
  std::string target;  // "/metrics", or an absolute URL when the client talks to a proxy
  std::vector<std::pair<std::string, std::string>> headers;
  size_t connection = 0;  // 1-based number of the connection it came on
  std::string body;       // as long as its Content-Length said (a POST's)

  // The first header of that name (any case), or nullptr.
  const std::string* Header(std::string_view name) const;
};

class TestHttpServer;

class Connection {
 public:
  // Writes all of `bytes`; false once the peer is gone (or the server stops).
  bool Send(std::string_view bytes);
  // Sleeps, or returns false at once when the server stops.
  bool Sleep(std::chrono::milliseconds duration);
  // Closes the connection after the handler returns (otherwise the next request is read).
  void Close() { close_ = true; }
  size_t BytesSent() const { return bytes_sent_; }

 private:
  friend class TestHttpServer;
  Connection(TestHttpServer* server, int fd) : server_(server), fd_(fd) {}
  TestHttpServer* server_;
  int fd_;
  bool close_ = false;
  size_t bytes_sent_ = 0;
};

using Handler = std::function<void(const HttpRequest&, Connection&)>;

class TestHttpServer {
 public:
  explicit TestHttpServer(Handler handler);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  uint16_t Port() const { return port_; }
  std::string Url(std::string_view path = "/metrics") const;
  std::vector<HttpRequest> Requests() const;
  size_t Connections() const;
  // Bytes written by handlers over all connections so far.
  size_t BytesSent() const;
  void Stop();

 private:
  friend class Connection;
  void AcceptLoop();
  void Serve(int fd, size_t number);
  bool Stopping() const { return stopping_.load(); }

  Handler handler_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  std::vector<HttpRequest> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> workers_;
  size_t connections_ = 0;
  std::atomic<size_t> bytes_sent_{0};
  std::thread acceptor_;
};

// "HTTP/1.1 <status> <reason>\r\nContent-Length: ...\r\n<extra>\r\n<body>".
std::string HttpResponse(int status, std::string_view body,
                         std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8",
                         std::string_view extra_headers = "");

// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
uint16_t UnusedPort();

}  // namespace runmon::testing
