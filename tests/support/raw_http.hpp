// Raw sockets against runmon's HTTP servers in tests: requests httplib's client would not send (malformed,
// oversized, stalled, dripped a byte at a time) and the server's answer as bytes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace runmon::test {

// A connected socket to 127.0.0.1:port (-1 when the connection fails).
inline int ConnectLoopback(int port) {
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  if (sock < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(sock);
    return -1;
  }
  return sock;
}

inline bool SendAll(int sock, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(sock, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// What the server sends until it closes the connection or `timeout` passes.
inline std::string ReadUntilClosed(int sock, std::chrono::milliseconds timeout) {
  std::string answer;
  const auto until = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd entry{sock, POLLIN, 0};
    if (::poll(&entry, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t got = ::recv(sock, buffer, sizeof(buffer), 0);
    if (got <= 0) break;
    answer.append(buffer, static_cast<size_t>(got));
  }
  return answer;
}

// Sends `request` on a new connection and returns the answer (read until the server closes, at most 10 s).
inline std::string RawRequest(int port, std::string_view request) {
  const int sock = ConnectLoopback(port);
  if (sock < 0) return {};
  SendAll(sock, request);
  ::shutdown(sock, SHUT_WR);
  std::string answer = ReadUntilClosed(sock, std::chrono::seconds(10));
  ::close(sock);
  return answer;
}

// The status line's code, the Content-Type header and the body of a raw answer.
struct RawResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};
inline RawResponse ParseRawResponse(const std::string& answer) {
  RawResponse parsed;
  if (answer.size() < 12 || !answer.starts_with("HTTP/1.1 ")) return parsed;
  parsed.status = std::stoi(answer.substr(9, 3));
  const size_t end = answer.find("\r\n\r\n");
  const std::string head = answer.substr(0, end);
  const size_t type = head.find("\r\nContent-Type: ");
  if (type != std::string::npos) {
    const size_t start = type + 16;
    parsed.content_type = head.substr(start, head.find("\r\n", start) - start);
  }
  if (end != std::string::npos) parsed.body = answer.substr(end + 4);
  return parsed;
}

// Drips `head` a byte every `interval` on a new connection; returns how long until the server answered or
// closed the connection, or nothing when it still had not after `limit` (or the head ran out).
inline std::optional<std::chrono::duration<double>> SecondsUntilCut(int port, std::string_view head,
                                                                    std::chrono::milliseconds interval,
                                                                    std::chrono::seconds limit) {
  const int sock = ConnectLoopback(port);
  if (sock < 0) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::duration<double>> cut;
  for (size_t i = 0; i < head.size() && std::chrono::steady_clock::now() - start < limit; ++i) {
    pollfd entry{sock, POLLIN, 0};
    if (::poll(&entry, 1, 0) > 0 || ::send(sock, head.data() + i, 1, MSG_NOSIGNAL) != 1) {
      cut = std::chrono::steady_clock::now() - start;
      break;
    }
    std::this_thread::sleep_for(interval);
  }
  ::close(sock);
  return cut;
}

}  // namespace runmon::test
