// sampler_bench: CPU time per sample of runmon's real collector set, printed as one JSON line in the
// layout of ../shared/bench/psutil_sampler.py so bench/run_sampler_bench.py can compare the two.
//
// It builds the collectors exactly as `runmon sample` does (BuiltinCollectors over a CollectorContext
// from DetectHostFacts), takes one warm-up sample, then N samples, and measures getrusage(RUSAGE_SELF)
// user + sys over just those N samples (every thread of the process, so lane threads count).
//
// How samples are driven (the choice the numbers depend on):
//  - paced (--interval S > 0, at least 0.1 s): the real Sampler with SamplerOptions{S, N + 1}, i.e. its lane
//    threads, condition-variable hand-offs and deadline wait — what a `runmon sample --interval S` process
//    spends, minus formatting and writing the JSON line;
//  - back to back (--interval 0, the default): the Sampler cannot tick faster than its deadline logic allows,
//    so every collector's Collect is called directly in a loop on this one thread, in lane order. This is
//    the pure collection cost, without the (small, per-tick) thread hand-off of the paced mode.
//  --driver sampler|direct overrides the choice (sampler needs an interval; direct with an interval sleeps
//  between passes on the one thread, which separates the Sampler's thread hand-offs from cold-cache costs).
//
// --profile adds each collector's thread CPU time per sample (direct driver only; the extra clock reads
// cost a few microseconds per sample, so leave it off for the headline figure).
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "collectors/builtin.hpp"
#include "collectors/linux/linux_collectors.hpp"
#include "host/file_reader.hpp"
#include "sampler/sampler.hpp"

namespace {

using runmon::Collector;
using runmon::CollectorSpec;

struct Options {
  long pid = 0;
  uint64_t samples = 1000;
  double interval = 0;
  bool tree = true;
  bool per_core = false;
  bool no_cgroup = false;
  bool profile = false;
  bool peer_keys = false;  // only the collectors behind the peer's key set
  std::string driver;      // "", "sampler" or "direct"
};

[[noreturn]] void Usage(const char* message) {
  std::fprintf(
      stderr,
      "sampler_bench: %s\n"
      "usage: sampler_bench [--pid PID] [--samples N] [--interval SECONDS] [--no-tree] [--per-core]\n"
      "                     [--no-cgroup] [--driver sampler|direct] [--profile] [--peer-keys]\n",
      message);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  o.pid = static_cast<long>(::getppid());
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(fmt::format("{} needs a value", arg).c_str());
      return argv[++i];
    };
    try {
      if (arg == "--pid") {
        o.pid = std::stol(value());
      } else if (arg == "--samples") {
        o.samples = std::stoull(value());
      } else if (arg == "--interval") {
        o.interval = std::stod(value());
      } else if (arg == "--no-tree") {
        o.tree = false;
      } else if (arg == "--per-core") {
        o.per_core = true;
      } else if (arg == "--no-cgroup") {
        o.no_cgroup = true;
      } else if (arg == "--profile") {
        o.profile = true;
      } else if (arg == "--peer-keys") {
        o.peer_keys = true;
      } else if (arg == "--driver") {
        o.driver = value();
      } else {
        Usage(fmt::format("unknown argument '{}'", arg).c_str());
      }
    } catch (const std::exception&) {
      Usage(fmt::format("bad value for {}", arg).c_str());
    }
  }
  if (o.samples == 0) Usage("--samples must be at least 1");
  if (o.interval != 0 && o.interval < runmon::kMinIntervalSeconds) Usage("--interval: 0 or at least 0.1");
  if (o.driver.empty()) o.driver = o.interval > 0 ? "sampler" : "direct";
  if (o.driver != "sampler" && o.driver != "direct") Usage("--driver: sampler or direct");
  if (o.driver == "sampler" && o.interval <= 0) Usage("--driver sampler needs --interval");
  return o;
}

struct CpuSeconds {
  double user = 0;
  double sys = 0;
};

CpuSeconds ProcessCpu() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

double ThreadCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// VmRSS and VmHWM of this process, in kB.
std::map<std::string, long> SelfStatus() {
  std::map<std::string, long> out;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    for (const char* key : {"VmRSS:", "VmHWM:"}) {
      if (line.starts_with(key))
        out[std::string(key, std::strlen(key) - 1)] = std::atol(line.c_str() + std::strlen(key));
    }
  }
  return out;
}

// The process and its descendants, by children lists (every thread's), counted once after the run.
size_t TreeSize(long root) {
  std::set<long> seen{root};
  std::vector<long> queue{root};
  while (!queue.empty()) {
    const long pid = queue.back();
    queue.pop_back();
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
      std::ifstream children(task.path() / "children");
      long child = 0;
      while (children >> child) {
        if (seen.insert(child).second) queue.push_back(child);
      }
    }
  }
  return seen.size();
}

runmon::CollectorContext MakeContext(const Options& o) {
  // As src/app/commands.cpp MakeContext does for `runmon sample`.
  runmon::Settings settings;
  settings.interval_seconds = o.interval > 0 ? o.interval : runmon::kMinIntervalSeconds;
  settings.pid = o.pid;
  settings.track_process_tree = o.tree;
  settings.per_core_cpu = o.per_core;
  settings.no_cgroup = o.no_cgroup;
  runmon::CollectorContext ctx;
  ctx.paths = runmon::HostPaths::System();
  ctx.settings = settings;
  ctx.clocks = runmon::Clocks::System();
  if (o.pid > 0) ctx.pid = o.pid;
  ctx.facts = runmon::DetectHostFacts(ctx.paths, settings, ctx.pid);
  return ctx;
}

