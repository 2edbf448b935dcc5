// A long-lived tool that prints one document per line (neuron-monitor prints one per period; runmon's IPU
// helper answers each request written to its stdin with one), run beside runmon for as long as a
// collector needs it. Its output is read on a thread of its own, so a slow or silent tool never delays the
// sampler: each complete, non-blank line goes to the line handler on that thread (the collector parses it
// and keeps the latest under its own lock; JsonLines adapts a handler of JSON documents). A line the
// handler rejects is reported with its start and skipped. Lines may arrive split across any number of
// writes; a line over `max_line_bytes` (16 MiB) is skipped up to its newline and reported, never buffered
// whole. When the tool exits it is reaped, reported with its status and stderr's tail, and started again
// after a delay that doubles from `restart_initial_seconds` up to `restart_max_seconds` (back to the start
// once a run has lasted `restart_max_seconds`); a collector that finds the tool hung (no answer, no
// document for too long) ends the run with EndRun, which counts as an exit. Stop (or the destructor) ends
// it within about `stop_grace_seconds`: SIGTERM to its process group, SIGKILL after the grace, reaped; it
// never leaves a zombie and never keeps runmon from exiting.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "host/tool_process.hpp"

namespace runmon {

class LineSplitter;

struct StreamingToolOptions {
  size_t max_line_bytes = 16 * 1024 * 1024;
  size_t stderr_tail_bytes = 2048;
  double restart_initial_seconds = 1.0;
  double restart_max_seconds = 60.0;
  double stop_grace_seconds = 0.5;
  // The tool's stdin is a pipe Send writes to (else /dev/null); the tool sees its end when it is stopped.
  bool requests_on_stdin = false;
};

// The wait before restart number `restart` (1 for the first): initial * 2^(restart-1), at most `max`.
double RestartDelaySeconds(int restart, double initial_seconds, double max_seconds);

class StreamingTool {
 public:
  // Takes one complete line (without its '\n'; never blank); an error makes it a skipped line, reported as
  // "<tool>: skipped a line (<error>): <the line's start>".
  using LineHandler = std::function<Status(std::string_view line)>;
  using DocumentHandler = std::function<void(nlohmann::json document)>;
  // Reports of what went wrong (the tool exited, a line was not JSON or too long), each a whole sentence
  // starting with the executable's name. Called on the reader thread; the caller rate-limits them.
  using WarningHandler = std::function<void(const std::string& message)>;

  // Starts the tool and the reader thread. A tool that cannot be started counts as one that exited: it is
  // reported and tried again after the delay.
  StreamingTool(ToolCommand command, StreamingToolOptions options, LineHandler on_line,
                WarningHandler on_warning);
  ~StreamingTool();
  StreamingTool(const StreamingTool&) = delete;
  StreamingTool& operator=(const StreamingTool&) = delete;

  // Ends the tool and the reader thread; the handlers are not called once it returns. Idempotent, and may
  // be called from any thread but the reader's (not from a handler).
  void Stop();

  // Writes `line` (and a '\n') to the running tool's stdin (requests_on_stdin). False when no run of the
  // tool is up, its stdin is closed, or the pipe is full (the tool has not read what it was sent): the
  // request was not delivered. Never blocks; any thread.
  bool Send(std::string_view line);

  // Ends the current run of the tool at once (SIGKILL to its group), to be reported with `reason` and
  // restarted after the usual delay: for a tool that is running but hung. Nothing when no run is up.
  void EndRun(const std::string& reason);

  // How many times the tool has been started again after it ended.
  int restarts() const { return restarts_.load(); }

 private:
  void Run();
  // Reads one run of the tool until it ends (false) or Stop is called (true).
  bool ReadUntilEnd(const SpawnedTool& tool, LineSplitter* splitter, TailBuffer* stderr_tail);
  void HandleLine(std::string_view line);
  // Waits `seconds` or until Stop; true when stopped.
  bool WaitOrStop(double seconds);

  ToolCommand command_;
  StreamingToolOptions options_;
  LineHandler on_line_;
  WarningHandler on_warning_;
  // The current run, for Send and EndRun: set by the reader thread once the tool is up, cleared before it
  // is reaped (so EndRun never signals a reused pid).
  std::mutex run_mutex_;
  pid_t running_pid_ = -1;
  int stdin_fd_ = -1;
  std::string end_reason_;  // set by EndRun: why this run ended, instead of its exit status
  std::atomic<int> restarts_{0};
  std::atomic<bool> stopping_{false};
  int wake_fds_[2] = {-1, -1};  // a pipe: Stop writes a byte so the reader's poll returns at once
  std::mutex stop_mutex_;       // one Stop joins the reader; others wait for it
  std::thread reader_;
};

// A line handler that parses each line as JSON and hands the document on; a line that is not JSON is
// rejected ("not JSON").
StreamingTool::LineHandler JsonLines(StreamingTool::DocumentHandler on_document);

// A StreamingTool started (the constructor's arguments): the default of
// CollectorContext::start_streaming_tool.
std::unique_ptr<StreamingTool> StartStreamingTool(ToolCommand command, StreamingToolOptions options,
                                                  StreamingTool::LineHandler on_line,
                                                  StreamingTool::WarningHandler on_warning);

}  // namespace runmon
