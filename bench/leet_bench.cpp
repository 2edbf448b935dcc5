// leet_bench: what `runmon leet` (src/tui) costs on the large run: a 24-hour run sampled every
// second with 100 keys (86,400 stats records, ~250 MB; this one: 270 MB). bench/run_leet_bench.py runs it,
// then the real binary in a private tmux server and W&B's reader (bench/wandb_datastore_reader.py) on the
// same log.
//
// --generate PATH writes that run log with runmon's writer: a header (producer "runmon 0.1.0"), a run record,
// 86,400 stats records one second apart (--seconds N for another length), then an exit record. The 100 keys
// are those of a training job on 8 GPUs as W&B names them: cpu, memory_percent, proc.memory.*,
// proc.cpu.threads, disk./.usage*, disk.in/out, network.sent/recv and 11 gpu.{i}.* keys per GPU. Values
// follow the job's activity (a 10-minute warm-up, training at high GPU utilisation, an evaluation dip every
// 30 minutes, a checkpoint every hour), move smoothly with noise, and are shaped as a monitor writes them
// (integer utilisations, temperatures and clocks, percentages computed by division at full precision, MiB in
// pages, GiB in blocks, watts in milliwatts, byte counters that only grow); value_json comes from
// runlog::FormatValueJson. Records go to LogWriter::Append in batches of 256.
//
// --measure PATH, in one process, the model starting cold (the page cache is whatever it is: warm when the
// file was just written; run generation in another process, or VmHWM includes it):
//  (a) first frame: ResolveLeetPath + LeetSession::Open, one Work slice of 40 ms (the app's kLoadSlice),
//      BuildViewModel and LeetView::Render at 160x48;
//  (b) whole run: the app's loading loop (a 40 ms Work slice, then a frame, as the app draws after every
//      slice that changed something) until !loading(): wall time from (a)'s start to the last frame, the
//      time spent in Work and in frames, and the loop thread's CPU time (CLOCK_THREAD_CPUTIME_ID);
//  (c) one frame of the loaded run at 160x48 and at 80x24, --renders times: BuildViewModel and Render timed
//      apart. The view keeps its chart groups between frames (the steady state); a fresh LeetView per frame
//      shows the cost of regrouping, which happens when a key appears;
//  (d) memory: VmRSS and VmHWM of this process (/proc/self/status) before opening and after loading, and
//      RunModel::MemoryBytes();
//  (e) following the loaded run as the app does: every 250 ms a Work(now, 10 ms), and a frame when Work
//      changed something or a second has passed since the last one, for --idle-seconds with no new data;
//      then the same while a thread appends one stats record a second (at a random point of each second,
//      so the appends fall anywhere in the 250 ms poll) to the log, holding an exclusive flock as runmon's
//      writer does (left out when another process holds that lock: a writer at work). Reported: this
//      process's CPU (getrusage) as percent of one core, the loop's own CPU in
//      Work and in frames (CLOCK_THREAD_CPUTIME_ID), and the latency from an append to its record being in
//      the model and drawn. The log is cut back to its size afterwards (--keep-appended keeps the records);
//  (f) where loading goes: fresh passes over the log (best of two) with RecordReader alone (framing and
//      decoding), plus ParseJsonNumber of every value, plus RunModel::Ingest (the series), next to the
//      loader's Work time from (b).
//
// --drop-cache writes the log back and drops its pages from the page cache first (POSIX_FADV_DONTNEED;
// mincore tells what is left), for a load from the disk; --load-only stops after (d); --willneed, an
// experiment for the loader, asks the kernel for the whole file (POSIX_FADV_WILLNEED) first thing in (a).
//
// Readable lines go to stderr; one JSON object per mode to stdout (the measure one last).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runlog/index_file.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/records.hpp"
#include "runview/detail_reader.hpp"
#include "runview/run_model.hpp"
#include "runview/workspace.hpp"
#include "tui/session.hpp"
#include "tui/view.hpp"

namespace {

namespace runlog = runmon::runlog;
namespace tui = runmon::tui;
namespace runview = runmon::runview;
namespace wandb = runmon::wandb;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

// The app's pacing (src/app/leet_command.cpp).
constexpr auto kLoadSlice = std::chrono::milliseconds(40);
constexpr auto kIdleSlice = std::chrono::milliseconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(250);
constexpr auto kClockRedraw = std::chrono::seconds(1);

// The generated run.
constexpr double kStartTime = 1764403200.0;  // 2025-11-29 08:00:00 UTC
constexpr int kGpus = 8;
constexpr double kGpuMemoryBytes = 85520809984.0;  // 81,559 MiB, an 80 GB GPU
constexpr double kGpuPowerLimitWatts = 700;
constexpr double kHostMemoryBytes = 1082331758592.0;  // 1,008 GiB
constexpr double kDiskTotalGiB = 1788.0;
constexpr size_t kBatchRecords = 256;
constexpr const char* kRunName = "leet-bench-24h";
// --keys N > 100: the week-long run of the second requirement (bench/run_week_bench.py).
constexpr const char* kWideRunName = "leet-bench-7d";
constexpr const char* kWideRunId = "lb7d0001";
constexpr size_t kBaseKeys = 100;
constexpr int kHostCores = 64;  // cpu.{i}.cpu_percent
constexpr size_t kMaxKeys = kBaseKeys + kHostCores + 4 * kGpus + 4;

struct Options {
  std::string generate;
  std::string measure;
  uint64_t seconds = 86400;
  size_t keys = kBaseKeys;
  int renders = 200;
  double idle_seconds = 10;
  bool keep_appended = false;
  bool drop_cache = false;
  bool load_only = false;
  bool willneed = false;
  bool follow = true;
  bool breakdown = true;
  int zoom_windows = 20;
  double zoom_seconds = 60;
  uint64_t zoom_seed = 42;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr,
               "leet_bench: %s\n"
               "usage: leet_bench [--generate PATH] [--seconds N] [--keys N] [--measure PATH] [--renders N]\n"
               "                  [--idle-seconds S] [--keep-appended] [--drop-cache] [--load-only]\n"
               "                  [--willneed] [--no-follow] [--no-breakdown] [--zoom-windows N]\n"
               "                  [--zoom-seconds S] [--zoom-seed N]\n",
               message.c_str());
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    try {
      if (arg == "--generate") {
        o.generate = value();
      } else if (arg == "--measure") {
        o.measure = value();
      } else if (arg == "--seconds") {
        o.seconds = std::stoull(value());
      } else if (arg == "--keys") {
        o.keys = std::stoul(value());
      } else if (arg == "--renders") {
        o.renders = std::stoi(value());
      } else if (arg == "--idle-seconds") {
        o.idle_seconds = std::stod(value());
      } else if (arg == "--keep-appended") {
        o.keep_appended = true;
      } else if (arg == "--drop-cache") {
        o.drop_cache = true;
      } else if (arg == "--load-only") {
        o.load_only = true;
      } else if (arg == "--willneed") {
        o.willneed = true;
      } else if (arg == "--no-follow") {
        o.follow = false;
      } else if (arg == "--no-breakdown") {
        o.breakdown = false;
      } else if (arg == "--zoom-windows") {
        o.zoom_windows = std::stoi(value());
      } else if (arg == "--zoom-seconds") {
        o.zoom_seconds = std::stod(value());
      } else if (arg == "--zoom-seed") {
        o.zoom_seed = std::stoull(value());
      } else {
        Usage(fmt::format("unknown argument '{}'", arg));
      }
    } catch (const std::exception&) {
      Usage(fmt::format("bad value for {}", arg));
    }
  }
  if (o.generate.empty() && o.measure.empty()) Usage("give --generate PATH, --measure PATH or both");
  if (o.seconds < 1) Usage("--seconds must be at least 1");
  if (o.keys < kBaseKeys || o.keys > kMaxKeys)
    Usage(fmt::format("--keys must be {} to {}", kBaseKeys, kMaxKeys));
  if (o.renders < 1) Usage("--renders must be at least 1");
  if (o.zoom_windows < 0) Usage("--zoom-windows must not be negative");
  if (!(o.zoom_seconds > 0)) Usage("--zoom-seconds must be positive");
  if (o.idle_seconds < 0) Usage("--idle-seconds must not be negative");
  return o;
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "leet_bench: %s\n", message.c_str());
  std::exit(1);
}

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double ProcessCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Memory {
  uint64_t rss_kb = 0;
  uint64_t hwm_kb = 0;
};

