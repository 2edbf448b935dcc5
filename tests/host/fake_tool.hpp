// Fake tools for the tool runner's tests: /bin/sh scripts written into a test's temporary directory, a
// check that a process the tool started is gone (dead, or a zombie of someone else's, never running), and
// the elapsed time the tests bound their calls by.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/wait_until.hpp"

namespace runmon::test {

// Writes an executable /bin/sh script `name` with `body`; returns its path.
inline std::string WriteFakeTool(const std::filesystem::path& dir, const std::string& name,
                                 const std::string& body) {
  const auto path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path.string();
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Whether the process is running (not absent, not a zombie): its state in /proc/PID/stat.
inline bool IsRunning(int pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  return stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

// Seconds since `start` on the steady clock.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Waits up to 5 s for the process to stop running (the kernel delivers SIGKILL promptly, but not at once).
inline bool StopsRunning(int pid) {
  return testing::WaitUntil([pid] { return !IsRunning(pid); }, std::chrono::seconds(5));
}

}  // namespace runmon::test
