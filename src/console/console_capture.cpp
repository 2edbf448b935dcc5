// Capturing the command's console output (see console_capture.hpp).
#include "console/console_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "console/output_coalescer.hpp"
#include "core/wall_clock.hpp"

namespace runmon::console {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadBytes = 1u << 20;    // a full pipe in one read
constexpr size_t kChunkBytes = 64u << 10;  // written on at once from a pseudo-terminal
constexpr size_t kPipeBytes = 1u << 20;
constexpr size_t kTakeBytes = 1u << 20;  // the recorder wakes early once this much waits
constexpr size_t kSpareBuffers = 4;
constexpr size_t kSpareBufferBytes = 4u << 20;  // a larger one (a burst's) is given back to the system
constexpr size_t kOutputLogWindow = 32;         // W&B core's terminal height for output.log
constexpr auto kOutputLogInterval = std::chrono::seconds(2);
constexpr size_t kOutputLogBytes = 1u << 20;  // or once this much of finished lines waits
constexpr int kRecorderNice = 10;

size_t Index(ConsoleStream stream) {
  return stream == ConsoleStream::kStderr ? 1 : 0;
}
ConsoleStream StreamAt(size_t index) {
  return index == 1 ? ConsoleStream::kStderr : ConsoleStream::kStdout;
}
const char* StreamName(size_t index) {
  return index == 1 ? "stderr" : "stdout";
}

// Moves a descriptor above 2, so the command's dup2 onto 1 and 2 never meets it.
int AboveStandard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A pseudo-terminal with the settings of `like` (the terminal runmon writes to), except that output is
// not post-processed (`\n` stays `\n`, and the kernel's per-character pass is skipped): runmon's own
// terminal does that processing when runmon writes the bytes on.
Status OpenTerminal(int like, int& master, int& slave) {
  master = AboveStandard(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (master < 0) return Error{fmt::format("cannot open a pseudo-terminal: {}", std::strerror(errno))};
  std::array<char, 128> name{};
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
      ::ptsname_r(master, name.data(), name.size()) != 0) {
    return Error{fmt::format("cannot set up a pseudo-terminal: {}", std::strerror(errno))};
  }
  slave = AboveStandard(::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (slave < 0) return Error{fmt::format("cannot open {}: {}", name.data(), std::strerror(errno))};
  termios settings{};
  if (::tcgetattr(like, &settings) == 0) {
    settings.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    ::tcsetattr(slave, TCSANOW, &settings);
  } else if (::tcgetattr(slave, &settings) == 0) {
    settings.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    ::tcsetattr(slave, TCSANOW, &settings);
  }
  winsize size{};
  if (::ioctl(like, TIOCGWINSZ, &size) == 0) ::ioctl(master, TIOCSWINSZ, &size);
  ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);
  return OkStatus();
}

Status OpenPipe(int& read_end, int& write_end) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    return Error{fmt::format("cannot open a pipe: {}", std::strerror(errno))};
  read_end = AboveStandard(ends[0]);
  write_end = AboveStandard(ends[1]);
  if (read_end < 0 || write_end < 0)
    return Error{fmt::format("cannot open a pipe: {}", std::strerror(errno))};
  ::fcntl(read_end, F_SETPIPE_SZ, static_cast<int>(kPipeBytes));  // fewer wake-ups; the default is fine too
  ::fcntl(read_end, F_SETFL, ::fcntl(read_end, F_GETFL) | O_NONBLOCK);
  return OkStatus();
}

// Writes all of `data`, waiting when the descriptor is non-blocking and full. False on an error.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd writable{fd, POLLOUT, 0};
      ::poll(&writable, 1, -1);
      continue;
    }
    return false;
  }
  return true;
}

// The start of the last UTF-8 sequence that begins at or before `limit` (so a piece never cuts one).
size_t PieceEnd(const std::string& text, size_t start, size_t limit) {
  size_t end = std::min(text.size(), start + limit);
  if (end == text.size()) return end;
  while (end > start && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end > start ? end : std::min(text.size(), start + limit);
}

}  // namespace

struct ConsoleCapture::State {
  // What the command wrote, in order: bytes read from a pseudo-terminal, or a count of bytes waiting in
  // the stream's recording pipe (teed there from its pipe).
  struct Segment {
    size_t stream;
    std::string bytes;
    size_t piped = 0;
  };