Memory ReadMemory() {
  Memory m;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    const auto field = [&](std::string_view name) -> std::optional<uint64_t> {
      if (!line.starts_with(name)) return std::nullopt;
      return std::strtoull(line.c_str() + name.size(), nullptr, 10);
    };
    if (auto v = field("VmRSS:")) m.rss_kb = *v;
    if (auto v = field("VmHWM:")) m.hwm_kb = *v;
  }
  return m;
}

struct Distribution {
  double median = 0;
  double p99 = 0;
  double max = 0;
  double mean = 0;
};

Distribution Describe(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.median = values[values.size() / 2];
  d.p99 = values[std::min(values.size() - 1, static_cast<size_t>(static_cast<double>(values.size()) * 0.99))];
  d.max = values.back();
  for (double v : values) d.mean += v;
  d.mean /= static_cast<double>(values.size());
  return d;
}

Json ToJson(const Distribution& d) {
  return Json{{"median", d.median}, {"p99", d.p99}, {"max", d.max}, {"mean", d.mean}};
}

// --- the generated run -----------------------------------------------------------------------------------

double Clamp01(double v) {
  return std::clamp(v, 0.0, 1.0);
}

double Wave(double t, double period, double phase = 0) {
  return std::sin(2 * std::numbers::pi * t / period + phase);
}

// What the job is doing at second t; the keys follow it.
struct Activity {
  double warmup = 0;  // 0 -> 1 over the first ten minutes
  double gpu = 0;     // GPU utilisation, 0..1, before each GPU's own noise
  bool checkpoint = false;
};

Activity JobActivity(double t) {
  Activity a;
  a.warmup = Clamp01(t / 600);
  const double in_hour = std::fmod(t, 3600);
  const double in_half_hour = std::fmod(t, 1800);
  a.checkpoint = t > 600 && in_hour >= 3500 && in_hour < 3560;
  double gpu = 0.93 + 0.03 * Wave(t, 173);
  if (in_half_hour >= 1680) gpu = 0.40 + 0.06 * Wave(t, 23);  // evaluation
  if (a.checkpoint) gpu = 0.03;
  a.gpu = gpu * a.warmup * a.warmup * (3 - 2 * a.warmup);
  return a;
}

class RunGenerator {
 public:
  // The first `keys` of: today's 100 keys, then kHostCores cpu.{i}.cpu_percent, then 4 more per GPU
  // (fanSpeed, pcieLinkGen, encoderUtilization, correctedMemoryErrors), then 4 per-device disk counters.
  // The extra keys draw from a generator of their own, so the first 100 keys' values do not depend on
  // `keys` (--keys 100 writes the same log as before the option came).
  explicit RunGenerator(uint64_t seed, size_t keys = kBaseKeys) : rng_(seed), extra_rng_(seed * 7919 + 17) {
    keys_ = {"cpu",
             "memory_percent",
             "proc.memory.rssMB",
             "proc.memory.percent",
             "proc.memory.availableMB",
             "proc.cpu.threads",
             "disk./.usagePercent",
             "disk./.usageGB",
             "disk.in",
             "disk.out",
             "network.sent",
             "network.recv"};
    for (int gpu = 0; gpu < kGpus; ++gpu) {
      for (const char* name :
           {"gpu", "memory", "memoryAllocated", "memoryAllocatedBytes", "temp", "powerWatts",
            "enforcedPowerLimitWatts", "powerPercent", "smClock", "memoryClock", "graphicsClock"}) {
        keys_.push_back(fmt::format("gpu.{}.{}", gpu, name));
      }
    }
    if (keys_.size() != kBaseKeys) Fail("the generator's base keys are not 100");
    for (int core = 0; core < kHostCores; ++core) keys_.push_back(fmt::format("cpu.{}.cpu_percent", core));
    for (int gpu = 0; gpu < kGpus; ++gpu) {
      for (const char* name : {"fanSpeed", "pcieLinkGen", "encoderUtilization", "correctedMemoryErrors"}) {
        keys_.push_back(fmt::format("gpu.{}.{}", gpu, name));
      }
    }
    for (const char* name : {"disk.nvme0n1.in", "disk.nvme0n1.out", "disk.nvme1n1.in", "disk.nvme1n1.out"}) {
      keys_.push_back(name);
    }
    if (keys_.size() != kMaxKeys) Fail("the generator's extra keys disagree with kMaxKeys");
    keys_.resize(std::clamp(keys, kBaseKeys, kMaxKeys));
    temperature_.fill(31);
  }

  size_t keys() const { return keys_.size(); }

  // The stats record of second `second` after the run's start (its items are reused between calls).
  void Fill(uint64_t second, wandb::StatsRecord& stats) {
    const double t = static_cast<double>(second);
    const Activity a = JobActivity(t);
    values_.clear();
    Host(t, a);
    for (int gpu = 0; gpu < kGpus; ++gpu) Gpu(t, a, gpu);
    if (keys_.size() > kBaseKeys) {
      Extra(t, a);
      values_.resize(keys_.size());
    }
    if (values_.size() != keys_.size()) Fail("the generator's keys and values disagree");
    stats.set_stats_type(wandb::StatsRecord::SYSTEM);
    // Samples land a few milliseconds after each whole second.
    runlog::SetTimestamp(kStartTime + 1 + t + 0.001 * static_cast<double>(rng_() % 8),
                         *stats.mutable_timestamp());
    if (static_cast<size_t>(stats.item_size()) != keys_.size()) {
      stats.clear_item();
      for (const auto& key : keys_) stats.add_item()->set_key(key);
    }
    for (size_t i = 0; i < keys_.size(); ++i) {
      stats.mutable_item(static_cast<int>(i))->set_value_json(runlog::FormatValueJson(values_[i]));
    }
  }

 private:
  double Noise(double sd) { return normal_(rng_) * sd; }
  // Shapes: what the monitor's arithmetic leaves in a value.
  static double Tenth(double v) { return std::round(v * 10) / 10; }
  static double Whole(double v) { return std::round(v); }
  static double PageMiB(double mib) { return std::round(mib * 256) / 256; }
  static double BlockGiB(double gib) { return std::round(gib * 262144) / 262144; }
  static double Milliwatts(double watts) { return std::round(watts * 1000) / 1000; }
  static double Percent(double used, double total) { return std::floor(used) / total * 100; }

