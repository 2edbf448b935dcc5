// runmon/log.hpp: a C++ program's own metrics into `runmon run`'s run log, header-only.
//
//   #include <runmon/log.hpp>
//   runmon::log({{"loss", 0.25}, {"lr", 3e-4}}, /*step=*/7);
//   runmon::summary({{"best_loss", 0.1}});
//
// Under `runmon run` each call writes one JSON line to the run's metrics socket (its path is in
// RUNMON_RUN_SOCKET; the protocol is docs/training-metrics.md), which runmon records as a W&B history row.
// Outside `runmon run` every call does nothing (a line on stderr says so once).
//
// Promises: thread-safe (one lock around the send); never blocks longer than a non-blocking send: what the
// socket does not take at once waits in order in a buffer of at most kMaxPendingBytes, sent before the next
// line (or by flush()); past that bound, and when runmon is gone, lines are dropped and counted
// (dropped()). A process forked from this one connects afresh at its first line. Values are numbers
// (non-finite ones are sent as Python's NaN and Infinity words, which runmon takes). Keys may be any text;
// they are escaped as JSON strings.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace runmon {

using Metric = std::pair<std::string_view, double>;

namespace log_detail {

inline constexpr size_t kMaxPendingBytes = size_t{8} << 20;

inline void AppendKey(std::string& out, std::string_view key) {
  out.push_back('"');
  for (const char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", byte);
      out.append(escaped);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

inline void AppendNumber(std::string& out, double value) {
  if (std::isnan(value)) {
    out.append("NaN");
  } else if (std::isinf(value)) {
    out.append(value > 0 ? "Infinity" : "-Infinity");
  } else {
    char text[32];
    const auto result = std::to_chars(text, text + sizeof(text), value);  // the shortest that reads back
    out.append(text, result.ptr);
  }
}

class Channel {
 public:
  static Channel& Instance() {
    static Channel channel;
    return channel;
  }

  void Send(std::string line) {
    std::lock_guard lock(mutex_);
    if (!Ready()) {
      if (!outside_) ++dropped_;  // outside `runmon run` nothing is dropped: nothing was to be sent
      return;
    }
    if (pending_.size() + line.size() > kMaxPendingBytes) {
      ++dropped_;
      return;
    }
    pending_ += line;
    SendPending();
  }

  // Waits at most `timeout` for what waits to be sent; true when nothing is left.
  bool Flush(std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fd_ >= 0 && !pending_.empty()) {
      SendPending();
      if (pending_.empty() || fd_ < 0) break;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd writable{fd_, POLLOUT, 0};
      ::poll(&writable, 1, static_cast<int>(left.count()));
    }
    return pending_.empty();
  }

  void Drop() {
    std::lock_guard lock(mutex_);
    ++dropped_;
  }
  uint64_t dropped() {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

 private:
  Channel() = default;
  ~Channel() {
    Flush(std::chrono::milliseconds(2000));
    if (fd_ >= 0) ::close(fd_);
  }

  // Connected (afresh in a forked process); false when there is nothing to send to.
  bool Ready() {
    if (pid_ != ::getpid()) {
      if (fd_ >= 0 && pid_ != 0) ::close(fd_);  // the parent's connection
      fd_ = -1;
      pending_.clear();
      broken_ = false;
      outside_ = false;
      pid_ = ::getpid();
    }
    if (fd_ >= 0) return true;
    if (broken_) return false;
    const char* path = std::getenv("RUNMON_RUN_SOCKET");
    if (path == nullptr || *path == '\0') {
      Warn("not running under `runmon run`: metrics are not recorded");
      broken_ = true;
      outside_ = true;
      return false;
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || std::strlen(path) >= sizeof(address.sun_path)) {
      if (fd >= 0) ::close(fd);
      Warn("cannot reach runmon: metrics are dropped");
      broken_ = true;
      return false;
    }
    std::memcpy(address.sun_path, path, std::strlen(path) + 1);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      ::close(fd);
      Warn("cannot reach runmon: metrics are dropped");
      broken_ = true;
      return false;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    fd_ = fd;
    return true;
  }

  void SendPending() {
    while (!pending_.empty()) {
      const ssize_t sent = ::send(fd_, pending_.data(), pending_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        pending_.erase(0, static_cast<size_t>(sent));
      } else if (sent < 0 && errno == EINTR) {
        continue;
      } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;  // the socket is full: the rest waits
      } else {
        Warn("runmon is gone: metrics are dropped");
        ++dropped_;
        pending_.clear();
        ::close(fd_);
        fd_ = -1;
        broken_ = true;
        return;
      }
    }
  }

  void Warn(const char* message) {
    if (warned_) return;
    warned_ = true;
    std::fprintf(stderr, "runmon: %s\n", message);
  }

  std::mutex mutex_;
  int fd_ = -1;
  pid_t pid_ = 0;
  bool broken_ = false;   // nothing to send to: no socket, or runmon gone
  bool outside_ = false;  // no RUNMON_RUN_SOCKET at all
  bool warned_ = false;
  std::string pending_;
  uint64_t dropped_ = 0;
};

inline std::string Line(std::initializer_list<Metric> metrics, std::optional<int64_t> step, bool summary) {
  std::string line = summary ? "{\"_summary\":{" : "{";
  bool first = true;
  for (const auto& [key, value] : metrics) {
    if (!first) line.push_back(',');
    first = false;
    AppendKey(line, key);
    line.push_back(':');
    AppendNumber(line, value);
  }
  if (summary) {
    line.append("}}\n");
    return line;
  }
  if (step) {
    line.append(first ? "\"_step\":" : ",\"_step\":");
    line.append(std::to_string(*step));
    first = false;
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  line.append(first ? "\"_timestamp\":" : ",\"_timestamp\":");
  AppendNumber(line, now);
  line.append("}\n");
  return line;
}

}  // namespace log_detail

// Logs `metrics` at `step` (from 0; without one the values join the step the last call named and end it,
// or take the next step, as W&B's wandb.log does). A negative step is dropped and counted.
inline void log(std::initializer_list<Metric> metrics, std::optional<int64_t> step = std::nullopt) {
  auto& channel = log_detail::Channel::Instance();
  if (step && *step < 0) return channel.Drop();
  channel.Send(log_detail::Line(metrics, step, false));
}

// Sets summary values (the run's headline figures); they win over the last logged values of their keys.
inline void summary(std::initializer_list<Metric> metrics) {
  log_detail::Channel::Instance().Send(log_detail::Line(metrics, std::nullopt, true));
}

// Waits at most `timeout` for what the socket did not take yet; true when nothing is left.
inline bool flush(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  return log_detail::Channel::Instance().Flush(timeout);
}

// Lines dropped so far (runmon gone, the buffer full, a negative step).
inline uint64_t dropped() {
  return log_detail::Channel::Instance().dropped();
}

}  // namespace runmon
