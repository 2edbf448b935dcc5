// One run of a tool (see tool_runner.hpp): poll both pipes until both have ended and the tool has exited,
// or the deadline passes, or stdout goes over its cap. A tool may close its pipes and go on running (or
// exit while something it started still holds them): both ends are waited for, each within the deadline,
// so neither a silent tool nor a grandchild holding the pipe makes the caller wait past it.
#include "host/tool_runner.hpp"

#include <poll.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <cerrno>
#include <chrono>
#include <limits>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

// poll's timeout for `deadline`, rounded up (a wake-up a little early would be taken for the deadline).
int MillisecondsUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left + 1, std::numeric_limits<int>::max()));
}

// The tool's wait status once it has exited by `deadline`, else nullopt (still running). *lost is set when
// the status cannot be had (SIGCHLD ignored: the kernel reaped it). The pipes end a moment before the tool
// is a zombie, so the first waits are short: 50 us, doubling up to 5 ms.
std::optional<int> ReapBy(pid_t pid, Clock::time_point deadline, bool* lost) {
  std::chrono::microseconds pause(50);
  for (;;) {
    int status = 0;
    const pid_t waited = ::waitpid(pid, &status, WNOHANG);
    if (waited == pid) return status;
    if (waited < 0 && errno == EINTR) continue;
    if (waited < 0) {
      *lost = true;
      return 0;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

std::string WithStderr(std::string message, const TailBuffer& stderr_tail) {
  const std::string tail = stderr_tail.Text();
  if (!tail.empty()) message += fmt::format(": {}", tail);
  return message;
}

}  // namespace

Result<ToolOutput> RunTool(const ToolCommand& command, const ToolLimits& limits) {
  auto spawned = SpawnTool(command);
  if (!spawned) return Error{spawned.error()};
  const SpawnedTool tool = *spawned;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(limits.deadline_seconds));
  ToolOutput output;
  TailBuffer stderr_tail(limits.stderr_tail_bytes);
  std::string chunk;
  pollfd fds[2] = {{tool.stdout_fd, POLLIN, 0}, {tool.stderr_fd, POLLIN, 0}};
  bool over_cap = false;
  bool stopped = false;
  const auto stop_requested = [&limits] { return limits.stop != nullptr && limits.stop->load(); };
  while ((fds[0].fd >= 0 || fds[1].fd >= 0) && !over_cap) {
    // With a stop request to watch, wake at least every 50 ms to look at it.
    const int wait = MillisecondsUntil(deadline);
    const int ready = ::poll(fds, 2, limits.stop != nullptr ? std::min(wait, 50) : wait);
    if (stop_requested()) {
      stopped = true;
      break;
    }
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || Clock::now() >= deadline) break;  // poll cannot fail otherwise on two valid fds
    if (ready == 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const bool open = ReadAvailable(fds[i].fd, &chunk);
      if (i == 0) {
        if (output.stdout_text.size() + chunk.size() > limits.max_stdout_bytes) {
          over_cap = true;
          break;
        }
        output.stdout_text.append(chunk);
      } else {
        stderr_tail.Append(chunk);
      }
      if (!open) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (const auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }

  bool status_lost = false;
  std::optional<int> status;
  if (!over_cap && !stopped && fds[0].fd < 0 && fds[1].fd < 0) {
    status = ReapBy(tool.pid, deadline, &status_lost);
  }
  if (!status) {
    bool needed_sigkill = false;
    TerminateToolGroup(tool.pid, limits.kill_grace_seconds, &needed_sigkill);
    std::string why =
        over_cap  ? fmt::format("{}: output over {} bytes", command.executable, limits.max_stdout_bytes)
        : stopped ? fmt::format("{}: stopped", command.executable)
                  : fmt::format("{}: timed out after {} s", command.executable, limits.deadline_seconds);
    if (needed_sigkill)
      why += fmt::format(" (killed with SIGKILL after ignoring SIGTERM for {} s)", limits.kill_grace_seconds);
    return Error{WithStderr(std::move(why), stderr_tail)};
  }
  if (status_lost) {
    return Error{fmt::format("{}: exit status lost (SIGCHLD is ignored)", command.executable)};
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return Error{
        WithStderr(fmt::format("{}: {}", command.executable, DescribeWaitStatus(*status)), stderr_tail)};
  }
  output.stderr_tail = stderr_tail.Text();
  return output;
}

}  // namespace runmon
