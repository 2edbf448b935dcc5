// One connection's byte stream for cpp-httplib (httplib::Stream), used instead of httplib's SocketStream so
// that a request cannot take forever to arrive: httplib's read timeout applies to each read call, so a
// client dripping a byte every few seconds kept its connection (and a worker) indefinitely. Reads here fail
// once a deadline set by the server passes (the whole request head must arrive by then) or once a byte
// budget is spent (the head's size), and each read or write still waits at most its own timeout. The
// stream lives as long as the connection, so bytes of a pipelined next request stay buffered.
#pragma once

#include <httplib.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <limits>
#include <string>

namespace runmon::http_server {

struct StreamTimeouts {
  std::chrono::milliseconds read{5000};
  std::chrono::milliseconds write{5000};
};

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

  ConnectionStream(socket_t sock, StreamTimeouts timeouts) : sock_(sock), timeouts_(timeouts) {}

  // Reads fail after `deadline` (Clock::time_point::max(): none) and after `bytes` more bytes.
  void LimitReads(Clock::time_point deadline, size_t bytes) {
    read_deadline_ = deadline;
    read_budget_ = bytes;
  }
  // True when a byte is buffered or the socket becomes readable (data, end of stream or an error) within
  // `timeout`.
  bool WaitForData(std::chrono::milliseconds timeout) const;

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  bool Buffered() const { return offset_ < length_; }
  // Waits for `events` up to `timeout`, also bounded by the read deadline when `reading`.
  bool Poll(short events, std::chrono::milliseconds timeout, bool reading) const;

  socket_t sock_;
  StreamTimeouts timeouts_;
  Clock::time_point read_deadline_ = Clock::time_point::max();
  size_t read_budget_ = kUnlimited;
  std::array<char, 16 * 1024> buffer_{};
  size_t offset_ = 0;
  size_t length_ = 0;
};

// Closes a connection whose request may not have been read to its end: sends FIN, then reads and discards
// what the client still sends for up to `linger` (closing with unread data would reset the connection, and
// the client could lose the response), then closes.
void CloseAfterDraining(socket_t sock, std::chrono::milliseconds linger);

}  // namespace runmon::http_server
