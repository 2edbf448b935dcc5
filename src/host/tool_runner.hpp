// Running a vendor tool once and taking its output (`rocm-smi --json`, `amd-smi metric --json`): argv, no
// shell, a deadline, a cap on the output kept, the tail of stderr for the error message. The tool and
// everything it started (its process group) are killed when the deadline passes or the output goes over
// the cap: SIGTERM, then SIGKILL after a grace. The tool is always reaped before RunTool returns. Safe to
// call from several threads at once; each call blocks its caller until the tool is done or the deadline
// has passed (plus the grace).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "core/result.hpp"
#include "host/tool_process.hpp"

namespace runmon {

struct ToolLimits {
  double deadline_seconds = 5.0;
  size_t max_stdout_bytes = 16 * 1024 * 1024;  // more: the tool is killed and the run is an error
  size_t stderr_tail_bytes = 2048;             // the last bytes of stderr kept for the message
  double kill_grace_seconds = 0.5;             // between SIGTERM and SIGKILL
  // When set: the caller's stop request. Once true, the tool is ended as at its deadline (within 50 ms), so
  // a caller shutting down never waits out a hung tool's deadline.
  const std::atomic<bool>* stop = nullptr;
};

struct ToolOutput {
  std::string stdout_text;
  std::string stderr_tail;  // what a tool that succeeded still said on stderr (warnings), trimmed
};

// The tool's stdout when it exits with status 0. Otherwise an error starting with the executable's name:
// "rocm-smi: command not found", "X: exited with status 2: <stderr tail>", "X: killed by SIGSEGV: ...",
// "X: timed out after 0.5 s", "X: output over 1048576 bytes", "X: stopped".
Result<ToolOutput> RunTool(const ToolCommand& command, const ToolLimits& limits);

}  // namespace runmon
