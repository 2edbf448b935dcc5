// tool_runner_bench: what the tool runner costs runmon's own process. RunTool of /bin/true (spawn, pipes,
// poll, reap: the fixed cost a once-per-sample tool such as rocm-smi adds, before the tool's own work),
// and the streaming child's reader thread per document (read, reassemble, parse as JSON) replaying
// neuron-monitor's output. CPU is getrusage(RUSAGE_SELF): runmon's process, not the tool's. A bare
// posix_spawn + waitpid of /bin/true is measured beside RunTool for comparison.
// Usage: tool_runner_bench [calls=300] [documents=3000]
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "bench_clock.hpp"
#include "host/streaming_tool.hpp"
#include "host/tool_runner.hpp"

using runmon::bench::RusageCpuSeconds;
using runmon::bench::WallSeconds;

extern char** environ;

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 300;
  const int documents = argc > 2 ? std::atoi(argv[2]) : 3000;

  runmon::ToolCommand true_command{.executable = "/bin/true"};
  (void)runmon::RunTool(true_command, {});  // warm-up
  double cpu = RusageCpuSeconds(), wall = WallSeconds();
  for (int i = 0; i < calls; ++i) {
    if (!runmon::RunTool(true_command, {})) return 1;
  }
  std::printf("RunTool(/bin/true): %.0f us wall, %.0f us runmon CPU per call (%d calls)\n",
              (WallSeconds() - wall) / calls * 1e6, (RusageCpuSeconds() - cpu) / calls * 1e6, calls);
  // For comparison: the bare spawn and wait, without pipes, group, signal reset or deadline.
  char true_path[] = "/bin/true";
  char* true_argv[] = {true_path, nullptr};
  cpu = RusageCpuSeconds();
  wall = WallSeconds();
  for (int i = 0; i < calls; ++i) {
    pid_t pid = -1;
    int status = 0;
    if (::posix_spawn(&pid, true_path, nullptr, nullptr, true_argv, environ) != 0) return 1;
    ::waitpid(pid, &status, 0);
  }
  std::printf("bare posix_spawn + waitpid: %.0f us wall, %.0f us CPU per call\n",
              (WallSeconds() - wall) / calls * 1e6, (RusageCpuSeconds() - cpu) / calls * 1e6);

  const std::string fixture = RUNMON_FIXTURES_DIR "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl";
  std::ifstream in(fixture);
  std::stringstream lines;
  lines << in.rdbuf();
  const auto dir =
      std::filesystem::temp_directory_path() / ("tool_runner_bench." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto stream_file = dir / "stream.jsonl";
  {
    std::ofstream out(stream_file);
    for (int i = 0; i < (documents + 2) / 3; ++i) out << lines.str();
  }
  const auto size_mib = static_cast<double>(std::filesystem::file_size(stream_file)) / (1 << 20);
  const auto tool = dir / "replay";
  std::ofstream(tool) << "#!/bin/sh\ncat '" << stream_file.string() << "'\nexec sleep 1000\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);

  std::atomic<int> received{0};
  cpu = RusageCpuSeconds();
  wall = WallSeconds();
  {
    runmon::StreamingTool streaming({.executable = tool.string()}, {},
                                    runmon::JsonLines([&](nlohmann::json) { ++received; }),
                                    [](const std::string&) {});
    while (received < (documents + 2) / 3 * 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int total = received.load();
  std::printf(
      "StreamingTool: %.1f us runmon CPU per %zu-byte document, %.0f MiB/s (%d documents, %.1f MiB)\n",
      (RusageCpuSeconds() - cpu) / total * 1e6, lines.str().size() / 3, size_mib / (WallSeconds() - wall),
      total, size_mib);
  std::filesystem::remove_all(dir);
  return 0;
}