  ConsoleCaptureOptions options;
  std::array<int, 2> read_fd{-1, -1};
  std::array<int, 2> command_fd{-1, -1};
  // For a pipe: the recording pipe the reader tees the output into (the recorder reads it).
  std::array<int, 2> recording_read{-1, -1};
  std::array<int, 2> recording_write{-1, -1};
  int signal_fd = -1;
  int wake_fd = -1;
  std::atomic<pid_t> command{0};
  std::atomic<int64_t> grace_ms{0};

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Segment> backlog;  // in the order the command wrote, across both streams
  // Segments' buffers the recorder is done with, for the reader to fill again: a flood then costs no
  // allocation (nor fresh pages) per batch.
  std::vector<std::string> spare;
  std::array<size_t, 2> backlog_bytes{};
  std::array<uint64_t, 2> dropped_unmarked{};  // dropped from the backlog since the recorder last took it
  CaptureCounts counts;
  bool reader_done = false;
  bool stop_recorder = false;

  ConsoleRecordSink sink;
  std::unique_ptr<OutputLogFile> output_log;
  ConsoleWarn warn;
  std::thread reader;
  std::thread recorder;

  ~State() {
    for (int& fd : read_fd) CloseFd(fd);
    for (int& fd : command_fd) CloseFd(fd);
    for (int& fd : recording_read) CloseFd(fd);
    for (int& fd : recording_write) CloseFd(fd);
    CloseFd(signal_fd);
    CloseFd(wake_fd);
  }

  void Read();
  // One readable stream: false at its end.
  bool ReadTerminal(size_t stream, std::span<char> buffer, bool& passthrough_ok);
  bool ReadPipe(size_t stream, std::span<char> buffer, bool& passthrough_ok, bool& splice_ok);
  void Keep(size_t stream, std::string_view bytes, size_t piped);
  void Record();
  std::string TakePiped(size_t stream, size_t size);
  void Resize();
  void Deliver(size_t stream, const std::string& text, TerminalLines& lines);
};

