// ConsoleCapture with real commands: output passed on byte for byte and recorded (records and
// output.log), stdout and stderr apart; a pipe where runmon's stream is not a terminal and a
// pseudo-terminal where it is (isatty, the window size at the start and after SIGWINCH); a flood drained
// without slowing the command, what the recorder could not take dropped, counted and marked; a descendant
// that keeps the output open does not hold the end of the run up.
#include "console/console_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "console/terminal_lines.hpp"
#include "host/child_process.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon::console {
namespace {

using namespace std::chrono_literals;

struct Recorded {
  std::mutex mutex;
  std::vector<std::pair<ConsoleStream, std::string>> records;
  std::atomic<int> delay_ms{0};

  ConsoleRecordSink Sink() {
    return [this](ConsoleStream stream, std::string_view text, double) {
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
      std::lock_guard lock(mutex);
      records.emplace_back(stream, text);
      return true;
    };
  }
  // The lines W&B's emulation makes of the records.
  std::vector<std::string> Lines(ConsoleStream stream) {
    std::lock_guard lock(mutex);
    TerminalLines lines(64);
    for (const auto& [from, text] : records) {
      if (from == stream) lines.Write(stream, text, 0);
    }
    lines.FinishAll();
    std::vector<std::string> texts;
    for (const auto& line : lines.TakeFinished()) texts.push_back(line.text);
    return texts;
  }
  std::string All() {
    std::lock_guard lock(mutex);
    std::string all;
    for (const auto& record : records) all += record.second;
    return all;
  }
};

// Reads a descriptor to its end on a thread of its own (what a terminal or a pipe's reader does).
class Drain {
 public:
  explicit Drain(int fd) : fd_(fd), thread_([this] { Run(); }) {}
  ~Drain() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  void Run() {
    char buffer[65536];
    while (!stop_) {
      pollfd readable{fd_, POLLIN, 0};
      if (::poll(&readable, 1, 20) <= 0) continue;
      const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || errno != EAGAIN) break;
        continue;
      }
      bytes_ += static_cast<uint64_t>(n);
      std::lock_guard lock(mutex_);
      if (text_.size() < (1u << 20)) text_.append(buffer, static_cast<size_t>(n));
    }
  }
  int fd_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string text_;
  std::atomic<uint64_t> bytes_{0};
  std::thread thread_;
};

pid_t Spawn(const std::string& script, ConsoleCapture& capture, const InheritedProcessState& inherited) {
  const std::vector<std::string> argv = {"/bin/sh", "-c", script};
  auto spawned =
      SpawnChild("/bin/sh", argv, inherited,
                 {capture.command_fd(ConsoleStream::kStdout), capture.command_fd(ConsoleStream::kStderr)});
  EXPECT_TRUE(std::holds_alternative<pid_t>(spawned));
  return std::get<pid_t>(spawned);
}

int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ShellExitStatus(status);
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) == 0) {
      read = ends[0];
      write = ends[1];
    }
  }
};

TEST(ConsoleCapture, PassesOutputOnAndRecordsIt) {
  test::TempDir dir;
  Pipe out, err;
  ConsoleCaptureOptions options;
  options.passthrough = {out.write, err.write};
  options.flush_interval = 50ms;
  auto capture = ConsoleCapture::Open(options);
  ASSERT_TRUE(capture) << capture.error();
  Drain out_drain(out.read), err_drain(err.read);
  const auto inherited = CaptureProcessState({});
  const pid_t child = Spawn(
      "test -t 1 || echo 'stdout is a pipe'; printf 'epoch 1\\n 10%%\\r 50%%\\r100%%\\n'; echo oops >&2; "
      "exit 3",
      **capture, inherited);
  auto log = OutputLogFile::Create(dir.path() / "output.log");
  ASSERT_TRUE(log);
  Recorded recorded;
  ASSERT_TRUE((*capture)->Start(child, recorded.Sink(), std::move(*log), [](const std::string&) {}));
  EXPECT_EQ(Reap(child), 3);
  (*capture)->Finish(2s);
  ::close(out.write);
  ::close(err.write);
  const std::string printed = "stdout is a pipe\nepoch 1\n 10%\r 50%\r100%\n";
  ASSERT_TRUE(testing::WaitUntil([&] { return out_drain.text().size() >= printed.size(); }, 5s));
  EXPECT_EQ(out_drain.text(), printed);  // unchanged, `\r`s and all
  EXPECT_EQ(err_drain.text(), "oops\n");
  EXPECT_EQ(recorded.Lines(ConsoleStream::kStdout),
            (std::vector<std::string>{"stdout is a pipe", "epoch 1", "100%"}));
  EXPECT_EQ(recorded.Lines(ConsoleStream::kStderr), (std::vector<std::string>{"oops"}));
  EXPECT_EQ(recorded.All().find(" 50%"), std::string::npos);  // the bar's states are not stored
  const std::string output_log = ReadFile(dir.path() / "output.log");
  EXPECT_NE(output_log.find("epoch 1\n100%\n"), std::string::npos) << output_log;
  EXPECT_NE(output_log.find("oops\n"), std::string::npos);
  const auto counts = (*capture)->counts();
  EXPECT_EQ(counts.bytes_read[0], printed.size());
  EXPECT_EQ(counts.bytes_read[1], 5u);
  EXPECT_EQ(counts.bytes_dropped[0] + counts.bytes_dropped[1], 0u);
}