  void Host(double t, const Activity& a) {
    const double cpu =
        std::clamp(6 + 31 * a.gpu + (a.checkpoint ? 9 : 0) + 2 * Wave(t, 41) + Noise(1.5), 0.0, 100.0);
    values_.push_back(Percent(cpu * 1e6, 1e8));
    const double memory_percent = 14 + 9 * a.warmup + 3 * t / 86400 + 0.4 * Wave(t, 900) + Noise(0.05);
    values_.push_back(Tenth(memory_percent));
    rss_drift_mib_ = std::clamp(rss_drift_mib_ + Noise(3), -400.0, 400.0);
    const double rss_mib = PageMiB(1900 + 16400 * a.warmup + 350 * a.gpu + rss_drift_mib_);
    values_.push_back(rss_mib);
    values_.push_back(Percent(rss_mib * 1048576, kHostMemoryBytes));
    values_.push_back(PageMiB(kHostMemoryBytes / 1048576 * (1 - memory_percent / 100) + Noise(20)));
    values_.push_back(Whole(38 + 104 * a.warmup + (a.checkpoint ? 8 : 0) + (rng_() % 16 == 0 ? 1 : 0)));
    if (a.checkpoint) disk_used_gib_ += 9.6 / 60;
    values_.push_back(Tenth(disk_used_gib_ / kDiskTotalGiB * 100));
    values_.push_back(BlockGiB(disk_used_gib_));
    disk_in_mib_ += std::max(0.0, 170 * a.gpu + 6 + Noise(12)) + static_cast<double>(rng_() % 4096) / 1048576;
    values_.push_back(std::round(disk_in_mib_ * 1048576) / 1048576);
    disk_out_mib_ += (a.checkpoint ? 164 + Noise(10) : 0.4 + std::abs(Noise(0.3))) +
                     static_cast<double>(rng_() % 4096) / 1048576;
    values_.push_back(std::round(disk_out_mib_ * 1048576) / 1048576);
    sent_bytes_ += std::max(0.0, 2.1e8 * a.gpu + 4e5 + Noise(6e6));
    recv_bytes_ += std::max(0.0, 2.2e8 * a.gpu + 9e5 + Noise(6e6));
    values_.push_back(Whole(sent_bytes_));
    values_.push_back(Whole(recv_bytes_));
  }

  void Gpu(double t, const Activity& a, int gpu) {
    const auto g = static_cast<size_t>(gpu);
    const double index = static_cast<double>(gpu);
    const double busy = a.gpu > 0.05 ? Clamp01(a.gpu + 0.02 * Wave(t, 61, index) + Noise(0.025)) : a.gpu;
    values_.push_back(Whole(100 * busy));
    values_.push_back(Whole(100 * Clamp01(0.56 * busy + Noise(0.02))));
    const double allocated = std::clamp(
        a.warmup * (7.13e10 + 2.1e8 * index + 1.5e9 * Wave(t, 617, index)) + 5.3e8, 0.0, kGpuMemoryBytes);
    const double allocated_bytes = std::round(allocated / 2097152) * 2097152;
    values_.push_back(Percent(allocated_bytes, kGpuMemoryBytes));
    values_.push_back(allocated_bytes);
    temperature_[g] += (34 + 0.8 * index + 46 * busy - temperature_[g]) * 0.015 + Noise(0.25);
    values_.push_back(Whole(temperature_[g]));
    const double watts = std::clamp(71 + 612 * busy + Noise(9), 60.0, kGpuPowerLimitWatts);
    values_.push_back(Milliwatts(watts));
    values_.push_back(kGpuPowerLimitWatts);
    values_.push_back(Milliwatts(watts) / kGpuPowerLimitWatts * 100);
    const double clock =
        busy > 0.05 ? 1980 - (temperature_[g] > 82 ? 105 : 0) - 15 * static_cast<double>(rng_() % 3) : 345;
    values_.push_back(clock);
    values_.push_back(2619);
    values_.push_back(clock);
  }

  // The keys past the first 100, from extra_rng_ only (after the others: fanSpeed follows temperature_).
  void Extra(double t, const Activity& a) {
    const auto noise = [&](double sd) { return extra_normal_(extra_rng_) * sd; };
    // Per core, as W&B's Python monitor wrote the key (psutil.cpu_percent(percpu=True)): busy over total
    // jiffies of the last second (USER_HZ 100, so about 100 of them) times 100, rounded to a tenth.
    for (int core = 0; core < kHostCores; ++core) {
      const double index = static_cast<double>(core);
      double busy = 0;
      if (core < kGpus) {  // the ranks' main loops
        busy = a.gpu > 0.05 ? 0.95 + noise(0.02) : (a.checkpoint ? 0.82 + noise(0.05) : 0.06 + noise(0.02));
      } else if (core < 40) {  // data-loader workers
        busy = 0.04 + 0.58 * a.gpu + 0.09 * Wave(t, 37, index) + noise(0.05);
      } else {  // the rest of the host
        busy = 0.012 + std::abs(noise(0.01)) + (extra_rng_() % 64 == 0 ? 0.3 : 0);
      }
      const uint64_t draw = extra_rng_() % 10;
      const double total_ticks = draw == 0 ? 99 : draw == 1 ? 101 : 100;
      const double busy_ticks = std::round(Clamp01(busy) * total_ticks);
      values_.push_back(Tenth(busy_ticks / total_ticks * 100));
    }
    for (int gpu = 0; gpu < kGpus; ++gpu) {
      const auto g = static_cast<size_t>(gpu);
      values_.push_back(Whole(std::clamp(30 + 1.1 * (temperature_[g] - 34), 30.0, 100.0)));  // fanSpeed, %
      values_.push_back(a.gpu > 0.05 || a.checkpoint ? 5 : 1);  // pcieLinkGen: the link trains down idle
      values_.push_back(0);                                     // encoderUtilization: no NVENC in training
      if (extra_rng_() % 100000 == 0) ++corrected_errors_[g];
      values_.push_back(corrected_errors_[g]);
    }
    nvme0_in_mib_ +=
        std::max(0.0, 118 * a.gpu + 4 + noise(9)) + static_cast<double>(extra_rng_() % 4096) / 1048576;
    nvme0_out_mib_ += 0.3 + std::abs(noise(0.2)) + static_cast<double>(extra_rng_() % 4096) / 1048576;
    nvme1_in_mib_ +=
        std::max(0.0, 52 * a.gpu + 2 + noise(5)) + static_cast<double>(extra_rng_() % 4096) / 1048576;
    nvme1_out_mib_ += (a.checkpoint ? 164 + noise(10) : 0.1 + std::abs(noise(0.1))) +
                      static_cast<double>(extra_rng_() % 4096) / 1048576;
    for (double mib : {nvme0_in_mib_, nvme0_out_mib_, nvme1_in_mib_, nvme1_out_mib_}) {
      values_.push_back(std::round(mib * 1048576) / 1048576);
    }
  }