Result<std::unique_ptr<ConsoleCapture>> ConsoleCapture::Open(const ConsoleCaptureOptions& options) {
  auto state = std::make_shared<State>();
  state->options = options;
  bool any_terminal = false;
  for (size_t i = 0; i < 2; ++i) {
    const Status opened = options.terminal[i]
                              ? OpenTerminal(options.passthrough[i], state->read_fd[i], state->command_fd[i])
                              : OpenPipe(state->read_fd[i], state->command_fd[i]);
    if (!opened) return Error{opened.error()};
    any_terminal = any_terminal || options.terminal[i];
    if (!options.terminal[i]) {
      const Status recording = OpenPipe(state->recording_read[i], state->recording_write[i]);
      if (!recording) return Error{recording.error()};
      ::fcntl(state->recording_write[i], F_SETFL, ::fcntl(state->recording_write[i], F_GETFL) | O_NONBLOCK);
      // As much of the backlog as the kernel grants a pipe (1 MiB unprivileged).
      if (::fcntl(state->recording_write[i], F_SETPIPE_SZ, static_cast<int>(options.backlog_bytes)) < 0) {
        ::fcntl(state->recording_write[i], F_SETPIPE_SZ, static_cast<int>(kPipeBytes));
      }
    }
  }
  if (any_terminal) {
    sigset_t window_change;
    sigemptyset(&window_change);
    sigaddset(&window_change, SIGWINCH);
    state->signal_fd = AboveStandard(::signalfd(-1, &window_change, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  state->wake_fd = AboveStandard(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (state->wake_fd < 0) return Error{fmt::format("eventfd: {}", std::strerror(errno))};
  return std::unique_ptr<ConsoleCapture>(new ConsoleCapture(std::move(state)));
}

ConsoleCapture::~ConsoleCapture() {
  if (state_->reader.joinable() || state_->recorder.joinable()) Finish(std::chrono::milliseconds(0));
}

int ConsoleCapture::command_fd(ConsoleStream stream) const {
  return state_->command_fd[Index(stream)];
}

Status ConsoleCapture::Start(pid_t command, ConsoleRecordSink sink, std::unique_ptr<OutputLogFile> output_log,
                             ConsoleWarn warn) {
  State& state = *state_;
  for (int& fd : state.command_fd) CloseFd(fd);
  state.command = command;
  state.sink = std::move(sink);
  state.output_log = std::move(output_log);
  state.warn = std::move(warn);
  try {
    state.recorder = std::thread([shared = state_] { shared->Record(); });
    state.reader = std::thread([shared = state_] { shared->Read(); });
  } catch (const std::system_error& e) {
    {
      std::lock_guard lock(state.mutex);
      state.stop_recorder = true;
    }
    state.changed.notify_all();
    if (state.recorder.joinable()) state.recorder.join();
    return Error{fmt::format("cannot start the console capture: {}", e.what())};
  }
  return OkStatus();
}

void ConsoleCapture::Finish(std::chrono::milliseconds grace) {
  State& state = *state_;
  state.command = 0;  // reaped by now: never signal a pid that may be another process's
  state.grace_ms = grace.count();
  const uint64_t one = 1;
  if (::write(state.wake_fd, &one, sizeof(one)) < 0) {
    // An eventfd write fails only when its counter would overflow: it is already set.
  }
  if (state.reader.joinable()) {
    std::unique_lock lock(state.mutex);
    const bool done = state.changed.wait_for(lock, grace + std::chrono::milliseconds(500),
                                             [&] { return state.reader_done; });
    lock.unlock();
    if (done) {
      state.reader.join();
    } else {
      state.reader.detach();  // blocked writing to runmon's stdout: see the file comment
    }
  }
  {
    std::lock_guard lock(state.mutex);
    state.stop_recorder = true;
  }
  state.changed.notify_all();
  if (state.recorder.joinable()) state.recorder.join();
}

CaptureCounts ConsoleCapture::counts() const {
  std::lock_guard lock(state_->mutex);
  return state_->counts;
}

void ConsoleCapture::State::Resize() {
  signalfd_siginfo info{};
  while (::read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!options.terminal[i]) continue;
    winsize size{};
    if (::ioctl(options.passthrough[i], TIOCGWINSZ, &size) == 0) ::ioctl(read_fd[i], TIOCSWINSZ, &size);
  }
  // The pseudo-terminal is nobody's controlling terminal, so the kernel signals nobody: runmon does.
  if (const pid_t pid = command; pid > 0) ::kill(pid, SIGWINCH);
}

void ConsoleCapture::State::Read() {
  // Not zeroed: pages of it that no read reaches are never made resident.
  const std::unique_ptr<char[]> storage(new char[kReadBytes]);
  const std::span<char> buffer(storage.get(), kReadBytes);
  std::array<bool, 2> passthrough_ok{true, true};
  std::array<bool, 2> splice_ok{true, true};
  std::array<pollfd, 4> watched{};
  watched[0] = {read_fd[0], POLLIN, 0};
  watched[1] = {read_fd[1], POLLIN, 0};
  watched[2] = {signal_fd, POLLIN, 0};
  watched[3] = {wake_fd, POLLIN, 0};
  int open_streams = 2;
  std::optional<Clock::time_point> deadline;
  while (open_streams > 0) {
    int timeout = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) break;
      timeout = static_cast<int>(left);
    }
    const int ready = ::poll(watched.data(), watched.size(), timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (size_t i = 0; i < 2; ++i) {
      if (watched[i].fd < 0 || watched[i].revents == 0) continue;
      const bool open = options.terminal[i] ? ReadTerminal(i, buffer, passthrough_ok[i])
                                            : ReadPipe(i, buffer, passthrough_ok[i], splice_ok[i]);
      if (!open) {
        watched[i].fd = -1;
        --open_streams;
      }
    }
    if (watched[2].fd >= 0 && (watched[2].revents & POLLIN) != 0) Resize();
    if ((watched[3].revents & POLLIN) != 0 && !deadline) {
      watched[3].fd = -1;
      deadline = Clock::now() + std::chrono::milliseconds(grace_ms.load());
    }
  }
  {
    std::lock_guard lock(mutex);
    reader_done = true;
  }
  changed.notify_all();
}

void ConsoleCapture::State::Keep(size_t stream, std::string_view bytes, size_t piped) {
  const size_t size = piped > 0 ? piped : bytes.size();
  std::lock_guard lock(mutex);
  counts.bytes_read[stream] += size;
  if (piped == 0 && backlog_bytes[stream] + size > options.backlog_bytes) {
    counts.bytes_dropped[stream] += size;
    dropped_unmarked[stream] += size;
    return;
  }
  if (!backlog.empty() && backlog.back().stream == stream && (piped > 0) == (backlog.back().piped > 0)) {
    backlog.back().bytes.append(bytes);
    backlog.back().piped += piped;
  } else {
    std::string kept;
    if (!spare.empty()) {
      kept = std::move(spare.back());
      spare.pop_back();
    }
    kept.assign(bytes);
    backlog.push_back({stream, std::move(kept), piped});
  }
  backlog_bytes[stream] += size;
  if (backlog_bytes[0] + backlog_bytes[1] >= kTakeBytes) changed.notify_all();
}

bool ConsoleCapture::State::ReadTerminal(size_t stream, std::span<char> buffer, bool& passthrough_ok) {
  // A pseudo-terminal gives at most what its line discipline holds (4 KiB) a read: what it holds now is
  // read into one chunk of up to kChunkBytes, which is written on with one write and kept with one lock.
  // A few chunks per wake-up, so a flood on one stream never starves the other.
  const std::span<char> chunk = buffer.first(std::min(buffer.size(), kChunkBytes));
  for (int chunks = 0; chunks < 16; ++chunks) {
    size_t filled = 0;
    bool open = true;
    while (filled < chunk.size()) {
      const ssize_t n = ::read(read_fd[stream], chunk.data() + filled, chunk.size() - filled);
      if (n > 0) {
        filled += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        // EAGAIN: drained for now; 0, or EIO from a pseudo-terminal whose last writer closed it: the end.
        open = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        break;
      }
    }
    if (filled > 0) {
      if (passthrough_ok && !WriteAll(options.passthrough[stream], chunk.data(), filled))
        passthrough_ok = false;
      Keep(stream, std::string_view(chunk.data(), filled), 0);
    }
    if (!open) return false;
    if (filled == 0) return true;
  }
  return true;
}

// A pipe's output is copied by the kernel, never by runmon: tee(2) duplicates what it holds into the
// recording pipe, then splice(2) moves it to runmon's stdout or stderr. When the recording pipe is full
// (the recorder is behind) the output is read, written and kept in the backlog like a terminal's while
// the backlog has room, and past that moved on unrecorded (counted as dropped); where the destination
// takes no splice (some terminals), it is read and written.
bool ConsoleCapture::State::ReadPipe(size_t stream, std::span<char> buffer, bool& passthrough_ok,
                                     bool& splice_ok) {
  const int from = read_fd[stream];
  for (int rounds = 0; rounds < 16; ++rounds) {
    size_t size = 0;
    bool recorded = false;
    const ssize_t teed = ::tee(from, recording_write[stream], buffer.size(), SPLICE_F_NONBLOCK);
    if (teed > 0) {
      size = static_cast<size_t>(teed);
      recorded = true;
    } else if (teed == 0) {
      return false;  // no writer is left and nothing waits
    } else if (errno == EINTR) {
      continue;
    } else {
      int waiting = 0;
      if (::ioctl(from, FIONREAD, &waiting) != 0 || waiting <= 0) {
        pollfd hung_up{from, POLLIN, 0};
        return !(::poll(&hung_up, 1, 0) == 1 && (hung_up.revents & POLLHUP) != 0);
      }
      size = std::min(static_cast<size_t>(waiting), buffer.size());  // the recording pipe is full
      bool room = false;
      {
        std::lock_guard lock(mutex);
        room = backlog_bytes[stream] + size <= options.backlog_bytes;
      }
      if (room) {
        // A burst the recorder has not caught up with: kept in the backlog, as from a terminal.
        const ssize_t n = ::read(from, buffer.data(), size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n != 0;
        const auto got = static_cast<size_t>(n);
        if (passthrough_ok && !WriteAll(options.passthrough[stream], buffer.data(), got))
          passthrough_ok = false;
        Keep(stream, std::string_view(buffer.data(), got), 0);
        continue;
      }
    }
    // Move exactly `size` bytes on (those the recording pipe holds a copy of).
    size_t moved = 0;
    while (moved < size && passthrough_ok && splice_ok) {
      const ssize_t n =
          ::splice(from, nullptr, options.passthrough[stream], nullptr, size - moved, SPLICE_F_MOVE);
      if (n > 0) {
        moved += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EINVAL) {
        splice_ok = false;  // the destination takes no splice: read and write from now on
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd writable{options.passthrough[stream], POLLOUT, 0};
        ::poll(&writable, 1, -1);
      } else {
        passthrough_ok = false;
      }
    }
    while (moved < size) {
      const ssize_t n = ::read(from, buffer.data(), size - moved);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (passthrough_ok && !WriteAll(options.passthrough[stream], buffer.data(), static_cast<size_t>(n))) {
        passthrough_ok = false;
      }
      moved += static_cast<size_t>(n);
    }
    if (recorded) {
      Keep(stream, {}, size);
    } else {
      std::lock_guard lock(mutex);
      counts.bytes_read[stream] += size;
      counts.bytes_dropped[stream] += size;
      dropped_unmarked[stream] += size;
    }
    if (size < buffer.size()) return true;
  }
  return true;
}

std::string ConsoleCapture::State::TakePiped(size_t stream, size_t size) {
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(recording_read[stream], bytes.data() + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd readable{recording_read[stream], POLLIN, 0};
      if (::poll(&readable, 1, 1000) <= 0) break;  // never: tee put them there first
    } else {
      break;
    }
  }
  bytes.resize(done);
  return bytes;
}

void ConsoleCapture::State::Deliver(size_t stream, const std::string& text, TerminalLines& lines) {
  if (text.empty()) return;
  const double now = WallSeconds();
  if (output_log) lines.Write(StreamAt(stream), text, now);  // else nobody takes its lines
  for (size_t start = 0; start < text.size();) {
    const size_t end = PieceEnd(text, start, ConsoleCapture::kMaxRecordBytes);
    const std::string_view piece = std::string_view(text).substr(start, end - start);
    if (!sink(StreamAt(stream), piece, now)) {
      std::lock_guard lock(mutex);
      counts.bytes_dropped[stream] += piece.size();
    }
    start = end;
  }
}

void ConsoleCapture::State::Record() {
  // Under contention the command (and the reader, which keeps it from blocking) come first: a flood then
  // goes unrecorded rather than slower. A nice of 10 still gives the recorder a tenth of a busy core,
  // far more than ordinary output needs.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kRecorderNice);
  std::array<OutputCoalescer, 2> coalescers;
  TerminalLines lines(kOutputLogWindow);
  auto next_log_update = Clock::now() + kOutputLogInterval;
  bool log_failed = false;
  size_t last_stream = 0;
  for (;;) {
    std::deque<Segment> taken;
    std::array<uint64_t, 2> dropped{};
    bool stopping = false;
    {
      std::unique_lock lock(mutex);
      changed.wait_for(lock, options.flush_interval,
                       [&] { return stop_recorder || backlog_bytes[0] + backlog_bytes[1] >= kTakeBytes; });
      taken.swap(backlog);
      backlog_bytes = {0, 0};
      dropped = dropped_unmarked;
      dropped_unmarked = {0, 0};
      stopping = stop_recorder;
    }
    // The recording pipes are emptied first, so the reader can tee into them again while this batch is
    // coalesced.
    for (Segment& segment : taken) {
      if (segment.piped > 0) segment.bytes = TakePiped(segment.stream, segment.piped);
    }
    // Records follow the order of the output: a change of stream gives out what the other one holds.
    for (Segment& segment : taken) {
      if (segment.stream != last_stream) {
        Deliver(last_stream, coalescers[last_stream].Take(), lines);
        last_stream = segment.stream;
      }
      coalescers[segment.stream].Append(segment.bytes);
    }
    for (size_t i = 0; i < 2; ++i) {
      if (dropped[i] == 0) continue;
      coalescers[i].Append(
          fmt::format("\n[runmon: {} bytes of {} were not recorded: the output came faster than "
                      "it could be recorded]\n",
                      dropped[i], StreamName(i)));
    }
    if (stopping) {
      for (auto& coalescer : coalescers) coalescer.Finish();
    }
    Deliver(last_stream, coalescers[last_stream].Take(), lines);
    Deliver(1 - last_stream, coalescers[1 - last_stream].Take(), lines);
    {
      std::lock_guard lock(mutex);
      for (Segment& segment : taken) {
        if (spare.size() >= kSpareBuffers || segment.bytes.capacity() > kSpareBufferBytes) continue;
        segment.bytes.clear();
        spare.push_back(std::move(segment.bytes));
      }
    }
    // A flood's finished lines are written as they add up, not held for the interval.
    if (output_log && !log_failed &&
        (stopping || Clock::now() >= next_log_update || lines.finished_bytes() >= kOutputLogBytes)) {
      const Status status = stopping ? output_log->Close(lines) : output_log->Update(lines);
      if (!status) {
        log_failed = true;
        warn(status.error());
      }
      next_log_update = Clock::now() + kOutputLogInterval;
    }
    if (stopping) return;
  }
}

}  // namespace runmon::console
