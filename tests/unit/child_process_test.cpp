// Starting `runmon run`'s command: PATH lookup with a shell's exit statuses (127 not found, 126 found but
// not runnable); a child that gets back the signal mask, the dispositions and the open-file limit runmon
// inherited (runmon's own SIGPIPE/SIGXFSZ ignores undone, a nohup'd SIGHUP kept); a script without #!
// run by /bin/sh; exec failures reported by the parent with a shell's status; shell-style wait statuses.
#include "host/child_process.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

void WriteScript(const fs::path& path, const std::string& body, mode_t mode) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), mode);
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ShellExitStatus(status);
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(FindExecutable, SearchesPathInOrderLikeAShell) {
  TempDir first, second;
  WriteScript(second.path() / "tool", "exit 0", 0755);
  WriteScript(first.path() / "tool", "exit 0", 0644);  // not executable: skipped for the next match
  const std::string search = first.path().string() + ":" + second.path().string();
  auto found = FindExecutable("tool", search);
  ASSERT_TRUE(std::holds_alternative<std::string>(found));
  EXPECT_EQ(std::get<std::string>(found), (second.path() / "tool").string());
}

TEST(FindExecutable, NotFoundIs127AndNotExecutableIs126) {
  TempDir dir;
  WriteScript(dir.path() / "plain", "exit 0", 0644);
  auto missing = FindExecutable("no-such-tool", dir.path().string());
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(missing));
  EXPECT_EQ(std::get<CommandLookupError>(missing).exit_status, 127);
  EXPECT_NE(std::get<CommandLookupError>(missing).message.find("command not found"), std::string::npos);

  auto plain = FindExecutable("plain", dir.path().string());
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(plain));
  EXPECT_EQ(std::get<CommandLookupError>(plain).exit_status, 126);

  auto with_slash = FindExecutable((dir.path() / "plain").string(), "");
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(with_slash));
  EXPECT_EQ(std::get<CommandLookupError>(with_slash).exit_status, 126);

  auto directory = FindExecutable(dir.path().string(), "");
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(directory));
  EXPECT_EQ(std::get<CommandLookupError>(directory).exit_status, 126);

  auto missing_path = FindExecutable((dir.path() / "gone").string(), "");
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(missing_path));
  EXPECT_EQ(std::get<CommandLookupError>(missing_path).exit_status, 127);

  EXPECT_TRUE(std::holds_alternative<CommandLookupError>(FindExecutable("", "/bin")));
}

pid_t Started(const std::variant<pid_t, CommandLookupError>& spawned) {
  if (const auto* error = std::get_if<CommandLookupError>(&spawned)) {
    ADD_FAILURE() << error->message;
    return -1;
  }
  return std::get<pid_t>(spawned);
}

unsigned long long SignalBits(const std::string& status, std::string_view field) {
  const size_t at = status.find(std::string(field) + ":\t");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(status.substr(at + field.size() + 2, 16), nullptr, 16);
}

unsigned long long Bit(int signal_number) {
  return 1ull << (signal_number - 1);
}

TEST(SpawnChild, ChildGetsBackWhatRunmonInherited) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  // As runmon starts: SIGHUP ignored (nohup), SIGPIPE default. Captured before runmon changes anything.
  ::signal(SIGHUP, SIG_IGN);
  InheritedProcessState inherited = CaptureProcessState({SIGPIPE, SIGXFSZ, SIGCHLD, SIGHUP});
  rlimit before{};
  ::getrlimit(RLIMIT_NOFILE, &before);
  const rlim_t wanted = std::min<rlim_t>(before.rlim_max, 256);
  inherited.open_files_soft_limit = wanted;
  // What runmon then does: ignore SIGPIPE and SIGXFSZ, block the stop signals.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);

  const std::string script = "ulimit -Sn > '" + out.string() +
                             "'; grep -E '^(SigBlk|SigIgn)' /proc/self/status >> '" + out.string() + "'";
  const pid_t pid = Started(SpawnChild("/bin/sh", {"sh", "-c", script}, inherited));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGXFSZ, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitFor(pid), 0);
  const std::string text = ReadAll(out);
  EXPECT_EQ(text.substr(0, text.find('\n')), std::to_string(wanted));
  EXPECT_EQ(SignalBits(text, "SigBlk") & Bit(SIGINT), 0u) << text;
  const unsigned long long ignored = SignalBits(text, "SigIgn");
  EXPECT_EQ(ignored & Bit(SIGPIPE), 0u) << text;  // runmon's own ignores are undone
  EXPECT_EQ(ignored & Bit(SIGXFSZ), 0u) << text;
  EXPECT_NE(ignored & Bit(SIGHUP), 0u) << text;  // what the user ignored stays ignored
}

TEST(SpawnChild, ExitStatusesAndSignals) {
  const InheritedProcessState inherited = CaptureProcessState({});
  const pid_t three = Started(SpawnChild("/bin/sh", {"sh", "-c", "exit 3"}, inherited));
  ASSERT_GT(three, 0);
  EXPECT_EQ(WaitFor(three), 3);
  const pid_t killed = Started(SpawnChild("/bin/sh", {"sh", "-c", "kill -KILL $$"}, inherited));
  ASSERT_GT(killed, 0);
  EXPECT_EQ(WaitFor(killed), 128 + SIGKILL);
}

TEST(SpawnChild, AScriptWithoutAShebangRunsWithTheShell) {
  TempDir dir;
  const fs::path script = dir.path() / "plain-script";
  const fs::path marker = dir.path() / "ran";
  std::ofstream(script) << "echo \"$1\" > '" << marker.string() << "'\nexit 4\n";
  ::chmod(script.c_str(), 0755);
  const pid_t pid = Started(SpawnChild(script.string(), {"plain-script", "hello"}, CaptureProcessState({})));
  ASSERT_GT(pid, 0);
  EXPECT_EQ(WaitFor(pid), 4);
  EXPECT_EQ(ReadAll(marker), "hello\n");
}

TEST(SpawnChild, ExecFailuresCarryAShellStatus) {
  TempDir dir;
  const fs::path bad_interpreter = dir.path() / "bad-interpreter";
  std::ofstream(bad_interpreter) << "#!/nonexistent/interpreter\n";
  ::chmod(bad_interpreter.c_str(), 0755);
  auto missing = SpawnChild(bad_interpreter.string(), {"bad-interpreter"}, CaptureProcessState({}));
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(missing));
  EXPECT_EQ(std::get<CommandLookupError>(missing).exit_status, 127);
  EXPECT_NE(std::get<CommandLookupError>(missing).message.find("cannot run"), std::string::npos);

  const fs::path directory = dir.path() / "a-directory";
  fs::create_directory(directory);
  auto not_runnable = SpawnChild(directory.string(), {"a-directory"}, CaptureProcessState({}));
  ASSERT_TRUE(std::holds_alternative<CommandLookupError>(not_runnable));
  EXPECT_EQ(std::get<CommandLookupError>(not_runnable).exit_status, 126);

  EXPECT_TRUE(
      std::holds_alternative<CommandLookupError>(SpawnChild("/bin/true", {}, CaptureProcessState({}))));
}

}  // namespace
}  // namespace runmon
