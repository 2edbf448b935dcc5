// A connection's stream with read deadlines and budgets. See connection_stream.hpp.
#include "http_server/connection_stream.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace runmon::http_server {
namespace {

void SocketName(socket_t sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  const int got = peer ? ::getpeername(sock, generic, &length) : ::getsockname(sock, generic, &length);
  if (got != 0) return;
  std::array<char, NI_MAXHOST> host{};
  if (::getnameinfo(generic, length, host.data(), host.size(), nullptr, 0, NI_NUMERICHOST) != 0) return;
  ip = host.data();
  if (address.ss_family == AF_INET) port = ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) port = ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
}

}  // namespace

bool ConnectionStream::Poll(short events, std::chrono::milliseconds timeout, bool reading) const {
  const Clock::time_point start = Clock::now();
  Clock::time_point until = start + timeout;
  if (reading) until = std::min(until, read_deadline_);
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() < 0) return false;
    pollfd entry{sock_, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(left.count()));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool ConnectionStream::WaitForData(std::chrono::milliseconds timeout) const {
  if (Buffered()) return true;
  pollfd entry{sock_, POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&entry, 1, static_cast<int>(timeout.count()));
    if (ready >= 0) return ready > 0;
    if (errno != EINTR) return false;
  }
}

bool ConnectionStream::is_readable() const {
  return Buffered() || Poll(POLLIN, timeouts_.read, true);
}

bool ConnectionStream::is_writable() const {
  if (!Poll(POLLOUT, timeouts_.write, false)) return false;
  if (Buffered()) return true;
  // Alive unless the peer has closed: readable with nothing to read.
  pollfd entry{sock_, POLLIN, 0};
  if (::poll(&entry, 1, 0) <= 0) return true;
  char byte = 0;
  return ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (read_budget_ == 0 || Clock::now() >= read_deadline_) return -1;
  if (!Buffered()) {
    if (!Poll(POLLIN, timeouts_.read, true)) return -1;
    ssize_t got = 0;
    do {
      got = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return got;
    offset_ = 0;
    length_ = static_cast<size_t>(got);
  }
  const size_t count = std::min({size, length_ - offset_, read_budget_});
  std::memcpy(ptr, buffer_.data() + offset_, count);
  offset_ += count;
  if (read_budget_ != kUnlimited) read_budget_ -= count;
  return static_cast<ssize_t>(count);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (!Poll(POLLOUT, timeouts_.write, false)) return -1;
  ssize_t sent = 0;
  do {
    sent = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  SocketName(sock_, true, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  SocketName(sock_, false, ip, port);
}

void CloseAfterDraining(socket_t sock, std::chrono::milliseconds linger) {
  ::shutdown(sock, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + linger;
  std::array<char, 16 * 1024> discard{};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd entry{sock, POLLIN, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t got = ::recv(sock, discard.data(), discard.size(), MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;
  }
  ::close(sock);
}

}  // namespace runmon::http_server
