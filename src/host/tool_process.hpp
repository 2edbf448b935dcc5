// Starting a vendor tool (rocm-smi, neuron-monitor, ...) as a child with its stdout and stderr on pipes,
// and ending it. Shared by the one-shot runner (tool_runner.hpp) and the streaming child
// (streaming_tool.hpp). The tool gets an argv (no shell), stdin from /dev/null (or a pipe the caller
// writes requests to), no descriptor of runmon's but its pipes (every runmon fd is close-on-exec, and the
// spawn closes fds 3 and up as well), default signal dispositions and an empty signal mask, and a process
// group of its own, so ending it ends whatever it started too. posix_spawn does the fork and exec without
// running any of runmon's code in the child, so several threads may start tools at once.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon {

struct ToolCommand {
  // A path, or a name looked up on `search_path` as a shell would (the PATH of the environment the caller
  // was given: the runner never reads runmon's own).
  std::string executable;
  std::vector<std::string> arguments{};  // argv[1...]; argv[0] is `executable` as given
  std::string search_path = "/usr/local/bin:/usr/bin:/bin";
  // "NAME=value" entries, the whole environment of the tool; unset: runmon's own environment.
  std::optional<std::vector<std::string>> environment{};
};

// A started tool: its pid (also its process group), the read ends of its stdout and stderr pipes and, when
// asked for, the write end of its stdin pipe (all non-blocking, close-on-exec; the caller closes them).
struct SpawnedTool {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int stdin_fd = -1;
};

// A tool's whole environment (ToolCommand::environment) from an injected one (a collector's context): its
// "NAME=VALUE" entries, or nullopt (runmon's own) when it is empty.
std::optional<std::vector<std::string>> ToolEnvironment(
    const std::map<std::string, std::string>& environment);

// Starts the tool, its stdin a pipe when `stdin_pipe` (else /dev/null); an error names the executable and
// the reason ("rocm-smi: command not found").
Result<SpawnedTool> SpawnTool(const ToolCommand& command, bool stdin_pipe = false);

// Ends the tool's process group and reaps the tool: SIGTERM to the group, up to `grace_seconds` for the
// tool to exit, then SIGKILL to the group (also to anything it started that ignored SIGTERM). Returns the
// tool's wait status, or nullopt when it could not be had (SIGCHLD ignored). Sets *needed_sigkill when
// the tool itself was still running at the end of the grace (when given).
std::optional<int> TerminateToolGroup(pid_t pid, double grace_seconds, bool* needed_sigkill = nullptr);

// For a thread of runmon's that runs or reads tools (a streaming tool's reader, a collector's tool worker),
// called first on it: the signals runmon takes as requests (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2, SIGALRM, SIGCHLD) are blocked on it. Collectors start such threads when they are made, which may
// be before a command has blocked those signals for its signal waiter; a thread that has them unblocked would
// take a SIGTERM itself and, with the default action, end runmon without its final sample.
void BlockRequestSignalsOnThisThread();

// How the tool ended, for messages: "exited with status 3", "killed by SIGSEGV".
std::string DescribeWaitStatus(int wait_status);

// The last `capacity` bytes written to a stream (a tool's stderr, kept for its error message).
class TailBuffer {
 public:
  explicit TailBuffer(size_t capacity) : capacity_(capacity) {}
  void Append(std::string_view bytes);
  // The kept bytes, trimmed of surrounding white space, "..." in front when earlier bytes were dropped.
  std::string Text() const;
  void Clear();

 private:
  size_t capacity_;
  std::string kept_;
  bool dropped_ = false;
};

// Reads what a non-blocking pipe has now into `buffer` (replacing its contents). Returns false at the end
// of the stream (or on an error other than "nothing yet").
bool ReadAvailable(int fd, std::string* buffer);

}  // namespace runmon