  std::vector<std::string> keys_;
  std::vector<double> values_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0, 1};
  std::mt19937_64 extra_rng_;
  std::normal_distribution<double> extra_normal_{0, 1};
  std::array<double, kGpus> corrected_errors_{};
  double nvme0_in_mib_ = 0;
  double nvme0_out_mib_ = 0;
  double nvme1_in_mib_ = 0;
  double nvme1_out_mib_ = 0;
  std::array<double, kGpus> temperature_{};
  double rss_drift_mib_ = 0;
  double disk_used_gib_ = 611.4;
  double disk_in_mib_ = 0;
  double disk_out_mib_ = 0;
  double sent_bytes_ = 0;
  double recv_bytes_ = 0;
};

void Generate(const std::string& path, uint64_t seconds, size_t keys) {
  std::filesystem::remove(path);
  // The log stands for one W&B wrote, which has no summary index: a stale one from an earlier log goes.
  const std::filesystem::path index = runlog::IndexPathFor(path);
  std::filesystem::remove(index);
  auto writer = runlog::LogWriter::Create(path);
  if (!writer) Fail(writer.error());
  const auto t0 = Clock::now();
  std::vector<std::string> batch;
  uint64_t records = 0;
  auto flush = [&] {
    if (batch.empty()) return;
    if (auto status = writer->Append(batch); !status) Fail(status.error());
    records += batch.size();
    batch.clear();
  };
  auto add = [&](const wandb::Record& record) {
    batch.emplace_back();
    record.SerializeToString(&batch.back());
    if (batch.size() == kBatchRecords) flush();
  };
  add(runlog::MakeHeaderRecord("runmon 0.1.0"));
  const bool wide = keys > kBaseKeys;
  add(runlog::MakeRunRecord({wide ? kWideRunId : "lb24h001",
                             "leet-bench",
                             wide ? kWideRunName : kRunName,
                             "gpu-node-07",
                             kStartTime,
                             {"bench", "8xH100"}}));
  RunGenerator generator(2024, keys);
  wandb::Record record;
  auto* stats = record.mutable_stats();
  for (uint64_t second = 0; second < seconds; ++second) {
    generator.Fill(second, *stats);
    add(record);
  }
  add(runlog::MakeExitRecord(0, static_cast<double>(seconds) + 1));
  flush();
  if (std::filesystem::exists(index)) Fail(fmt::format("{} exists after generating the log", index.string()));
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const uint64_t bytes = writer->size();
  const double per_record = static_cast<double>(bytes) / static_cast<double>(records);
  std::fprintf(
      stderr,
      "generated %s: %.1f MB, %llu records (%llu stats records of %zu keys, %.0f B framed on average) "
      "in %.1f s\n",
      path.c_str(), static_cast<double>(bytes) / 1e6, static_cast<unsigned long long>(records),
      static_cast<unsigned long long>(seconds), generator.keys(), per_record, elapsed);
  Json out{{"tool", "runmon"},
           {"bench", "generate"},
           {"file", path},
           {"bytes", bytes},
           {"records", records},
           {"stats_records", seconds},
           {"keys", generator.keys()},
           {"run_name", wide ? kWideRunName : kRunName},
           {"run_id", wide ? kWideRunId : "lb24h001"},
           {"bytes_per_record", per_record},
           {"seconds", elapsed}};
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

// --- measuring -------------------------------------------------------------------------------------------

struct FrameTime {
  double build_ms = 0;
  double render_ms = 0;
  double loaded_fraction = 1;  // the view model's (the status bar's "loading N%")
};

tui::CellGrid DrawFrame(tui::LeetSession& session, tui::LeetView& view, int width, int height,
                        FrameTime* time = nullptr) {
  const auto t0 = Clock::now();
  const tui::ViewModel model = session.BuildViewModel(view, WallSeconds());
  const auto t1 = Clock::now();
  auto grid = view.Render(model, width, height);
  const auto t2 = Clock::now();
  if (time != nullptr) *time = {Ms(t1 - t0), Ms(t2 - t1), model.loaded_fraction};
  return grid;
}

// The x range the run's system series reach (the largest last x), 0 when there are none.
double SeriesEndX(const runview::RunModel& run) {
  double end = 0;
  for (const auto& [key, series] : run.system_series()) {
    if (!series.empty()) end = std::max(end, series.last_x());
  }
  return end;
}

// (z) Zooming into windows of the loaded run at full resolution: DetailReader::Window for random windows of
// `seconds` inside the summarised part of the run, each the first read of its segments (windows are kept
// apart by more than a segment spans, so none reads another's), for one chart's keys and for every key;
// then the first set again, from the reader's cache.
struct ZoomCall {
  double x0 = 0;
  double ms = 0;
  size_t segments = 0;
  size_t segments_read = 0;
  size_t points_returned = 0;   // of the first key: whole segments come back
  size_t points_in_window = 0;  // of them, inside [x0, x0 + seconds]
  bool null = false;
};

Json ZoomSummary(const std::vector<ZoomCall>& calls) {
  std::vector<double> ms;
  std::vector<double> in_window;
  std::vector<double> returned;
  std::vector<double> read;
  size_t nulls = 0;
  for (const auto& call : calls) {
    if (call.null) {
      ++nulls;
      continue;
    }
    ms.push_back(call.ms);
    in_window.push_back(static_cast<double>(call.points_in_window));
    returned.push_back(static_cast<double>(call.points_returned));
    read.push_back(static_cast<double>(call.segments_read));
  }
  const Distribution time = Describe(ms);
  const Distribution points = Describe(in_window);
  Json j{
      {"calls", calls.size()},
      {"null", nulls},
      {"ms_median", time.median},
      {"ms_max", time.max},
      {"ms_mean", time.mean},
      {"points_in_window_median", points.median},
      {"points_in_window_min", in_window.empty() ? 0 : *std::min_element(in_window.begin(), in_window.end())},
      {"points_returned_median", Describe(returned).median},
      {"segments_read_median", Describe(read).median},
      {"segments_read_max", Describe(read).max}};
  Json each = Json::array();
  for (const auto& call : calls) {
    each.push_back({call.x0, call.ms, call.segments_read, call.points_in_window, call.points_returned});
  }
  j["each"] = std::move(each);  // [x0, ms, segments read, points in the window, points returned]
  return j;
}

Json MeasureZoom(const runview::RunModel& run, const Options& o) {
  const auto& detail = run.detail();
  if (!detail) {
    std::fprintf(stderr,
                 "(z) zoom: RunModel::detail() is null: the run was loaded in full (a log under %llu "
                 "MiB), every point is in the model\n",
                 static_cast<unsigned long long>(runview::kIndexedLoadBytes >> 20));
    return Json{{"detail", false}};
  }
  std::vector<std::string> chart_keys;
  std::vector<std::string> all_keys;
  double first_x = std::numeric_limits<double>::infinity();
  for (const auto& [key, series] : run.system_series()) {
    all_keys.push_back(key);
    if (!series.empty()) first_x = std::min(first_x, series.first_x());
    // The chart of gpu.{i}.gpu: one series per GPU.
    if (key.starts_with("gpu.") && key.ends_with(".gpu") && key.find('.', 4) == key.size() - 4) {
      chart_keys.push_back(key);
    }
  }
  if (chart_keys.empty() && !all_keys.empty()) chart_keys.push_back(all_keys.front());
  const double end_x = run.summary_end_x().value_or(SeriesEndX(run));
  const double seconds = o.zoom_seconds;
  if (o.zoom_windows == 0) {
    std::fprintf(stderr, "(z) zoom: left out (--zoom-windows 0)\n");
    return Json{{"detail", true}, {"windows", 0}};
  }
  if (!(end_x - first_x > seconds) || chart_keys.empty()) {
    std::fprintf(stderr, "(z) zoom: no window of %.0f s fits in the summarised part of the run\n", seconds);
    return Json{{"detail", true}, {"windows", 0}};
  }
  // Windows far enough apart that no two read the same segment (a segment spans ~256 KiB of records).
  std::mt19937_64 rng(o.zoom_seed);
  std::uniform_real_distribution<double> pick(first_x, end_x - seconds);
  const size_t wanted = 2 * static_cast<size_t>(o.zoom_windows);
  const double span_per_segment =
      (end_x - first_x) / static_cast<double>(std::max<size_t>(1, detail->SegmentsIn(first_x, end_x)));
  const double gap = seconds + 2 * span_per_segment + 1;
  std::vector<double> starts;
  for (int attempt = 0; starts.size() < wanted && attempt < 100000; ++attempt) {
    const double x0 = std::floor(pick(rng));
    if (std::all_of(starts.begin(), starts.end(), [&](double other) { return std::abs(other - x0) > gap; })) {
      starts.push_back(x0);
    }
  }
  while (starts.size() < wanted) starts.push_back(std::floor(pick(rng)));  // a short run: some share segments
  const auto call = [&](double x0, const std::vector<std::string>& keys) {
    ZoomCall c;
    c.x0 = x0;
    c.segments = detail->SegmentsIn(x0, x0 + seconds);
    const auto t0 = Clock::now();
    const auto window = detail->Window(x0, x0 + seconds, keys, run);
    c.ms = Ms(Clock::now() - t0);
    if (!window) {
      c.null = true;
      return c;
    }
    c.segments_read = window->segments_read;
    const auto found = window->series.find(keys.front());
    if (found != window->series.end()) {
      const runview::TimeSeries& points = found->second;
      c.points_returned = points.size();
      for (size_t i = 0; i < points.size(); ++i) {
        if (points.x(i) >= x0 && points.x(i) <= x0 + seconds) ++c.points_in_window;
      }
    }
    return c;
  };
  std::vector<ZoomCall> chart_cold;
  std::vector<ZoomCall> all_cold;
  std::vector<ZoomCall> chart_cached;
  const size_t n = static_cast<size_t>(o.zoom_windows);
  for (size_t i = 0; i < n; ++i) chart_cold.push_back(call(starts[i], chart_keys));
  for (size_t i = 0; i < n; ++i) all_cold.push_back(call(starts[n + i], all_keys));
  for (size_t i = 0; i < n; ++i) chart_cached.push_back(call(starts[i], chart_keys));
  Json j{{"detail", true},
         {"window_seconds", seconds},
         {"windows", n},
         {"seed", o.zoom_seed},
         {"summary_end_x", end_x},
         {"chart_keys", chart_keys.size()},
         {"all_keys", all_keys.size()},
         {"chart_cold", ZoomSummary(chart_cold)},
         {"all_keys_cold", ZoomSummary(all_cold)},
         {"chart_cached", ZoomSummary(chart_cached)}};
  const auto print = [&](const char* what, size_t keys, const Json& z) {
    std::fprintf(
        stderr,
        "  %-30s %3zu keys: median %6.2f ms, max %6.2f ms; %s of the first key in the window "
        "(median; %s returned), %s segments read (median, max %s)%s\n",
        what, keys, z["ms_median"].get<double>(), z["ms_max"].get<double>(),
        z["points_in_window_median"].dump().c_str(), z["points_returned_median"].dump().c_str(),
        z["segments_read_median"].dump().c_str(), z["segments_read_max"].dump().c_str(),
        z["null"].get<size_t>() > 0 ? fmt::format(", {} null", z["null"].get<size_t>()).c_str() : "");
  };
  std::fprintf(stderr, "(z) zoom: %zu random %.0f s windows each (seed %llu), DetailReader::Window:\n", n,
               seconds, static_cast<unsigned long long>(o.zoom_seed));
  print("one chart (gpu.{i}.gpu), cold", chart_keys.size(), j["chart_cold"]);
  print("every key, cold", all_keys.size(), j["all_keys_cold"]);
  print("one chart, again (cached)", chart_keys.size(), j["chart_cached"]);
  return j;
}

struct FrameStats {
  Distribution build_ms;
  Distribution render_ms;
  Distribution frame_ms;  // both
};

FrameStats TimeFrames(tui::LeetSession& session, int width, int height, int count, bool fresh_view) {
  std::vector<double> build;
  std::vector<double> render;
  std::vector<double> both;
  tui::LeetView kept;
  DrawFrame(session, kept, width, height);  // the groups, once
  for (int i = 0; i < count; ++i) {
    tui::LeetView fresh;
    FrameTime t;
    DrawFrame(session, fresh_view ? fresh : kept, width, height, &t);
    build.push_back(t.build_ms);
    render.push_back(t.render_ms);
    both.push_back(t.build_ms + t.render_ms);
  }
  return {Describe(build), Describe(render), Describe(both)};
}

Json ToJson(const FrameStats& s) {
  return Json{
      {"build_ms", ToJson(s.build_ms)}, {"render_ms", ToJson(s.render_ms)}, {"frame_ms", ToJson(s.frame_ms)}};
}

void PrintFrames(const char* what, const FrameStats& s) {
  std::fprintf(stderr,
               "  %-34s median %6.3f ms  p99 %6.3f ms  max %6.3f ms   (BuildViewModel median %.3f, Render "
               "median %.3f)\n",
               what, s.frame_ms.median, s.frame_ms.p99, s.frame_ms.max, s.build_ms.median,
               s.render_ms.median);
}

// Appends one stats record a second to the log, at a random point of each second, holding an exclusive
// flock as runmon's writer does; the time of each append is kept.
class Appender {
 public:
  explicit Appender(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) Fail(fmt::format("cannot open {} to append: {}", path, std::strerror(errno)));
    locked_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
    struct stat info {};
    if (::fstat(fd_, &info) != 0) Fail("fstat failed");
    original_size_ = static_cast<uint64_t>(info.st_size);
    offset_ = original_size_;
  }
  ~Appender() {
    Stop();
    ::close(fd_);
  }
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  void Start(uint64_t first_second) {
    thread_ = std::thread([this, first_second] { Loop(first_second); });
  }
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // When the append of record `index` (0-based) started; only for records already seen in the log.
  Clock::time_point AppendTime(size_t index) {
    std::lock_guard lock(mutex_);
    return index < times_.size() ? times_[index] : Clock::time_point{};
  }
  size_t appended() {
    std::lock_guard lock(mutex_);
    return times_.size();
  }
  double cpu_seconds() const { return cpu_seconds_; }
  // False when another process holds the log's lock: a writer is at work, and appending would corrupt it.
  bool locked() const { return locked_; }
  void CutBack() {
    if (::ftruncate(fd_, static_cast<off_t>(original_size_)) != 0) Fail("ftruncate failed");
  }

 private:
  void Loop(uint64_t first_second) {
    const double cpu0 = ThreadCpuSeconds();
    RunGenerator generator(7);
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int> jitter_ms(0, 999);
    wandb::Record record;
    std::string payload;
    std::string framed;
    const auto start = Clock::now();
    for (uint64_t k = 0;; ++k) {
      const auto at = start + std::chrono::seconds(k) + std::chrono::milliseconds(jitter_ms(rng));
      generator.Fill(first_second + k, *record.mutable_stats());
      payload.clear();
      record.SerializeToString(&payload);
      framed.clear();
      const uint64_t end = runlog::AppendFramedRecord(offset_, payload, framed);
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, at, [this] { return stop_; })) break;
      const auto now = Clock::now();
      if (::pwrite(fd_, framed.data(), framed.size(), static_cast<off_t>(offset_)) !=
          static_cast<ssize_t>(framed.size())) {
        Fail("short append");
      }
      offset_ = end;
      times_.push_back(now);
    }
    cpu_seconds_ = ThreadCpuSeconds() - cpu0;
  }

  int fd_ = -1;
  bool locked_ = false;
  uint64_t original_size_ = 0;
  uint64_t offset_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // under mutex_
  std::vector<Clock::time_point> times_;
  double cpu_seconds_ = 0;
};

