// Starting `runmon run`'s command: PATH lookup with a shell's exit statuses (127 not found, 126 found but
// not runnable), a child that gets a clean signal mask and default signal dispositions and the open-file
// limit it would have had without runmon, an exec failure reported by the parent, and shell-style statuses.
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

namespace runmon {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "runmon-child-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

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

TEST(SpawnChild, ChildGetsDefaultsRunmonChanged) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  // Ignored and blocked here (as runmon does), default in the child.
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  rlimit before{};
  ::getrlimit(RLIMIT_NOFILE, &before);
  const rlim_t wanted = std::min<rlim_t>(before.rlim_max, 256);

  const std::string script =
      "ulimit -Sn > '" + out.string() + "'; grep -E '^(SigBlk|SigIgn)' /proc/self/status >> '" + out.string() + "'";
  auto pid = SpawnChild("/bin/sh", {"sh", "-c", script}, {.open_files_soft_limit = wanted});
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ASSERT_TRUE(pid.ok()) << pid.error();
  EXPECT_EQ(WaitFor(*pid), 0);
  const std::string text = ReadAll(out);
  EXPECT_EQ(text.substr(0, text.find('\n')), std::to_string(wanted));
  EXPECT_NE(text.find("SigBlk:\t0000000000000000"), std::string::npos) << text;
  // SIGPIPE is bit 13: no longer ignored (the shell itself may ignore others, but not this one).
  const size_t ignored_at = text.find("SigIgn:\t");
  ASSERT_NE(ignored_at, std::string::npos);
  const unsigned long long ignored = std::stoull(text.substr(ignored_at + 8, 16), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGPIPE - 1)), 0u) << text;
}

TEST(SpawnChild, ExitStatusesAndSignals) {
  auto three = SpawnChild("/bin/sh", {"sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(WaitFor(*three), 3);
  auto killed = SpawnChild("/bin/sh", {"sh", "-c", "kill -KILL $$"}, {});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(WaitFor(*killed), 128 + SIGKILL);
}

TEST(SpawnChild, ExecFailureIsReportedByTheParent) {
  TempDir dir;
  // Executable, but not a program the kernel can run and without a #! line: execv fails with ENOEXEC.
  const fs::path bogus = dir.path() / "bogus";
  std::ofstream(bogus) << "\x7f" "ELF garbage";
  ::chmod(bogus.c_str(), 0755);
  auto pid = SpawnChild(bogus.string(), {"bogus"}, {});
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.error().find("cannot run"), std::string::npos) << pid.error();
  EXPECT_FALSE(SpawnChild("/bin/true", {}, {}).ok());
}

}  // namespace
}  // namespace runmon