TEST(ConsoleCapture, AFloodIsDrainedAndWhatCannotBeRecordedIsDroppedAndMarked) {
  Pipe out;
  ConsoleCaptureOptions options;
  options.passthrough = {out.write, STDERR_FILENO};
  options.backlog_bytes = 256u << 10;
  options.flush_interval = 20ms;
  auto capture = ConsoleCapture::Open(options);
  ASSERT_TRUE(capture);
  Drain drain(out.read);
  const auto inherited = CaptureProcessState({});
  // 64 MiB of lines as fast as head and tr can make them.
  const pid_t child = Spawn("head -c 67108864 /dev/zero | tr '\\0' 'x' | fold -w 99", **capture, inherited);
  Recorded recorded;
  recorded.delay_ms = 20;  // a slow run log
  ASSERT_TRUE((*capture)->Start(child, recorded.Sink(), nullptr, [](const std::string&) {}));
  EXPECT_EQ(Reap(child), 0);  // it ran to its end: nothing waited on the recording
  (*capture)->Finish(2s);
  const uint64_t expected = 67108864 + 67108864 / 99;  // fold's newlines (none after the last 31 x)
  ASSERT_TRUE(testing::WaitUntil([&] { return drain.bytes() >= expected; }, 20s));
  EXPECT_EQ(drain.bytes(), expected);  // every byte passed on
  const auto counts = (*capture)->counts();
  EXPECT_EQ(counts.bytes_read[0], expected);
  EXPECT_GT(counts.bytes_dropped[0], 0u);
  EXPECT_NE(recorded.All().find("bytes of stdout were not recorded"), std::string::npos);
  ::close(out.write);
}

TEST(ConsoleCapture, ADescendantKeepingTheOutputOpenDoesNotHoldTheEndUp) {
  Pipe out;
  ConsoleCaptureOptions options;
  options.passthrough = {out.write, STDERR_FILENO};
  auto capture = ConsoleCapture::Open(options);
  ASSERT_TRUE(capture);
  Drain drain(out.read);
  const auto inherited = CaptureProcessState({});
  const pid_t child = Spawn("sleep 30 & echo \"started $!\"", **capture, inherited);
  Recorded recorded;
  ASSERT_TRUE((*capture)->Start(child, recorded.Sink(), nullptr, [](const std::string&) {}));
  EXPECT_EQ(Reap(child), 0);
  const auto start = std::chrono::steady_clock::now();
  (*capture)->Finish(300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  const std::string all = recorded.All();
  ASSERT_EQ(all.rfind("started ", 0), 0u) << all;
  const pid_t sleeper = std::stoi(all.substr(8));
  ::kill(sleeper, SIGKILL);
  ::close(out.write);
}

// A pseudo-terminal the test plays the terminal with: runmon's stdout is its slave side.
struct TestTerminal {
  int master = -1;
  int slave = -1;
  TestTerminal() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return;
    slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  }
  void Resize(unsigned short rows, unsigned short columns) const {
    winsize size{};
    size.ws_row = rows;
    size.ws_col = columns;
    ::ioctl(master, TIOCSWINSZ, &size);
  }
};

