// fork + exec for `runmon run` (see child_process.hpp). Between fork and exec the child calls only
// async-signal-safe functions: runmon has threads by then.
#include "host/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace runmon {

std::variant<std::string, CommandLookupError> FindExecutable(std::string_view command,
                                                             std::string_view search_path) {
  if (command.empty()) return CommandLookupError{127, "empty command"};
  const auto check = [](const std::string& path) -> int {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return ENOENT;
    if (S_ISDIR(info.st_mode)) return EISDIR;
    if (::access(path.c_str(), X_OK) != 0) return EACCES;
    return 0;
  };
  if (command.find('/') != std::string_view::npos) {
    const std::string path(command);
    const int error = check(path);
    if (error == 0) return path;
    if (error == ENOENT) return CommandLookupError{127, fmt::format("{}: no such file", path)};
    return CommandLookupError{126, fmt::format("{}: {}", path, std::strerror(error))};
  }
  std::optional<CommandLookupError> found_but_unusable;
  size_t start = 0;
  for (;;) {
    const size_t colon = search_path.find(':', start);
    std::string_view directory =
        search_path.substr(start, colon == std::string_view::npos ? colon : colon - start);
    if (directory.empty()) directory = ".";
    const std::string path = fmt::format("{}/{}", directory, command);
    const int error = check(path);
    if (error == 0) return path;
    if (error != ENOENT && !found_but_unusable) {
      found_but_unusable = CommandLookupError{126, fmt::format("{}: {}", path, std::strerror(error))};
    }
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (found_but_unusable) return *found_but_unusable;
  return CommandLookupError{127, fmt::format("{}: command not found", command)};
}

InheritedProcessState CaptureProcessState(const std::vector<int>& signals) {
  InheritedProcessState state;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &state.signal_mask);
  for (int signal_number : signals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) == 0) {
      state.dispositions.emplace_back(signal_number, current.sa_handler == SIG_IGN);
    }
  }
  return state;
}

std::variant<pid_t, CommandLookupError> SpawnChild(const std::string& executable,
                                                   const std::vector<std::string>& argv,
                                                   const InheritedProcessState& inherited,
                                                   ChildStreams streams) {
  if (argv.empty()) return CommandLookupError{127, "no command"};
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> arguments;
  for (const auto& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);
  // The environment: runmon's own, a variable named in `environment` replaced by its entry there.
  std::vector<char*> environment_entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    const bool replaced =
        std::any_of(streams.environment.begin(), streams.environment.end(), [&](const std::string& added) {
          return added.size() > name.size() && added.starts_with(name) && added[name.size()] == '=';
        });
    if (!replaced) environment_entries.push_back(*entry);
  }
  for (const auto& added : streams.environment)
    environment_entries.push_back(const_cast<char*>(added.c_str()));
  environment_entries.push_back(nullptr);
  static char shell[] = "/bin/sh";
  std::vector<char*> shell_arguments = {shell, const_cast<char*>(executable.c_str())};
  for (size_t i = 1; i < argv.size(); ++i) shell_arguments.push_back(const_cast<char*>(argv[i].c_str()));
  shell_arguments.push_back(nullptr);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return CommandLookupError{126, fmt::format("pipe: {}", std::strerror(errno))};
  }
  rlimit open_files{};
  const bool restore_open_files =
      inherited.open_files_soft_limit && ::getrlimit(RLIMIT_NOFILE, &open_files) == 0;
  if (restore_open_files) {
    open_files.rlim_cur = std::min<rlim_t>(*inherited.open_files_soft_limit, open_files.rlim_max);
  }

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    return CommandLookupError{126, fmt::format("fork: {}", std::strerror(error))};
  }
  if (pid == 0) {
    ::close(report[0]);
    for (const auto& [signal_number, ignored] : inherited.dispositions) {
      struct sigaction action {};
      action.sa_handler = ignored ? SIG_IGN : SIG_DFL;
      ::sigaction(signal_number, &action, nullptr);
    }
    if ((streams.out >= 0 && ::dup2(streams.out, STDOUT_FILENO) < 0) ||
        (streams.err >= 0 && ::dup2(streams.err, STDERR_FILENO) < 0)) {
      const int error = errno;
      ssize_t ignored = ::write(report[1], &error, sizeof(error));
      (void)ignored;
      ::_exit(126);
    }
    ::sigprocmask(SIG_SETMASK, &inherited.signal_mask, nullptr);
    if (restore_open_files) ::setrlimit(RLIMIT_NOFILE, &open_files);
    ::execve(executable.c_str(), arguments.data(), environment_entries.data());
    int error = errno;
    if (error == ENOEXEC) {
      ::execve(shell, shell_arguments.data(), environment_entries.data());
      error = errno;
    }
    ssize_t ignored = ::write(report[1], &error, sizeof(error));
    (void)ignored;
    ::_exit(error == ENOENT ? 127 : 126);
  }
  ::close(report[1]);
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_error))) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return CommandLookupError{exec_error == ENOENT ? 127 : 126,
                              fmt::format("cannot run {}: {}", executable, std::strerror(exec_error))};
  }
  return pid;
}

int ShellExitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace runmon