struct Following {
  double wall_s = 0;
  double process_cpu_s = 0;
  double work_cpu_s = 0;
  double frame_cpu_s = 0;
  int polls = 0;
  int frames = 0;
  size_t appended = 0;
  size_t seen = 0;
  double appender_cpu_s = 0;
  std::vector<double> visible_ms;
  std::vector<double> drawn_ms;
};

// The app's loop once a run is loaded, for `seconds`; with `appender`, the latency of its records.
Following Follow(tui::LeetSession& session, tui::LeetView& view, double seconds, Appender* appender) {
  Following f;
  const runview::RunModel* run = session.current_run();
  const uint64_t base = run->stats_records();
  uint64_t seen = base;
  const double cpu0 = ProcessCpuSeconds();
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto last_frame = start;
  if (appender != nullptr) appender->Start(base + 1);  // the seconds after the run's last sample
  for (auto tick = start; tick < end; tick += kPollInterval) {
    std::this_thread::sleep_until(tick);
    const auto now = Clock::now();
    const double c0 = ThreadCpuSeconds();
    const bool changed = session.Work(now, kIdleSlice);
    const auto after_work = Clock::now();
    const double c1 = ThreadCpuSeconds();
    ++f.polls;
    f.work_cpu_s += c1 - c0;
    if (changed || now - last_frame >= kClockRedraw) {
      DrawFrame(session, view, 160, 48);
      last_frame = Clock::now();
      ++f.frames;
      f.frame_cpu_s += ThreadCpuSeconds() - c1;
    }
    const uint64_t count = run->stats_records();
    for (; appender != nullptr && seen < count; ++seen) {
      const auto appended = appender->AppendTime(static_cast<size_t>(seen - base));
      f.visible_ms.push_back(Ms(after_work - appended));
      f.drawn_ms.push_back(Ms(last_frame - appended));
    }
  }
  std::this_thread::sleep_until(end);
  if (appender != nullptr) {
    appender->Stop();
    f.appended = appender->appended();
    f.appender_cpu_s = appender->cpu_seconds();
  }
  f.seen = static_cast<size_t>(seen - base);
  f.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  f.process_cpu_s = ProcessCpuSeconds() - cpu0;
  return f;
}

