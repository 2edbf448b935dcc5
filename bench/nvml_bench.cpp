// nvml_bench: CPU time per sample and per device of the NVIDIA collector, against the fake
// libnvidia-ml.so.1 (tests/fakes/nvml), split into NVML's own share and runmon's overhead.
//
// For each device count (1, 8, 64 by default) and each layout of the processes every GPU lists (none; two
// outside the monitored tree, PID 1 and this process's parent; the same two plus three of the tree), it
// writes a scenario, builds the collector with MakeNvidiaCollector (the real dlopen path, the monitored
// tree rooted at this process, the real /proc), takes two warm-up samples and then N samples paced on a
// grid (default every 0.12 s, so every sample also computes GPM metrics, which need > 100 ms between two
// GPM samples). Each Collect is timed with CLOCK_THREAD_CPUTIME_ID.
//
// NVML's share is measured the same way by a replay that makes the same NVML calls, in the same order, on
// the same fake, straight through the function pointers (nvml::Library: dlopen + dlsym), with the same
// pacing and the same GPM rule; the fake's call counters check that the replay made as many calls as the
// collector did. runmon's overhead = collector - replay: key strings, the batch, tree membership (each
// listed process's parent chain read from /proc), bookkeeping. Target (the issue's): at most 50 µs per
// device.
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/nvidia/nvidia_collector.hpp"
#include "collectors/nvidia/nvml_api.hpp"

extern char** environ;

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace nvml = runmon::nvml;

struct Options {
  std::string fake = RUNMON_FAKE_NVML_FULL_PATH;
  std::vector<unsigned> devices = {1, 8, 64};
  uint64_t samples = 25;
  double interval = 0.12;
  double target_us = 50;
  bool json = false;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr,
               "nvml_bench: %s\n"
               "usage: nvml_bench [--fake PATH] [--devices 1,8,64] [--samples N] [--interval SECONDS]\n"
               "                  [--target-us US] [--json]\n",
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
      if (arg == "--fake") {
        o.fake = value();
      } else if (arg == "--devices") {
        o.devices.clear();
        const std::string list = value();
        size_t start = 0;
        while (start <= list.size()) {
          const size_t comma = std::min(list.find(',', start), list.size());
          o.devices.push_back(static_cast<unsigned>(std::stoul(list.substr(start, comma - start))));
          start = comma + 1;
        }
      } else if (arg == "--samples") {
        o.samples = std::stoull(value());
      } else if (arg == "--interval") {
        o.interval = std::stod(value());
      } else if (arg == "--target-us") {
        o.target_us = std::stod(value());
      } else if (arg == "--json") {
        o.json = true;
      } else {
        Usage(fmt::format("unknown argument '{}'", arg));
      }
    } catch (const std::exception&) {
      Usage(fmt::format("bad value for {}", arg));
    }
  }
  if (o.samples == 0) Usage("--samples must be at least 1");
  if (o.devices.empty() || std::find(o.devices.begin(), o.devices.end(), 0u) != o.devices.end())
    Usage("--devices: counts of at least 1");
  if (o.interval < 0) Usage("--interval must not be negative");
  return o;
}

double ThreadCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Processes for the tree layout: this process (the root) and two children of it; unrelated: PID 1 and our
// parent.
struct Pids {
  long root = 0;
  std::vector<long> children;
  std::vector<long> unrelated;
};

long SpawnSleeper() {
  pid_t pid = 0;
  char sleep_name[] = "sleep";
  char seconds[] = "600";
  char* args[] = {sleep_name, seconds, nullptr};
  if (::posix_spawnp(&pid, "sleep", nullptr, nullptr, args, environ) != 0) {
    std::fprintf(stderr, "nvml_bench: cannot start sleep\n");
    std::exit(1);
  }
  return pid;
}

// Which processes every GPU lists.
enum class Layout { kNone, kOthers, kTree };

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kNone:
      return "none";
    case Layout::kOthers:
      return "others";
    case Layout::kTree:
      return "tree+others";
  }
  return "?";
}

