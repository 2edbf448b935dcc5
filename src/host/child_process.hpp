// Starting the command that `runmon run` monitors. The command is looked up on PATH first, so a missing or
// non-executable command is reported by runmon itself (exit 127 or 126, as a shell does) before anything
// starts. The child gets runmon's environment, stdin, stdout and stderr, and none of runmon's own changes:
// signal mask and ignored signals are reset and the open-file limit is put back to what it was before
// runmon raised it. An exec that still fails is reported through a close-on-exec pipe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.hpp"

namespace runmon {

struct CommandLookupError {
  int exit_status;  // 127: not found, 126: found but not executable
  std::string message;
};

// The path execv needs for `command`: itself when it contains a slash, else the first executable match on
// `search_path` (PATH; empty entries mean the current directory).
std::variant<std::string, CommandLookupError> FindExecutable(std::string_view command,
                                                             std::string_view search_path);

struct ChildOptions {
  std::optional<unsigned long> open_files_soft_limit;  // RLIMIT_NOFILE soft limit for the child
};

// Forks and execs; returns the child's pid once the exec has succeeded. On failure the child has been
// reaped and the error names the reason (with errno's text).
Result<pid_t> SpawnChild(const std::string& executable, const std::vector<std::string>& argv,
                         const ChildOptions& options);

// The exit status a shell would report for a wait status: the exit code, or 128 + the signal.
int ShellExitStatus(int wait_status);

}  // namespace runmon