Json ToJson(const Following& f) {
  const auto percent = [&](double cpu) { return f.wall_s > 0 ? 100 * cpu / f.wall_s : 0; };
  Json j{{"seconds", f.wall_s},
         {"process_cpu_percent", percent(f.process_cpu_s - f.appender_cpu_s)},
         {"process_cpu_percent_with_appender", percent(f.process_cpu_s)},
         {"work_cpu_percent", percent(f.work_cpu_s)},
         {"frame_cpu_percent", percent(f.frame_cpu_s)},
         {"frame_cpu_ms_each", f.frames > 0 ? 1e3 * f.frame_cpu_s / f.frames : 0},
         {"polls", f.polls},
         {"frames", f.frames}};
  if (f.appended > 0) {
    j["appended"] = f.appended;
    j["seen"] = f.seen;
    j["visible_ms"] = ToJson(Describe(f.visible_ms));
    j["drawn_ms"] = ToJson(Describe(f.drawn_ms));
  }
  return j;
}

void PrintFollowing(const char* what, const Following& f) {
  const auto percent = [&](double cpu) { return f.wall_s > 0 ? 100 * cpu / f.wall_s : 0; };
  std::fprintf(stderr,
               "  %-26s %.1f s: process CPU %.3f%% of a core (Work %.3f%%, frames %.3f%%); %d polls, %d "
               "frames of %.2f ms CPU each\n",
               what, f.wall_s, percent(f.process_cpu_s - f.appender_cpu_s), percent(f.work_cpu_s),
               percent(f.frame_cpu_s), f.polls, f.frames, f.frames > 0 ? 1e3 * f.frame_cpu_s / f.frames : 0);
  if (f.appended > 0) {
    const Distribution visible = Describe(f.visible_ms);
    const Distribution drawn = Describe(f.drawn_ms);
    std::fprintf(
        stderr,
        "  %-26s %zu appended, %zu seen; append -> in the model: median %.1f ms, max %.1f ms; -> drawn: "
        "median %.1f ms, max %.1f ms (the appending thread's own CPU left out: %.3f s)\n",
        "", f.appended, f.seen, visible.median, visible.max, drawn.median, drawn.max, f.appender_cpu_s);
  }
}

// One pass over the log: RecordReader alone, plus number parsing, or into a RunModel.
enum class PassKind { kDecode, kParseNumbers, kIngest };

double LoadPass(const std::string& path, PassKind kind, uint64_t& records) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail(fmt::format("cannot open {}", path));
  const auto t0 = Clock::now();
  runlog::RecordReader reader(runlog::FileSource(fd));
  auto model = std::make_unique<runview::RunModel>();
  double sum = 0;
  records = 0;
  while (reader.Next() == runlog::ReadOutcome::kRecord) {
    ++records;
    const wandb::Record& record = reader.record();
    if (kind == PassKind::kIngest) {
      model->Ingest(record);
    } else if (kind == PassKind::kParseNumbers && record.has_stats()) {
      for (const auto& item : record.stats().item()) {
        if (auto value = runview::ParseJsonNumber(item.value_json())) sum += *value;
      }
    }
  }
  const double ms = Ms(Clock::now() - t0);
  model.reset();
  ::close(fd);
  if (sum == 1.5) std::fprintf(stderr, " ");  // keeps the parsing
  return ms;
}

// Writes the log's dirty pages back and asks the kernel to drop its cached pages; returns the fraction of
// the file still cached afterwards (mincore), or -1 when that cannot be told.
double DropCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail(fmt::format("cannot open {}", path));
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  double cached = -1;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    const auto size = static_cast<size_t>(info.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> resident((size + page - 1) / page);
      if (::mincore(map, size, resident.data()) == 0) {
        const auto in =
            std::count_if(resident.begin(), resident.end(), [](unsigned char c) { return c & 1; });
        cached = static_cast<double>(in) / static_cast<double>(resident.size());
      }
      ::munmap(map, size);
    }
  }
  ::close(fd);
  return cached;
}