TEST(ConsoleCapture, AStreamOnATerminalGetsATerminalWithItsWindowSize) {
  TestTerminal terminal;
  ASSERT_GE(terminal.slave, 0);
  terminal.Resize(40, 100);
  const auto inherited = CaptureProcessState({});
  // SIGWINCH blocked, as `runmon run` blocks it, for the capture's signalfd.
  sigset_t window_change;
  sigemptyset(&window_change);
  sigaddset(&window_change, SIGWINCH);
  ::pthread_sigmask(SIG_BLOCK, &window_change, nullptr);
  ConsoleCaptureOptions options;
  options.passthrough = {terminal.slave, STDERR_FILENO};
  options.terminal = {true, false};
  options.flush_interval = 50ms;
  auto capture = ConsoleCapture::Open(options);
  ASSERT_TRUE(capture) << capture.error();
  Drain drain(terminal.master);
  const pid_t child = Spawn(
      "test -t 1 && echo 'stdout is a terminal'; test -t 2 || echo 'stderr is not' >&2;"
      "echo \"size $(stty -F /proc/$$/fd/1 size)\";"
      "trap 'echo \"resized $(stty -F /proc/$$/fd/1 size)\"; exit 0' WINCH; echo ready;"
      "i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 9",
      **capture, inherited);
  Recorded recorded;
  ASSERT_TRUE((*capture)->Start(child, recorded.Sink(), nullptr, [](const std::string&) {}));
  ASSERT_TRUE(testing::WaitUntil([&] { return drain.text().find("ready") != std::string::npos; }, 10s))
      << drain.text();
  terminal.Resize(50, 120);
  ::kill(::getpid(), SIGWINCH);  // what the terminal's kernel side would send runmon
  EXPECT_EQ(Reap(child), 0);
  (*capture)->Finish(2s);
  // Written on by now; the terminal's reader (the drain thread) may not have read it yet.
  testing::WaitUntil([&] { return drain.text().find("resized") != std::string::npos; }, 10s);
  const std::string shown = drain.text();
  EXPECT_NE(shown.find("stdout is a terminal"), std::string::npos) << shown;
  EXPECT_NE(shown.find("size 40 100"), std::string::npos) << shown;
  EXPECT_NE(shown.find("resized 50 120"), std::string::npos) << shown;
  const auto lines = recorded.Lines(ConsoleStream::kStdout);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "stdout is a terminal");
  EXPECT_EQ(lines[1], "size 40 100");
  EXPECT_EQ(recorded.Lines(ConsoleStream::kStderr), (std::vector<std::string>{"stderr is not"}));
  ::close(terminal.slave);
}

TEST(ConsoleCapture, OutputOnATerminalIsPassedOnByteForByteAndRecordedWhole) {
  // Far more than one read of the pseudo-terminal (4 KiB) or one chunk written on: lines, `\r` redraws,
  // colours and multi-byte characters that the reads cut anywhere.
  std::string content;
  for (int i = 0; content.size() < (900u << 10); ++i) {
    content += "step " + std::to_string(i) + " \xE2\x82\xAC \x1b[32mok\x1b[0m " + std::string(i % 97, '.');
    content += i % 13 == 0 ? "\r 50%\r100%\n" : "\n";
  }
  test::TempDir dir;
  { std::ofstream(dir.path() / "content", std::ios::binary) << content; }
  TestTerminal terminal;
  ASSERT_GE(terminal.slave, 0);
  termios raw{};
  ASSERT_EQ(::tcgetattr(terminal.slave, &raw), 0);
  ::cfmakeraw(&raw);  // what the terminal shows is then exactly what runmon wrote
  ASSERT_EQ(::tcsetattr(terminal.slave, TCSANOW, &raw), 0);
  sigset_t window_change;
  sigemptyset(&window_change);
  sigaddset(&window_change, SIGWINCH);
  ::pthread_sigmask(SIG_BLOCK, &window_change, nullptr);
  ConsoleCaptureOptions options;
  options.passthrough = {terminal.slave, STDERR_FILENO};
  options.terminal = {true, false};
  auto capture = ConsoleCapture::Open(options);
  ASSERT_TRUE(capture) << capture.error();
  Drain drain(terminal.master);
  const auto inherited = CaptureProcessState({});
  const pid_t child = Spawn("cat " + (dir.path() / "content").string(), **capture, inherited);
  Recorded recorded;
  ASSERT_TRUE((*capture)->Start(child, recorded.Sink(), nullptr, [](const std::string&) {}));
  EXPECT_EQ(Reap(child), 0);
  (*capture)->Finish(2s);
  ASSERT_TRUE(testing::WaitUntil([&] { return drain.bytes() >= content.size(); }, 20s));
  EXPECT_TRUE(drain.text() == content) << "what the terminal got differs from what the command wrote";
  const auto counts = (*capture)->counts();
  EXPECT_EQ(counts.bytes_read[0], content.size());
  EXPECT_EQ(counts.bytes_dropped[0], 0u);
  TerminalLines expected(64);
  expected.Write(ConsoleStream::kStdout, content, 0);
  expected.FinishAll();
  std::vector<std::string> expected_lines;
  for (const auto& line : expected.TakeFinished()) expected_lines.push_back(line.text);
  EXPECT_TRUE(recorded.Lines(ConsoleStream::kStdout) == expected_lines) << "the recorded lines differ";
  ::close(terminal.slave);
}

}  // namespace
}  // namespace runmon::console
