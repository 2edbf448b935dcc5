// Starting the command that `runmon run` monitors. The command is looked up on PATH first, so a missing or
// non-executable command is reported by runmon itself (exit 127 or 126, as a shell does) before anything
// starts. The child gets runmon's environment, stdin, stdout and stderr (or the ends of runmon's console
// capture for stdout and stderr), and none of runmon's own changes:
// the signal mask and the dispositions runmon changed are put back to what runmon inherited (a signal
// ignored under nohup stays ignored), and so is the open-file limit. A file the kernel cannot execute
// (no #! line) runs with /bin/sh, as execvp and shells do. An exec that still fails is reported through a
// close-on-exec pipe.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// What runmon's process had when it started, for the child to get back.
struct InheritedProcessState {
  sigset_t signal_mask{};
  std::vector<std::pair<int, bool>> dispositions;  // signal, ignored: for the signals runmon changes
  std::optional<unsigned long> open_files_soft_limit;
};

// Records the signal mask and the dispositions of `signals` (call before changing them).
InheritedProcessState CaptureProcessState(const std::vector<int>& signals);

// The descriptors the child gets as its stdout and stderr (-1: runmon's own; they must be above 2 and
// close-on-exec, the child's copies on 1 and 2 are not), and variables ("NAME=value") its environment
// has besides runmon's, in place of runmon's of the same name.
struct ChildStreams {
  int out = -1;
  int err = -1;
  std::vector<std::string> environment = {};
};

// Forks and execs; returns the child's pid once the exec has succeeded. On failure the child has been
// reaped; the error has a shell's status (127 when the file is gone, 126 otherwise) and errno's text.
std::variant<pid_t, CommandLookupError> SpawnChild(const std::string& executable,
                                                   const std::vector<std::string>& argv,
                                                   const InheritedProcessState& inherited,
                                                   ChildStreams streams = {});

// The exit status a shell would report for a wait status: the exit code, or 128 + the signal.
int ShellExitStatus(int wait_status);

}  // namespace runmon