int Measure(const Options& o) {
  const std::string& path = o.measure;
  const uint64_t bytes = std::filesystem::file_size(path);
  Json out{{"tool", "runmon"}, {"bench", "measure"}, {"file", path}, {"bytes", bytes}};
  std::fprintf(stderr, "measure %s: %.1f MB\n", path.c_str(), static_cast<double>(bytes) / 1e6);
  if (o.drop_cache) {
    const double cached = DropCache(path);
    std::fprintf(stderr, "page cache dropped for the log: %.1f%% of it still cached\n", 100 * cached);
    out["cached_fraction_after_drop"] = cached;
  }
  const Memory before = ReadMemory();
  // The summary index beside the log: a W&B-written log has none, and the loader builds it
  // (indexed_load.hpp).
  const std::filesystem::path index_path = runlog::IndexPathFor(path);
  const bool indexed = bytes >= runview::kIndexedLoadBytes;
  std::error_code error;
  const bool index_at_open = std::filesystem::exists(index_path, error);
  const uint64_t index_bytes_at_open = index_at_open ? std::filesystem::file_size(index_path, error) : 0;
  std::fprintf(stderr, "loading path: %s; summary index %s at open%s\n",
               indexed ? "indexed (system series from the summary index)" : "in full (a log under 32 MiB)",
               index_at_open ? "present" : "absent",
               index_at_open
                   ? fmt::format(" ({:.1f} MB)", static_cast<double>(index_bytes_at_open) / 1e6).c_str()
               : indexed ? ": built by the loader's workers while the run shows"
                         : "");

  // (a) The first frame.
  const double cpu0 = ThreadCpuSeconds();
  const auto t0 = Clock::now();
  if (o.willneed) {
    // The experiment: what the loader would gain by asking for the whole file up front (the kernel reads
    // it ahead while the first slices decode). Done here on a descriptor of its own; the page cache is
    // shared.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
      ::close(fd);
    }
  }
  auto target = tui::ResolveLeetPath(std::filesystem::path(path));
  if (!target) Fail(target.error());
  auto opened = tui::LeetSession::Open(*target);
  if (!opened) Fail(opened.error());
  tui::LeetSession& session = **opened;
  tui::LeetView view;
  const auto t_open = Clock::now();
  session.Work(Clock::now(), kLoadSlice);
  const auto t_work = Clock::now();
  FrameTime first_time;
  auto frame = DrawFrame(session, view, 160, 48, &first_time);
  const auto t_first = Clock::now();
  const runview::RunModel* run = session.current_run();
  if (run == nullptr) Fail("no run open");
  const uint64_t first_records = run->stats_records();
  const std::string first_text = frame.ToString();
  const bool first_named =
      first_text.find(kRunName) != std::string::npos || first_text.find(kWideRunName) != std::string::npos;
  const double first_ms = Ms(t_first - t0);
  const double first_end_x = SeriesEndX(*run);
  std::fprintf(stderr,
               "(a) first frame at 160x48: %.1f ms (open %.2f, first Work slice %.1f, BuildViewModel %.2f, "
               "Render %.2f); %llu stats records in it, run name %s\n",
               first_ms, Ms(t_open - t0), Ms(t_work - t_open), first_time.build_ms, first_time.render_ms,
               static_cast<unsigned long long>(first_records), first_named ? "shown" : "NOT shown");
  out["first_frame"] = {{"ms", first_ms},
                        {"open_ms", Ms(t_open - t0)},
                        {"work_ms", Ms(t_work - t_open)},
                        {"build_ms", first_time.build_ms},
                        {"render_ms", first_time.render_ms},
                        {"stats_records", first_records},
                        {"run_name_shown", first_named},
                        {"loaded_fraction", first_time.loaded_fraction},
                        {"series_end_x", first_end_x}};

  // (b) The whole run, as the app loads it: a slice, a frame.
  double work_ms = Ms(t_work - t_open);
  double frames_ms = first_time.build_ms + first_time.render_ms;
  int slices = 1;
  // After every slice's frame: [ms since (a)'s start, the loaded fraction, stats records in the model, the
  // series' last x]; the index's milestones from it below.
  std::vector<std::array<double, 4>> timeline{
      {first_ms, first_time.loaded_fraction, static_cast<double>(first_records), first_end_x}};
  std::optional<double> built_ms;    // the loaded fraction reached 1: every segment summarised
  std::optional<double> written_ms;  // the index file appeared beside the log
  if (first_time.loaded_fraction >= 1) built_ms = first_ms;
  uint64_t versions = 0;
  uint64_t last_version = run->data_version();
  // As the app's loop: a frame after a slice that changed something, or when a second has passed since the
  // last one (the clock); otherwise straight on to the next slice (the app polls input with a 0 timeout while
  // loading). A slice of a log read in full always changes something; while the index is built in the
  // background, most return at once with nothing new (counted: idle slices).
  int frames = 1;
  int idle_slices = 0;
  auto last_frame = t_first;
  while (session.loading()) {
    const auto s0 = Clock::now();
    const bool changed = session.Work(s0, kLoadSlice);
    const auto s1 = Clock::now();
    work_ms += Ms(s1 - s0);
    ++slices;
    if (!changed && s1 - last_frame < kClockRedraw) {
      ++idle_slices;
      continue;
    }
    FrameTime t;
    frame = DrawFrame(session, view, 160, 48, &t);
    frames_ms += t.build_ms + t.render_ms;
    last_frame = Clock::now();
    ++frames;
    const double at = Ms(last_frame - t0);
    if (!built_ms && t.loaded_fraction >= 1) built_ms = at;
    if (!index_at_open && indexed && !written_ms && std::filesystem::exists(index_path, error))
      written_ms = at;
    if (run->data_version() != last_version) {
      last_version = run->data_version();
      ++versions;
    }
    timeline.push_back({at, t.loaded_fraction, static_cast<double>(run->stats_records()), SeriesEndX(*run)});
  }
  const auto t_loaded = Clock::now();
  const double load_cpu_ms = 1e3 * (ThreadCpuSeconds() - cpu0);
  const std::string text = frame.ToString();
  const bool finished =
      text.find("finished") != std::string::npos && text.find("loading") == std::string::npos;
  const double load_ms = Ms(t_loaded - t0);
  const double mb_per_s = static_cast<double>(bytes) / 1e6 / (work_ms / 1e3);
  std::fprintf(
      stderr,
      "(b) whole run loaded and drawn: %.1f ms, %.1f ms of it on the CPU (%d slices, %d of them idle; %d "
      "frames; Work %.1f ms = %.0f MB/s, "
      "%.0f records/s; frames %.1f ms); %llu records, %llu stats records; last frame %s\n",
      load_ms, load_cpu_ms, slices, idle_slices, frames, work_ms, mb_per_s,
      static_cast<double>(run->records()) / (work_ms / 1e3), frames_ms,
      static_cast<unsigned long long>(run->records()), static_cast<unsigned long long>(run->stats_records()),
      finished ? "shows \"finished\"" : "does NOT show \"finished\"");
  // The index's milestones: when the picture first spanned the whole run (coarse: the summaries reach the
  // run's last sample, within 1 %), when every segment was summarised, when the index file was written.
  const double end_x = SeriesEndX(*run);
  std::optional<double> whole_span_ms;
  for (const auto& [at, fraction, records, x] : timeline) {
    if (x >= 0.99 * end_x) {
      whole_span_ms = at;
      break;
    }
  }
  if (!built_ms) built_ms = load_ms;
  if (!index_at_open && indexed && !written_ms && std::filesystem::exists(index_path, error))
    written_ms = load_ms;
  const bool index_after = std::filesystem::exists(index_path, error);
  const uint64_t index_bytes = index_after ? std::filesystem::file_size(index_path, error) : 0;
  const auto optional_ms = [](const std::optional<double>& ms) { return ms ? Json(*ms) : Json(nullptr); };
  std::fprintf(
      stderr,
      "    index: %s at open; the whole run's span drawn at %.1f ms (first frame: %.0f%% of it, "
      "loaded %.0f%%); every segment summarised at %.1f ms; index file %s; %llu data changes drawn\n",
      index_at_open ? "present" : "absent", whole_span_ms.value_or(load_ms),
      end_x > 0 ? 100 * first_end_x / end_x : 0.0, 100 * first_time.loaded_fraction, *built_ms,
      written_ms ? fmt::format("written at {:.1f} ms ({:.1f} MB)", *written_ms,
                               static_cast<double>(index_bytes) / 1e6)
                       .c_str()
      : index_after ? fmt::format("{:.1f} MB (there at open)", static_cast<double>(index_bytes) / 1e6).c_str()
                    : "not written",
      static_cast<unsigned long long>(versions));
  out["index"] = {{"indexed_load", indexed},
                  {"at_open", index_at_open},
                  {"bytes_at_open", index_bytes_at_open},
                  {"after", index_after},
                  {"bytes", index_bytes},
                  {"built_ms", *built_ms},
                  {"written_ms", optional_ms(written_ms)},
                  {"whole_span_ms", optional_ms(whole_span_ms)},
                  {"first_frame_span_fraction", end_x > 0 ? first_end_x / end_x : 0.0},
                  {"data_changes", versions},
                  {"detail", run->detail() != nullptr}};
  // The timeline, thinned to at most 200 entries (the first and the last kept).
  Json thinned = Json::array();
  const size_t step = std::max<size_t>(1, (timeline.size() + 199) / 200);
  for (size_t i = 0; i < timeline.size(); i += step) thinned.push_back(timeline[i]);
  if ((timeline.size() - 1) % step != 0) thinned.push_back(timeline.back());
  out["timeline"] = std::move(thinned);  // [ms, loaded fraction, stats records, series' last x]
  out["loaded"] = {{"ms", load_ms},
                   {"cpu_ms", load_cpu_ms},
                   {"slices", slices},
                   {"idle_slices", idle_slices},
                   {"frames", frames},
                   {"work_ms", work_ms},
                   {"frames_ms", frames_ms},
                   {"mb_per_s", mb_per_s},
                   {"records", run->records()},
                   {"stats_records", run->stats_records()},
                   {"finished_shown", finished}};

  // (d) Memory, before anything else allocates.
  const Memory loaded = ReadMemory();
  const size_t model_bytes = run->MemoryBytes();
  std::fprintf(stderr,
               "(d) memory: VmRSS %.1f MiB (%.1f MiB before opening), VmHWM %.1f MiB; RunModel::MemoryBytes "
               "%.1f MiB (%zu system series)\n",
               static_cast<double>(loaded.rss_kb) / 1024, static_cast<double>(before.rss_kb) / 1024,
               static_cast<double>(loaded.hwm_kb) / 1024, static_cast<double>(model_bytes) / 1048576,
               run->system_series().size());
  out["memory"] = {{"rss_before_kb", before.rss_kb},
                   {"rss_kb", loaded.rss_kb},
                   {"hwm_kb", loaded.hwm_kb},
                   {"model_bytes", model_bytes}};
  if (o.load_only) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }

  // (z) Zooming in at full resolution.
  out["zoom"] = MeasureZoom(*run, o);
  const Memory zoomed = ReadMemory();
  out["memory"]["rss_after_zoom_kb"] = zoomed.rss_kb;
  out["memory"]["hwm_after_zoom_kb"] = zoomed.hwm_kb;

  // (c) One frame of the loaded run.
  std::fprintf(stderr, "(c) one frame of the loaded run, %d frames each:\n", o.renders);
  const FrameStats large = TimeFrames(session, 160, 48, o.renders, false);
  PrintFrames("160x48", large);
  const FrameStats small = TimeFrames(session, 80, 24, o.renders, false);
  PrintFrames("80x24", small);
  const FrameStats regroup = TimeFrames(session, 160, 48, std::max(1, o.renders / 10), true);
  PrintFrames("160x48, fresh LeetView (regroup)", regroup);
  out["frame_160x48"] = ToJson(large);
  out["frame_80x24"] = ToJson(small);
  out["frame_160x48_regroup"] = ToJson(regroup);

  // (e) Following the loaded run.
  if (!o.follow) {
    std::fprintf(stderr, "(e) following the run: left out (--no-follow)\n");
  } else {
    std::fprintf(stderr, "(e) following the run (Work every 250 ms, a frame when changed or each second):\n");
    const Following idle = Follow(session, view, o.idle_seconds, nullptr);
    PrintFollowing("no new data", idle);
    out["follow_idle"] = ToJson(idle);
    {
      Appender appender(path);
      if (appender.locked()) {
        const Following appending = Follow(session, view, o.idle_seconds, &appender);
        if (!o.keep_appended) appender.CutBack();
        PrintFollowing("one record a second", appending);
        out["follow_appending"] = ToJson(appending);
      } else {
        std::fprintf(stderr, "  one record a second: left out, another process holds the log's lock\n");
      }
    }
    const Memory after_follow = ReadMemory();
    out["memory"]["rss_after_follow_kb"] = after_follow.rss_kb;
    out["memory"]["hwm_after_follow_kb"] = after_follow.hwm_kb;
  }
  opened->reset();
  if (!o.breakdown) {
    std::fprintf(stderr, "(f) loading breakdown: left out (--no-breakdown)\n");
    std::printf("%s\n", out.dump().c_str());
    std::fflush(stdout);
    return 0;
  }

  // (f) Where loading goes.
  uint64_t records = 0;
  const auto best = [&](PassKind kind) {
    return std::min(LoadPass(path, kind, records), LoadPass(path, kind, records));
  };
  const double decode_ms = best(PassKind::kDecode);
  const double parse_ms = best(PassKind::kParseNumbers);
  const double ingest_ms = best(PassKind::kIngest);
  std::fprintf(
      stderr,
      "(f) loading, best of 2 fresh passes: RecordReader (framing + decoding) %.1f ms, + ParseJsonNumber "
      "of every value %.1f ms, + RunModel::Ingest %.1f ms; the session's Work took %.1f ms\n"
      "    so: framing + decoding %.0f%%, number parsing %.0f%%, series storage %.0f%%, the loader's own "
      "%.0f%% of Work\n",
      decode_ms, parse_ms, ingest_ms, work_ms, 100 * decode_ms / work_ms,
      100 * (parse_ms - decode_ms) / work_ms, 100 * (ingest_ms - parse_ms) / work_ms,
      100 * (work_ms - ingest_ms) / work_ms);
  out["load_breakdown"] = {{"decode_ms", decode_ms},
                           {"parse_numbers_ms", parse_ms},
                           {"ingest_ms", ingest_ms},
                           {"work_ms", work_ms}};
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  if (!o.generate.empty()) Generate(o.generate, o.seconds, o.keys);
  if (!o.measure.empty()) return Measure(o);
  return 0;
}