Json Device(unsigned index, const Pids& pids, Layout layout) {
  Json compute = Json::array();
  Json graphics = Json::array();
  Json utilization = Json::array();
  const unsigned long long mib = 1ull << 20;
  auto add = [&](Json& list, long pid, unsigned long long memory) {
    list.push_back({{"pid", pid}, {"used_memory", memory}});
    utilization.push_back({{"pid", pid}, {"sm", 10}, {"mem", 5}, {"timestamp", "now"}});
  };
  if (layout != Layout::kNone) {
    for (long pid : pids.unrelated) add(compute, pid, 512 * mib);
  }
  if (layout == Layout::kTree) {
    add(compute, pids.root, 2048 * mib);
    add(compute, pids.children[0], 1024 * mib);
    add(graphics, pids.children[1], 256 * mib);
    graphics.push_back({{"pid", pids.children[0]}, {"used_memory", 1024 * mib}});  // in both lists
  }
  return Json{
      {"name", "NVIDIA H100 80GB HBM3"},
      {"uuid", fmt::format("GPU-{:08x}-91c4-4d1e-b7f3-0c2a9e4d7f11", 0x5b6f2a00u + index)},
      {"pci", {{"bus_id", fmt::format("00000000:{:02X}:00.0", (0x10 + index) & 0xFF)}}},
      {"architecture", "HOPPER"},
      {"cuda_cores", 16896},
      {"memory", {{"total", 85520809984ull}, {"reserved", 567279616ull}, {"used", 42949672960ull}}},
      {"utilization", {{"gpu", 97}, {"memory", 61}}},
      {"temperature", 54},
      {"power_mw", 612345},
      {"power_limit_mw", 700000},
      {"energy_mj", 183245120ull},
      {"clocks", {{"graphics", 1980}, {"sm", 1980}, {"mem", 2619}, {"video", 1545}}},
      {"ecc", {{"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
      {"encoder", {{"utilization", 0}}},
      {"fan_speed", 45},
      {"clocks_event_reasons", 4},
      {"compute_processes", compute},
      {"graphics_processes", graphics},
      {"process_utilization", utilization},
      {"gpm",
       {{"supported", true},
        {"metrics",
         {{"2", 93.2},
          {"3", 61.0},
          {"5", 71.3},
          {"7", 70.8},
          {"10", 58.7},
          {"11", 0.0},
          {"12", 12.5},
          {"13", 2.2},
          {"20", 1520.5},
          {"21", 880.25},
          {"60", 24576.0},
          {"61", 24310.0}}}}},
      {"mig", {{"current", 0}, {"pending", 0}}},
  };
}

// The NVML functions the collector calls on every sample, for the call-count check.
constexpr const char* kPerSampleFunctions[] = {"nvmlDeviceGetUtilizationRates",
                                               "nvmlDeviceGetMemoryInfo_v2",
                                               "nvmlDeviceGetTemperature",
                                               "nvmlDeviceGetPowerUsage",
                                               "nvmlDeviceGetEnforcedPowerLimit",
                                               "nvmlDeviceGetClockInfo",
                                               "nvmlDeviceGetMemoryErrorCounter",
                                               "nvmlDeviceGetEncoderUtilization",
                                               "nvmlDeviceGetFanSpeed_v2",
                                               "nvmlDeviceGetCurrentClocksEventReasons",
                                               "nvmlDeviceGetTotalEnergyConsumption",
                                               "nvmlGpmSampleGet",
                                               "nvmlGpmMetricsGet",
                                               "nvmlDeviceGetComputeRunningProcesses_v3",
                                               "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                               "nvmlDeviceGetProcessUtilization"};

class FakeCounters {
 public:
  explicit FakeCounters(const std::string& path) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      count_ = reinterpret_cast<Count>(::dlsym(handle, "fake_nvml_call_count"));
      reset_ = reinterpret_cast<Reset>(::dlsym(handle, "fake_nvml_reset"));
    }
    if (count_ == nullptr || reset_ == nullptr) {
      std::fprintf(stderr, "nvml_bench: %s is not the fake NVML (no fake_nvml_call_count)\n", path.c_str());
      std::exit(1);
    }
  }
  unsigned long long Total(unsigned devices) const {
    unsigned long long total = 0;
    for (unsigned d = 0; d < devices; ++d) {
      for (const char* function : kPerSampleFunctions) total += count_(function, d);
    }
    return total;
  }
  void ResetState() const { reset_(); }

 private:
  using Count = unsigned long long (*)(const char*, unsigned);
  using Reset = void (*)();
  Count count_ = nullptr;
  Reset reset_ = nullptr;
};

// The collector's NVML calls for one sample, in its order (nvml_sampling.cpp SampleDevice, then
// nvml_process_share.cpp), made directly: what NVML itself costs, with none of runmon's work around it.
class Replay {
 public:
  Replay(std::unique_ptr<nvml::Library> library, unsigned devices, bool tree_on_gpu)
      : library_(std::move(library)), api_(library_->api()), tree_on_gpu_(tree_on_gpu) {
    for (unsigned i = 0; i < devices; ++i) {
      Device device;
      if (api_.device_get_handle_by_index(i, &device.handle) != nvml::kSuccess) {
        std::fprintf(stderr, "nvml_bench: no handle for device %u\n", i);
        std::exit(1);
      }
      api_.gpm_sample_alloc(&device.previous);
      api_.gpm_sample_alloc(&device.current);
      devices_.push_back(device);
    }
  }
  ~Replay() {
    for (auto& device : devices_) {
      api_.gpm_sample_free(device.previous);
      api_.gpm_sample_free(device.current);
    }
  }
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  void Sample() {
    for (auto& d : devices_) {
      nvml::Utilization utilization{};
      api_.device_get_utilization_rates(d.handle, &utilization);
      nvml::MemoryV2 memory{};
      memory.version = nvml::kMemoryV2Version;
      api_.device_get_memory_info_v2(d.handle, &memory);
      unsigned value = 0;
      api_.device_get_temperature(d.handle, nvml::kTemperatureGpu, &value);
      api_.device_get_power_usage(d.handle, &value);
      api_.device_get_enforced_power_limit(d.handle, &value);
      for (unsigned clock : {nvml::kClockSm, nvml::kClockMem, nvml::kClockGraphics})
        api_.device_get_clock_info(d.handle, clock, &value);
      unsigned long long count = 0;
      for (unsigned type : {nvml::kMemoryErrorCorrected, nvml::kMemoryErrorUncorrected})
        api_.device_get_memory_error_counter(d.handle, type, nvml::kVolatileEcc, nvml::kMemoryLocationDevice,
                                             &count);
      unsigned period = 0;
      api_.device_get_encoder_utilization(d.handle, &value, &period);
      api_.device_get_fan_speed_v2(d.handle, 0, &value);
      api_.device_get_clocks_event_reasons(d.handle, &count);
      api_.device_get_total_energy_consumption(d.handle, &count);
      // GPM, rolling, with the collector's rule: compare with the previous sample once > 100 ms apart.
      api_.gpm_sample_get(d.handle, d.current);
      const auto now = Clock::now();
      const bool have_previous = d.previous_time.time_since_epoch().count() != 0;
      if (have_previous && now - d.previous_time > std::chrono::milliseconds(100)) {
        nvml::GpmMetricsGet request{};
        request.version = 1;
        request.num_metrics = 12;
        request.sample1 = d.previous;
        request.sample2 = d.current;
        for (unsigned i = 0; i < 12; ++i) request.metrics[i].metric_id = kGpmIds[i];
        api_.gpm_metrics_get(&request);
      }
      if (!have_previous || now - d.previous_time > std::chrono::milliseconds(100)) {
        std::swap(d.previous, d.current);
        d.previous_time = now;
      }
      // Both process lists (the monitored tree is always set); process utilisation only when the tree has
      // a process on the GPU.
      unsigned n = static_cast<unsigned>(process_buffer_.size());
      api_.device_get_compute_running_processes(d.handle, &n, process_buffer_.data());
      n = static_cast<unsigned>(process_buffer_.size());
      api_.device_get_graphics_running_processes(d.handle, &n, process_buffer_.data());
      if (!tree_on_gpu_) continue;
      unsigned samples = 0;
      api_.device_get_process_utilization(d.handle, nullptr, &samples, d.seen_us);
      utilization_buffer_.resize(samples + 16);
      samples = static_cast<unsigned>(utilization_buffer_.size());
      if (api_.device_get_process_utilization(d.handle, utilization_buffer_.data(), &samples, d.seen_us) ==
          nvml::kSuccess) {
        for (unsigned i = 0; i < samples; ++i)
          d.seen_us = std::max(d.seen_us, utilization_buffer_[i].timestamp);
      }
    }
  }

 private:
  static constexpr unsigned kGpmIds[12] = {2, 3, 5, 10, 11, 12, 13, 7, 20, 21, 61, 60};
  struct Device {
    nvml::Device handle = nullptr;
    nvml::GpmSample previous = nullptr;
    nvml::GpmSample current = nullptr;
    Clock::time_point previous_time;
    unsigned long long seen_us = 0;
  };
  std::unique_ptr<nvml::Library> library_;
  const nvml::Functions& api_;
  bool tree_on_gpu_;
  std::vector<Device> devices_;
  std::vector<nvml::ProcessInfo> process_buffer_ = std::vector<nvml::ProcessInfo>(64);
  std::vector<nvml::ProcessUtilizationSample> utilization_buffer_;
};

// Runs `sample` N times on the pacing grid after `warmup` untimed calls; the thread CPU seconds of the N.
template <typename Sample>
double Paced(const Options& o, int warmup, Sample&& sample) {
  for (int i = 0; i < warmup; ++i) {
    sample();
    if (o.interval > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
  }
  double cpu = 0;
  const auto start = Clock::now();
  for (uint64_t i = 0; i < o.samples; ++i) {
    if (o.interval > 0) {
      std::this_thread::sleep_until(start +
                                    std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.interval * static_cast<double>(i))));
    }
    const double before = ThreadCpuSeconds();
    sample();
    cpu += ThreadCpuSeconds() - before;
  }
  return cpu;
}

struct Figures {
  unsigned devices = 0;
  Layout layout = Layout::kNone;
  double total_us = 0;  // per sample and device
  double nvml_us = 0;
  double overhead_us = 0;
  double collector_calls = 0;  // NVML calls per sample
  double replay_calls = 0;
  size_t keys = 0;
  uint64_t failures = 0;
};

Figures Measure(const Options& o, const FakeCounters& counters, const std::filesystem::path& dir,
                const Pids& pids, unsigned devices, Layout layout) {
  Json list = Json::array();
  for (unsigned i = 0; i < devices; ++i) list.push_back(Device(i, pids, layout));
  const std::string path = (dir / fmt::format("scenario-{}-{}.json", devices, LayoutName(layout))).string();
  std::ofstream(path) << Json{
      {"driver_version", "550.90.07"},
      {"cuda_driver_version", 12040},
      {"devices", list}}.dump();
  ::setenv("RUNMON_FAKE_NVML_SCENARIO", path.c_str(), 1);
  counters.ResetState();

  Figures f;
  f.devices = devices;
  f.layout = layout;
  {
    runmon::NvidiaOptions options;
    options.library_path = o.fake;
    options.pid = pids.root;
    options.paths = runmon::HostPaths::System();
    std::string why_not;
    auto collector = runmon::MakeNvidiaCollector(std::move(options), &why_not);
    if (collector == nullptr) {
      std::fprintf(stderr, "nvml_bench: %s\n", why_not.c_str());
      std::exit(1);
    }
    uint64_t index = 0;
    unsigned long long calls_before = 0;
    int calls_marked = 0;
    const double cpu = Paced(o, 2, [&] {
      if (index == 2 && calls_marked++ == 0) calls_before = counters.Total(devices);
      runmon::Tick tick{Clock::now(), 0, index++, false};
      runmon::MetricBatch batch;
      if (!collector->Collect(tick, batch)) ++f.failures;
      f.keys = batch.items().size();
    });
    f.collector_calls =
        static_cast<double>(counters.Total(devices) - calls_before) / static_cast<double>(o.samples);
    f.total_us = cpu / static_cast<double>(o.samples) / devices * 1e6;
  }
  {
    auto library = nvml::Library::Load(o.fake);
    if (!library) {
      std::fprintf(stderr, "nvml_bench: %s\n", library.error().c_str());
      std::exit(1);
    }
    Replay replay(std::move(*library), devices, layout == Layout::kTree);
    unsigned long long calls_before = 0;
    int calls = 0;
    const double cpu = Paced(o, 2, [&] {
      if (calls++ == 2) calls_before = counters.Total(devices);
      replay.Sample();
    });
    f.replay_calls =
        static_cast<double>(counters.Total(devices) - calls_before) / static_cast<double>(o.samples);
    f.nvml_us = cpu / static_cast<double>(o.samples) / devices * 1e6;
  }
  f.overhead_us = f.total_us - f.nvml_us;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  const FakeCounters counters(o.fake);
  std::string pattern = (std::filesystem::temp_directory_path() / "nvml-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "nvml_bench: mkdtemp failed\n");
    return 1;
  }
  const std::filesystem::path dir = pattern;
  Pids pids;
  pids.root = static_cast<long>(::getpid());
  pids.children = {SpawnSleeper(), SpawnSleeper()};
  pids.unrelated = {1, static_cast<long>(::getppid())};

  std::vector<Figures> all;
  for (unsigned devices : o.devices) {
    for (Layout layout : {Layout::kNone, Layout::kOthers, Layout::kTree}) {
      all.push_back(Measure(o, counters, dir, pids, devices, layout));
    }
  }
  for (long child : pids.children) {
    ::kill(static_cast<pid_t>(child), SIGKILL);
    ::waitpid(static_cast<pid_t>(child), nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);

  bool met = true;
  if (!o.json) {
    std::printf(
        "NVIDIA collector against the fake NVML (%s), %llu samples every %g s; CPU µs per sample per "
        "device\n",
        o.fake.c_str(), static_cast<unsigned long long>(o.samples), o.interval);
    std::printf("%8s  %-13s %10s %10s %10s  %-8s %s\n", "devices", "processes", "total", "NVML", "runmon",
                "target", "NVML calls/sample (collector/replay)");
  }
  for (const Figures& f : all) {
    const bool ok = f.overhead_us <= o.target_us;
    met = met && ok;
    if (o.json) {
      std::printf(
          "{\"devices\":%u,\"processes\":\"%s\",\"total_us_per_device\":%.2f,\"nvml_us_per_device\":%.2f,"
          "\"overhead_us_per_device\":%.2f,\"target_us\":%g,\"met\":%s,\"collector_calls\":%.1f,"
          "\"replay_calls\":%.1f,\"keys\":%zu,\"failures\":%llu}\n",
          f.devices, LayoutName(f.layout), f.total_us, f.nvml_us, f.overhead_us, o.target_us,
          ok ? "true" : "false", f.collector_calls, f.replay_calls, f.keys,
          static_cast<unsigned long long>(f.failures));
    } else {
      std::printf("%8u  %-13s %10.1f %10.1f %10.1f  %-8s %.1f/%.1f%s\n", f.devices, LayoutName(f.layout),
                  f.total_us, f.nvml_us, f.overhead_us, ok ? "met" : "MISSED", f.collector_calls,
                  f.replay_calls,
                  std::abs(f.collector_calls - f.replay_calls) < 0.05
                      ? ""
                      : "  (differ: the replay is not the collector's calls)");
    }
    if (f.failures > 0)
      std::fprintf(stderr, "nvml_bench: the collector failed %llu times\n",
                   static_cast<unsigned long long>(f.failures));
  }
  return met ? 0 : 1;
}
