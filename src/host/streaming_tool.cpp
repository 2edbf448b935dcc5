// The streaming child's reader thread (see streaming_tool.hpp). One run of the tool ends when its stdout
// ends (it exited, or closed it); its group is then ended and the tool reaped, as on Stop, so nothing it
// started outlives the run. A line the tool had not finished when it ended is dropped, never joined to
// the next run's first line. Stop wakes the thread through a pipe, so neither a silent tool nor a restart
// delay makes it wait. Send and EndRun reach the current run through run_mutex_, which the reader holds
// while it publishes a run's pid and stdin and while it takes them back, before the tool is reaped.
#include "host/streaming_tool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "host/line_splitter.hpp"

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kQuotedPrefixBytes = 60;

// The start of a bad line, printable: bytes outside ASCII's printable range become '?'.
std::string QuotedPrefix(std::string_view line) {
  std::string text(line.substr(0, kQuotedPrefixBytes));
  for (char& c : text) {
    if (c < ' ' || c > '~') c = '?';
  }
  return line.size() > kQuotedPrefixBytes ? text + "..." : text;
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

double RestartDelaySeconds(int restart, double initial_seconds, double max_seconds) {
  const double doubled = initial_seconds * std::exp2(std::max(0, restart - 1));
  return std::min(doubled, max_seconds);
}

StreamingTool::StreamingTool(ToolCommand command, StreamingToolOptions options, LineHandler on_line,
                             WarningHandler on_warning)
    : command_(std::move(command)),
      options_(options),
      on_line_(std::move(on_line)),
      on_warning_(std::move(on_warning)) {
  if (::pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds_[0] = wake_fds_[1] = -1;
  reader_ = std::thread([this] {
    BlockRequestSignalsOnThisThread();
    Run();
  });
}

StreamingTool::~StreamingTool() {
  Stop();
  if (wake_fds_[0] >= 0) {
    ::close(wake_fds_[0]);
    ::close(wake_fds_[1]);
  }
}

void StreamingTool::Stop() {
  stopping_ = true;
  if (wake_fds_[1] >= 0) {
    const char byte = 1;
    const ssize_t ignored = ::write(wake_fds_[1], &byte, 1);
    (void)ignored;  // full pipe: a wake-up is pending anyway
  }
  std::lock_guard lock(stop_mutex_);
  if (reader_.joinable()) reader_.join();
}

bool StreamingTool::WaitOrStop(double seconds) {
  const auto until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  pollfd wake{wake_fds_[0], POLLIN, 0};
  while (!stopping_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return false;
    // Without a wake pipe (it could not be made), Stop is noticed within 100 ms.
    ::poll(&wake, 1, static_cast<int>(std::min<long long>(left, wake_fds_[0] >= 0 ? 60'000 : 100)));
  }
  return true;
}

void StreamingTool::Run() {
  LineSplitter splitter(options_.max_line_bytes);
  TailBuffer stderr_tail(options_.stderr_tail_bytes);
  int consecutive_failures = 0;
  while (!stopping_) {
    const auto started = Clock::now();
    std::string why;
    auto spawned = SpawnTool(command_, options_.requests_on_stdin);
    if (!spawned) {
      why = spawned.error();
    } else {
      {
        std::lock_guard lock(run_mutex_);
        running_pid_ = spawned->pid;
        stdin_fd_ = spawned->stdin_fd;
        end_reason_.clear();
      }
      const bool stopped = ReadUntilEnd(*spawned, &splitter, &stderr_tail);
      std::string end_reason;
      {
        std::lock_guard lock(run_mutex_);
        running_pid_ = -1;
        if (stdin_fd_ >= 0) ::close(stdin_fd_);
        stdin_fd_ = -1;
        end_reason.swap(end_reason_);
      }
      const auto status = TerminateToolGroup(spawned->pid, options_.stop_grace_seconds);
      if (stopped) return;
      if (!end_reason.empty()) {
        why = fmt::format("{}: {}", command_.executable, end_reason);
      } else {
        why = fmt::format("{}: {}", command_.executable,
                          status ? DescribeWaitStatus(*status) : std::string("ended (exit status lost)"));
      }
      if (const size_t dropped = splitter.Reset(); dropped > 0) {
        why += fmt::format(" in the middle of a line ({} bytes dropped)", dropped);
      }
      if (const std::string tail = stderr_tail.Text(); !tail.empty()) why += fmt::format(": {}", tail);
      stderr_tail.Clear();
    }
    const double ran_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (ran_seconds >= options_.restart_max_seconds) consecutive_failures = 0;
    ++consecutive_failures;
    const double delay = RestartDelaySeconds(consecutive_failures, options_.restart_initial_seconds,
                                             options_.restart_max_seconds);
    on_warning_(fmt::format("{}; starting it again in {} s", why, delay));
    if (WaitOrStop(delay)) return;
    ++restarts_;
  }
}

bool StreamingTool::ReadUntilEnd(const SpawnedTool& tool, LineSplitter* splitter, TailBuffer* stderr_tail) {
  const auto on_line = [this](std::string_view line) { HandleLine(line); };
  const auto on_overlong = [this](size_t bytes) {
    on_warning_(fmt::format("{}: skipped a line of {} bytes (the limit is {})", command_.executable, bytes,
                            options_.max_line_bytes));
  };
  pollfd fds[3] = {{tool.stdout_fd, POLLIN, 0}, {tool.stderr_fd, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
  std::string chunk;
  // Reads what stderr has now; false once it is empty or ended.
  const auto read_stderr = [&] {
    const bool open = ReadAvailable(fds[1].fd, &chunk);
    stderr_tail->Append(chunk);
    if (!open) {
      ::close(fds[1].fd);
      fds[1].fd = -1;
    }
    return open && !chunk.empty();
  };
  bool stopped = false;
  while (!stopped && fds[0].fd >= 0) {
    const int ready = ::poll(fds, 3, wake_fds_[0] >= 0 ? -1 : 100);
    stopped = stopping_;
    if (ready <= 0 || stopped) continue;
    if (fds[0].revents != 0) {
      const bool open = ReadAvailable(fds[0].fd, &chunk);
      splitter->Append(chunk, on_line, on_overlong);
      if (!open) {
        ::close(fds[0].fd);
        fds[0].fd = -1;
      }
    }
    if (fds[1].fd >= 0 && fds[1].revents != 0) read_stderr();
  }
  // The tool's last words on stderr, already in the pipe when its stdout ended.
  while (!stopped && fds[1].fd >= 0 && read_stderr()) {
  }
  for (const int fd : {fds[0].fd, fds[1].fd}) {
    if (fd >= 0) ::close(fd);
  }
  return stopped;
}

void StreamingTool::HandleLine(std::string_view line) {
  if (IsBlank(line)) return;
  if (Status handled = on_line_(line); !handled) {
    on_warning_(
        fmt::format("{}: skipped a line ({}): {}", command_.executable, handled.error(), QuotedPrefix(line)));
  }
}

bool StreamingTool::Send(std::string_view line) {
  std::string request(line);
  request += '\n';
  std::lock_guard lock(run_mutex_);
  if (stdin_fd_ < 0) return false;
  // A tool that closed its stdin makes the write fail with EPIPE, and raise SIGPIPE: blocked on this thread
  // for the write, and taken back if it came, so runmon's disposition does not matter.
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  const ssize_t written = ::write(stdin_fd_, request.data(), request.size());
  const int write_error = errno;
  if (written < 0 && write_error == EPIPE) {
    const timespec no_wait{0, 0};
    while (::sigtimedwait(&pipe_signal, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (written == static_cast<ssize_t>(request.size())) return true;
  if (written > 0 || (written < 0 && write_error == EPIPE)) {
    // Half a request (the pipe filled mid-line) or a closed stdin: the tool cannot be talked to any more.
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
  return false;
}

void StreamingTool::EndRun(const std::string& reason) {
  std::lock_guard lock(run_mutex_);
  if (running_pid_ <= 0) return;
  end_reason_ = reason;
  // The pid is still the tool's: the reader clears it under this lock before reaping it.
  ::killpg(running_pid_, SIGKILL);
}

StreamingTool::LineHandler JsonLines(StreamingTool::DocumentHandler on_document) {
  return [on_document = std::move(on_document)](std::string_view line) -> Status {
    nlohmann::json document = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) return Error{"not JSON"};
    on_document(std::move(document));
    return OkStatus();
  };
}

std::unique_ptr<StreamingTool> StartStreamingTool(ToolCommand command, StreamingToolOptions options,
                                                  StreamingTool::LineHandler on_line,
                                                  StreamingTool::WarningHandler on_warning) {
  return std::make_unique<StreamingTool>(std::move(command), options, std::move(on_line),
                                         std::move(on_warning));
}

}  // namespace runmon
