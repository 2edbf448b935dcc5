// The command's metrics channel (see metric_channel.hpp): the socket, and the thread that reads its
// connections (level-triggered epoll; at most kReadBudget bytes from one connection before the others get
// their turn, so one flooding writer cannot starve the rest), splits their bytes into lines and assembles
// history rows. The assembler is shared with Summary() and counts() under a mutex; rows go to the sink
// outside it.
#include "user_metrics/metric_channel.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

namespace runmon::user_metrics {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64u << 10;
constexpr size_t kReadBudget = 1u << 20;
constexpr int kMaxEvents = 64;
// After a wake that brought lines, the next ones gather this long before they are read: at 100,000 lines a
// second the writers send every few milliseconds, and a wake (this thread's, and the log writer's that the
// rows cause) costs more than the lines it brings. The sockets' buffers hold that long's lines (about 70 KB
// at that rate); a line waits at most this much longer to be recorded.
constexpr auto kGatherPause = std::chrono::milliseconds(10);

double EpochSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Reason(int error) {
  return std::strerror(error);
}

}  // namespace

struct MetricChannel::State {
  struct Connection {
    std::string pending;    // the start of a line not ended yet
    bool skipping = false;  // inside a line longer than max_line_bytes: dropped up to its end
  };

  MetricChannelOptions options;
  int listen_fd = -1;
  int epoll_fd = -1;
  int event_fd = -1;
  std::unordered_map<int, Connection> connections;
  std::unique_ptr<char[]> buffer;  // made at the first read, left uninitialised (no page is touched before)
  bool read_lines = false;         // the last wake brought bytes (kGatherPause)
  RowSink sink;
  Warn warn;
  bool warned = false;
  std::vector<HistoryRow> closed;
  std::thread thread;
  // Finish: set before the event is signalled.
  std::atomic<bool> finishing{false};
  Clock::time_point deadline;

  mutable std::mutex mutex;  // the assembler and the counts
  HistoryAssembler assembler;
  MetricChannelCounts counts;

  ~State() {
    for (const auto& [fd, connection] : connections) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (event_fd >= 0) ::close(event_fd);
  }

  void Bad(const std::string& why) {
    ++counts.bad_lines;
    if (!warned && warn)
      warn(fmt::format("a metrics line was passed over ({}); later ones are counted", why));
    warned = true;
  }

  // One whole line (without its '\n'); with `mutex` held.
  void Line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    ++counts.lines;
    auto parsed = ParseMetricLine(line);
    if (!parsed) return Bad(parsed.error());
    if (auto added = assembler.Add(std::move(*parsed), EpochSeconds(), closed); !added) Bad(added.error());
  }

  void Bytes(Connection& connection, std::string_view bytes) {
    while (!bytes.empty()) {
      const size_t end = bytes.find('\n');
      const std::string_view piece = bytes.substr(0, end);
      if (connection.skipping) {
        // The rest of a long line, dropped.
      } else if (connection.pending.size() + piece.size() > options.max_line_bytes) {
        connection.skipping = true;
        connection.pending.clear();
        ++counts.lines;
        Bad(fmt::format("longer than {} bytes", options.max_line_bytes));
      } else if (end != std::string_view::npos && connection.pending.empty()) {
        Line(piece);  // the common case: a whole line in one read, no copy
      } else {
        connection.pending.append(piece);
        if (end != std::string_view::npos) {
          Line(connection.pending);
          connection.pending.clear();
        }
      }
      if (end == std::string_view::npos) break;
      connection.skipping = false;
      bytes.remove_prefix(end + 1);
    }
  }

  void Accept() {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a connection that went away before it was taken
      std::lock_guard lock(mutex);
      if (connections.size() >= options.max_connections) {
        ::close(fd);
        ++counts.connections_refused;
        continue;
      }
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.fd = fd;
      if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
        ::close(fd);
        continue;
      }
      connections.emplace(fd, Connection{});
      ++counts.connections;
    }
  }

  void Read(int fd) {
    const auto it = connections.find(fd);
    if (it == connections.end()) return;
    if (!buffer) buffer.reset(new char[kReadChunk]);
    size_t taken = 0;
    while (taken < kReadBudget) {
      const ssize_t got = ::read(fd, buffer.get(), kReadChunk);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (got <= 0) {  // closed (or broken): an unended last line still counts
        std::lock_guard lock(mutex);
        if (!it->second.skipping && !it->second.pending.empty()) Line(it->second.pending);
        ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        ::close(fd);
        connections.erase(it);
        return;
      }
      taken += static_cast<size_t>(got);
      read_lines = true;
      std::lock_guard lock(mutex);
      Bytes(it->second, std::string_view(buffer.get(), static_cast<size_t>(got)));
    }
  }

  void Deliver() {
    if (closed.empty()) return;
    {
      std::lock_guard lock(mutex);
      counts.rows += closed.size();
    }
    if (sink) sink(closed);
    closed.clear();
  }

  void Run() {
    std::array<epoll_event, kMaxEvents> events{};
    const int idle_ms = static_cast<int>(options.idle_row_seconds * 1000 / 4) + 1;
    for (;;) {
      int timeout = idle_ms;
      if (finishing) {
        if (listen_fd >= 0) {
          Accept();  // connections made before the command exited, not taken yet
          ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
          ::close(listen_fd);
          listen_fd = -1;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (connections.empty() || left.count() <= 0) break;
        timeout = static_cast<int>(std::min<int64_t>(left.count(), idle_ms));
      }
      if (read_lines && !finishing) std::this_thread::sleep_for(kGatherPause);
      read_lines = false;
      const int ready = ::epoll_wait(epoll_fd, events.data(), kMaxEvents, timeout);
      for (int i = 0; i < ready; ++i) {
        const int fd = events[static_cast<size_t>(i)].data.fd;
        if (fd == event_fd) {
          uint64_t value = 0;
          (void)!::read(event_fd, &value, sizeof(value));
        } else if (fd == listen_fd) {
          Accept();
        } else {
          Read(fd);
        }
      }
      {
        std::lock_guard lock(mutex);
        assembler.FlushIdle(EpochSeconds(), options.idle_row_seconds, closed);
      }
      Deliver();
    }
    {
      std::lock_guard lock(mutex);
      assembler.Finish(closed);
      counts.values_dropped = assembler.values_dropped();
    }
    Deliver();
  }
};

