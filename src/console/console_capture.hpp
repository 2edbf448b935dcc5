// The command's stdout and stderr as `runmon run` captures them. Each stream gets a pseudo-terminal when
// runmon's own stream is a terminal (so the command still sees a terminal: isatty, colours, `\r` progress
// bars and the window size, which is copied at the start and again on every SIGWINCH, then signalled to the
// command) and a pipe otherwise (as a command whose output is redirected sees). The pseudo-terminal is
// not the command's controlling terminal: that stays runmon's, so the keyboard, job control and the
// terminal's signals reach the command exactly as before.
//
// A reader thread drains both streams as fast as the command writes and passes every byte on to runmon's
// own stdout and stderr unchanged (blocking there as the command would block on them; a passthrough that
// fails, a closed pipe, is given up). From a pipe the kernel does the copying: tee(2) puts a copy into a
// recording pipe and splice(2) moves the output on, so a flood costs runmon no copy of its own; from a
// pseudo-terminal (which gives at most 4 KiB a read) the reader reads all it holds into a chunk, writes the
// chunk on with one write and keeps a copy in a bounded backlog (whose buffers the recorder hands back,
// so a flood allocates nothing per batch). A recorder thread turns what was kept into OutputRawRecord text
// (OutputCoalescer) at most every flush interval, gives it to the sink (the run log) in pieces of at most
// kMaxRecordBytes, and keeps files/output.log (its finished lines written as they add up to 1 MiB).
// Output that the recorder cannot keep up with (a flood) is passed on unrecorded, never waited for: the
// command is never slowed by the recording, and what was not recorded is counted and marked in the text.
//
// Finish() is called once the command exited: what its ends still hold is read (until every writer closed
// them, or a grace period for descendants that keep them open), recorded, and the threads stop. A reader
// stuck writing to runmon's blocked stdout is left behind after the grace period instead of holding the
// run up: its state is shared, so nothing it touches goes away.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "console/output_log_file.hpp"
#include "console/terminal_lines.hpp"
#include "core/result.hpp"

namespace runmon::console {

struct ConsoleCaptureOptions {
  // Per stream (stdout, stderr): where runmon passes the output on to, and whether the command gets a
  // pseudo-terminal for it (the app sets it when that descriptor is a terminal).
  std::array<int, 2> passthrough{1, 2};
  std::array<bool, 2> terminal{false, false};
  size_t backlog_bytes = 16u << 20;  // per stream
  std::chrono::milliseconds flush_interval{500};
};

struct CaptureCounts {
  std::array<uint64_t, 2> bytes_read{};
  std::array<uint64_t, 2> bytes_dropped{};  // read but not recorded (the recorder or the sink was behind)
};

// Takes a record's text; false when it could not be kept (it is then counted as dropped).
using ConsoleRecordSink = std::function<bool(ConsoleStream stream, std::string_view text, double timestamp)>;
using ConsoleWarn = std::function<void(const std::string&)>;

class ConsoleCapture {
 public:
  static constexpr size_t kMaxRecordBytes = 256u << 10;

  // Creates the pseudo-terminals or pipes. SIGWINCH must be blocked in every thread of the process (the
  // reader takes it from a signalfd); the command's signal mask is its own (SpawnChild restores it).
  static Result<std::unique_ptr<ConsoleCapture>> Open(const ConsoleCaptureOptions& options);
  ~ConsoleCapture();
  ConsoleCapture(const ConsoleCapture&) = delete;
  ConsoleCapture& operator=(const ConsoleCapture&) = delete;

  // The descriptor the command gets as its stdout or stderr.
  int command_fd(ConsoleStream stream) const;
  // After the command started: closes the command's ends here and starts the threads. `output_log` may be
  // null (no files/output.log).
  Status Start(pid_t command, ConsoleRecordSink sink, std::unique_ptr<OutputLogFile> output_log,
               ConsoleWarn warn);
  // After the command exited: reads what is left, records it and stops (see the file comment).
  void Finish(std::chrono::milliseconds grace);
  CaptureCounts counts() const;

  struct State;  // shared with the threads

 private:
  explicit ConsoleCapture(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace runmon::console
