// Spawning and ending a vendor tool (see tool_process.hpp). The pipes are made close-on-exec and the
// spawn's dup2 puts them on fds 1 and 2 of the child only, so a tool started by one thread never holds the
// pipe of a tool started by another (which would keep that one's stdout open after it exits). Ending the
// tool waits for it with WNOWAIT: an exited tool stays a zombie until the group has had its SIGKILL, so its
// pid, which names the group, cannot be reused by an unrelated process in between.
#include "host/tool_process.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "host/child_process.hpp"

extern char** environ;

namespace runmon {
namespace {

// Owns the spawn attributes and file actions for one spawn.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attributes_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attributes_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // Own process group, default dispositions for every signal, nothing blocked; stdin from the pipe's read
  // end `stdin_read` (or /dev/null when it is -1), the pipes on 1 and 2, nothing else open.
  int Prepare(int stdin_read, int stdout_write, int stderr_write) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    int error = ::posix_spawnattr_setflags(
        &attributes_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (error == 0) error = ::posix_spawnattr_setpgroup(&attributes_, 0);
    if (error == 0) error = ::posix_spawnattr_setsigdefault(&attributes_, &all);
    if (error == 0) error = ::posix_spawnattr_setsigmask(&attributes_, &none);
    if (error == 0) {
      error = stdin_read >= 0 ? ::posix_spawn_file_actions_adddup2(&actions_, stdin_read, 0)
                              : ::posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    }
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions_, stdout_write, 1);
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions_, stderr_write, 2);
    if (error == 0) error = ::posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
    return error;
  }

  const posix_spawnattr_t* attributes() const { return &attributes_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attributes_;
  posix_spawn_file_actions_t actions_;
};

std::vector<char*> NullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const auto& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

void CloseBoth(const int (&fds)[2]) {
  ::close(fds[0]);
  ::close(fds[1]);
}

// Waits up to `seconds` for `pid` to exit, leaving it unreaped; true when it has.
bool ExitsWithin(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return true;  // not our child any more (SIGCHLD ignored): nothing left to wait for
    }
    if (info.si_pid == pid) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::optional<std::vector<std::string>> ToolEnvironment(
    const std::map<std::string, std::string>& environment) {
  if (environment.empty()) return std::nullopt;
  std::vector<std::string> entries;
  entries.reserve(environment.size());
  for (const auto& [name, value] : environment) entries.push_back(name + "=" + value);
  return entries;
}

Result<SpawnedTool> SpawnTool(const ToolCommand& command, bool stdin_pipe) {
  auto found = FindExecutable(command.executable, command.search_path);
  if (auto* lookup_error = std::get_if<CommandLookupError>(&found)) return Error{lookup_error->message};
  const std::string& path = std::get<std::string>(found);

  std::vector<std::string> argv{command.executable};
  argv.insert(argv.end(), command.arguments.begin(), command.arguments.end());
  std::vector<char*> arguments = NullTerminated(argv);
  std::vector<char*> environment;
  if (command.environment) environment = NullTerminated(*command.environment);

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Error{fmt::format("{}: pipe: {}", command.executable, std::strerror(errno))};
  }
  if (::pipe2(err, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int error = errno;
    CloseBoth(out);
    return Error{fmt::format("{}: pipe: {}", command.executable, std::strerror(error))};
  }
  int in[2] = {-1, -1};
  if (stdin_pipe && ::pipe2(in, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int error = errno;
    CloseBoth(out);
    CloseBoth(err);
    return Error{fmt::format("{}: pipe: {}", command.executable, std::strerror(error))};
  }
  // The child's ends block, as a tool expects of its stdin and stdout.
  ::fcntl(out[1], F_SETFL, 0);
  ::fcntl(err[1], F_SETFL, 0);
  if (stdin_pipe) ::fcntl(in[0], F_SETFL, 0);

  SpawnSetup setup;
  pid_t pid = -1;
  int error = setup.Prepare(in[0], out[1], err[1]);
  if (error == 0) {
    error = ::posix_spawn(&pid, path.c_str(), setup.actions(), setup.attributes(), arguments.data(),
                          command.environment ? environment.data() : environ);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (stdin_pipe) ::close(in[0]);
  if (error != 0) {
    ::close(out[0]);
    ::close(err[0]);
    if (stdin_pipe) ::close(in[1]);
    return Error{fmt::format("cannot run {}: {}", path, std::strerror(error))};
  }
  return SpawnedTool{.pid = pid, .stdout_fd = out[0], .stderr_fd = err[0], .stdin_fd = in[1]};
}

std::optional<int> TerminateToolGroup(pid_t pid, double grace_seconds, bool* needed_sigkill) {
  ::killpg(pid, SIGTERM);
  const bool exited = ExitsWithin(pid, grace_seconds);
  if (needed_sigkill != nullptr) *needed_sigkill = !exited;
  ::killpg(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  return status;
}

void BlockRequestSignalsOnThisThread() {
  sigset_t requests;
  sigemptyset(&requests);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD}) {
    sigaddset(&requests, signal);
  }
  ::pthread_sigmask(SIG_BLOCK, &requests, nullptr);
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exited with status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(wait_status));
    if (name != nullptr) return fmt::format("killed by SIG{}", name);
    return fmt::format("killed by signal {}", WTERMSIG(wait_status));
  }
  return fmt::format("ended with wait status {}", wait_status);
}

void TailBuffer::Append(std::string_view bytes) {
  if (bytes.size() >= capacity_) {
    dropped_ = dropped_ || bytes.size() > capacity_ || !kept_.empty();
    kept_.assign(bytes.substr(bytes.size() - capacity_));
    return;
  }
  const size_t total = kept_.size() + bytes.size();
  if (total > capacity_) {
    kept_.erase(0, total - capacity_);
    dropped_ = true;
  }
  kept_.append(bytes);
}

std::string TailBuffer::Text() const {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = kept_.find_first_not_of(kSpace);
  if (first == std::string::npos) return {};
  const std::string_view trimmed =
      std::string_view(kept_).substr(first, kept_.find_last_not_of(kSpace) - first + 1);
  return dropped_ ? fmt::format("...{}", trimmed) : std::string(trimmed);
}

void TailBuffer::Clear() {
  kept_.clear();
  dropped_ = false;
}

bool ReadAvailable(int fd, std::string* buffer) {
  constexpr size_t kChunk = 64 * 1024;
  buffer->resize(kChunk);
  for (;;) {
    const ssize_t n = ::read(fd, buffer->data(), kChunk);
    if (n > 0) {
      buffer->resize(static_cast<size_t>(n));
      return true;
    }
    buffer->clear();
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

}  // namespace runmon
