// The raw-socket test server (see test_http_server.hpp). Reads use poll with a short timeout so Stop() is
// noticed; writes use MSG_NOSIGNAL so a client that hangs up is an error, not a SIGPIPE.
#include "test_http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace runmon::testing {
namespace {

constexpr size_t kMaxHeadBytes = 64 * 1024;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return &value;
  }
  return nullptr;
}

bool Connection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    if (server_->Stopping()) return false;
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes_sent_ += static_cast<size_t>(n);
    server_->bytes_sent_ += static_cast<size_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool Connection::Sleep(std::chrono::milliseconds duration) {
  std::unique_lock lock(server_->mutex_);
  return !server_->stop_cv_.wait_for(lock, duration, [this] { return server_->Stopping(); });
}

TestHttpServer::TestHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("bind/listen failed");
  }
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TestHttpServer::~TestHttpServer() {
  Stop();
}

std::string TestHttpServer::Url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

std::vector<HttpRequest> TestHttpServer::Requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

size_t TestHttpServer::Connections() const {
  std::lock_guard lock(mutex_);
  return connections_;
}

size_t TestHttpServer::BytesSent() const {
  return bytes_sent_.load();
}

void TestHttpServer::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_.exchange(true)) return;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  stop_cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& worker : workers) worker.join();
}

void TestHttpServer::AcceptLoop() {
  while (!Stopping()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    if (Stopping()) {
      ::close(fd);
      break;
    }
    open_fds_.push_back(fd);
    const size_t number = ++connections_;
    workers_.emplace_back([this, fd, number] { Serve(fd, number); });
  }
}

void TestHttpServer::Serve(int fd, size_t number) {
  std::string buffer;
  Connection connection(this, fd);
  while (!Stopping() && !connection.close_) {
    size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (Stopping() || buffer.size() > kMaxHeadBytes) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) {
        head_end = std::string::npos;
        buffer.clear();
        connection.close_ = true;
        break;
      }
      buffer.append(chunk, static_cast<size_t>(n));
    }
    if (connection.close_ || head_end == std::string::npos) break;
    HttpRequest request;
    request.connection = number;
    const std::string head = buffer.substr(0, head_end);
    buffer.erase(0, head_end + 4);
    size_t line_start = 0;
    bool first = true;
    while (line_start <= head.size()) {
      size_t line_end = head.find("\r\n", line_start);
      if (line_end == std::string::npos) line_end = head.size();
      const std::string line = head.substr(line_start, line_end - line_start);
      if (first) {
        const size_t space1 = line.find(' ');
        const size_t space2 = line.find(' ', space1 + 1);
        request.method = line.substr(0, space1);
        request.target = line.substr(space1 + 1, space2 - space1 - 1);
        first = false;
      } else if (const size_t colon = line.find(':'); colon != std::string::npos) {
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        request.headers.emplace_back(line.substr(0, colon), value);
      }
      line_start = line_end + 2;
    }
    // A body announced by Content-Length (a POST's) is read whole before the handler runs.
    if (const std::string* length = request.Header("Content-Length"); length != nullptr) {
      const size_t wanted = std::strtoull(length->c_str(), nullptr, 10);
      while (buffer.size() < wanted && !Stopping()) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        char chunk[65536];
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) break;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      request.body = buffer.substr(0, std::min(wanted, buffer.size()));
      buffer.erase(0, request.body.size());
    }
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    if (const std::string* c = request.Header("Connection"); c != nullptr && EqualsIgnoreCase(*c, "close")) {
      connection.Close();
    }
    handler_(request, connection);
  }
  std::lock_guard lock(mutex_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

std::string HttpResponse(int status, std::string_view body, std::string_view content_type,
                         std::string_view extra_headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(Reason(status)) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

uint16_t UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace runmon::testing