Result<std::unique_ptr<MetricChannel>> MetricChannel::Open(const std::filesystem::path& path,
                                                           MetricChannelOptions options) {
  sockaddr_un address{};
  const std::string text = path.string();
  if (text.size() >= sizeof(address.sun_path)) {
    return Error{
        fmt::format("{}: longer than a socket's path may be ({} bytes)", text, sizeof(address.sun_path) - 1)};
  }
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  address.sun_family = AF_UNIX;
  struct stat info {};
  if (::lstat(text.c_str(), &info) == 0) {
    if (!S_ISSOCK(info.st_mode)) return Error{fmt::format("{}: exists and is not a socket", text)};
    ::unlink(text.c_str());  // an old run's
  }
  auto state = std::make_shared<State>();
  state->options = options;
  state->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (state->listen_fd < 0) return Error{fmt::format("{}: socket: {}", text, Reason(errno))};
  if (::bind(state->listen_fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return Error{fmt::format("{}: {}", text, Reason(errno))};
  }
  // Private before it listens: nobody can connect before the mode is set.
  if (::chmod(text.c_str(), 0600) != 0 || ::listen(state->listen_fd, SOMAXCONN) != 0) {
    const int error = errno;
    ::unlink(text.c_str());
    return Error{fmt::format("{}: {}", text, Reason(error))};
  }
  state->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  state->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event listen_event{};
  listen_event.events = EPOLLIN;
  listen_event.data.fd = state->listen_fd;
  epoll_event wake_event{};
  wake_event.events = EPOLLIN;
  wake_event.data.fd = state->event_fd;
  if (state->epoll_fd < 0 || state->event_fd < 0 ||
      ::epoll_ctl(state->epoll_fd, EPOLL_CTL_ADD, state->listen_fd, &listen_event) != 0 ||
      ::epoll_ctl(state->epoll_fd, EPOLL_CTL_ADD, state->event_fd, &wake_event) != 0) {
    const int error = errno;
    ::unlink(text.c_str());
    return Error{fmt::format("{}: epoll: {}", text, Reason(error))};
  }
  return std::unique_ptr<MetricChannel>(new MetricChannel(path, std::move(state)));
}

MetricChannel::~MetricChannel() {
  Finish(std::chrono::milliseconds(0));
  ::unlink(path_.c_str());
}

void MetricChannel::Start(RowSink sink, Warn warn) {
  if (state_->thread.joinable()) return;
  state_->sink = std::move(sink);
  state_->warn = std::move(warn);
  state_->thread = std::thread([state = state_] { state->Run(); });
}

void MetricChannel::Finish(std::chrono::milliseconds grace) {
  if (!state_->thread.joinable()) return;
  state_->deadline = Clock::now() + grace;
  state_->finishing = true;
  const uint64_t one = 1;
  (void)!::write(state_->event_fd, &one, sizeof(one));
  state_->thread.join();
}

std::vector<MetricItem> MetricChannel::Summary() const {
  std::lock_guard lock(state_->mutex);
  return state_->assembler.Summary();
}

MetricChannelCounts MetricChannel::counts() const {
  std::lock_guard lock(state_->mutex);
  MetricChannelCounts counts = state_->counts;
  counts.values_dropped = state_->assembler.values_dropped();
  return counts;
}

}  // namespace runmon::user_metrics