struct Measured {
  CpuSeconds cpu;
  double wall_seconds = 0;
  size_t keys = 0;
  uint64_t failures = 0;
  std::map<std::string, double> collector_cpu;  // --profile: seconds over the N samples
};

Measured RunDirect(const Options& o, std::vector<CollectorSpec> specs) {
  // Lane order, as the sampler merges them ("proc" first, then "filesystem").
  Measured m;
  uint64_t index = 0;
  auto pass = [&](bool measured) {
    runmon::Tick tick{std::chrono::steady_clock::now(), 0, index++, false};
    runmon::MetricBatch batch;
    for (auto& spec : specs) {
      const double before = o.profile ? ThreadCpuSeconds() : 0;
      if (!spec.collector->Collect(tick, batch)) ++m.failures;
      if (o.profile && measured)
        m.collector_cpu[std::string(spec.collector->Name())] += ThreadCpuSeconds() - before;
    }
    m.keys = batch.items().size();
  };
  pass(false);  // warm-up: opens the kept-open files, finds the tree, fills previous counters
  m.failures = 0;
  const CpuSeconds c0 = ProcessCpu();
  const auto w0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < o.samples; ++i) {
    if (o.interval > 0) {
      std::this_thread::sleep_until(w0 +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(o.interval * static_cast<double>(i))));
    }
    pass(true);
  }
  const auto w1 = std::chrono::steady_clock::now();
  const CpuSeconds c1 = ProcessCpu();
  m.cpu = {c1.user - c0.user, c1.sys - c0.sys};
  m.wall_seconds = std::chrono::duration<double>(w1 - w0).count();
  return m;
}

Measured RunSampler(const Options& o, std::vector<CollectorSpec> specs) {
  Measured m;
  runmon::SamplerOptions options;
  options.interval_seconds = o.interval;
  options.max_samples = o.samples + 1;  // the first is the warm-up
  uint64_t emitted = 0;
  CpuSeconds c0, c1;
  std::chrono::steady_clock::time_point w0, w1;
  runmon::Sampler sampler(
      std::move(specs), options,
      [&](const runmon::Sample& sample) {
        if (sample.late) return;
        ++emitted;
        if (emitted == 1) {
          c0 = ProcessCpu();
          w0 = std::chrono::steady_clock::now();
        } else if (emitted == o.samples + 1) {
          c1 = ProcessCpu();
          w1 = std::chrono::steady_clock::now();
          m.keys = sample.metrics.items().size();
        }
      },
      [&](const std::string& message) {
        ++m.failures;
        std::fprintf(stderr, "sampler_bench: %s\n", message.c_str());
      });
  sampler.Run();
  m.cpu = {c1.user - c0.user, c1.sys - c0.sys};
  m.wall_seconds = std::chrono::duration<double>(w1 - w0).count();
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  runmon::RaiseOpenFileLimit();  // as runmon does
  const runmon::CollectorContext ctx = MakeContext(o);
  if (o.pid > 0 && !std::filesystem::exists(fmt::format("/proc/{}", o.pid))) {
    std::fprintf(stderr, "sampler_bench: process %ld does not exist\n", o.pid);
    return 1;
  }
  auto collectors = runmon::BuiltinCollectors(ctx);
  if (o.peer_keys) {
    // The peer gathers W&B's default key set: process tree, memory, disk and network. runmon's additions
    // (host cpu_percent, cgroup.*, runmon.*) are left out so both read the same kernel files.
    std::erase_if(collectors, [](const CollectorSpec& spec) {
      const std::string_view name = spec.collector->Name();
      return name == "cpu" || name == "cgroup" || name == "runmon";
    });
  }
  const Measured m =
      o.driver == "sampler" ? RunSampler(o, std::move(collectors)) : RunDirect(o, std::move(collectors));
  const auto status = SelfStatus();
  const double n = static_cast<double>(o.samples);
  auto us = [&](double seconds) {
    return static_cast<double>(static_cast<long long>(seconds / n * 1e7)) / 10.0;
  };
  std::string profile;
  if (!m.collector_cpu.empty()) {
    profile = ",\"collector_us_per_sample\":{";
    bool first = true;
    for (const auto& [name, seconds] : m.collector_cpu) {
      profile += fmt::format("{}\"{}\":{}", first ? "" : ",", name, us(seconds));
      first = false;
    }
    profile += "}";
  }
  std::printf(
      "{\"tool\":\"runmon\",\"driver\":\"%s\",\"tree\":%s,\"percpu\":%s,\"samples\":%llu,\"interval\":%g,"
      "\"tree_size\":%zu,\"user_s\":%.6f,\"sys_s\":%.6f,\"cpu_us_per_sample\":%.1f,\"user_us_per_sample\":%."
      "1f,"
      "\"sys_us_per_sample\":%.1f,\"wall_us_per_sample\":%.1f,\"rss_kb\":%ld,\"hwm_kb\":%ld,\"keys\":%zu,"
      "\"failures\":%llu%s}\n",
      o.driver.c_str(), o.tree ? "true" : "false", o.per_core ? "true" : "false",
      static_cast<unsigned long long>(o.samples), o.interval,
      o.pid <= 0 ? 0
      : o.tree   ? TreeSize(o.pid)
                 : 1,
      m.cpu.user, m.cpu.sys, us(m.cpu.user + m.cpu.sys), us(m.cpu.user), us(m.cpu.sys), us(m.wall_seconds),
      status.count("VmRSS") ? status.at("VmRSS") : -1L, status.count("VmHWM") ? status.at("VmHWM") : -1L,
      m.keys, static_cast<unsigned long long>(m.failures), profile.c_str());
  return 0;
}
