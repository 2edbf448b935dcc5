// The GPU process table's data (see gpu_process_watch.hpp).
#include "app/gpu_process_watch.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "collectors/nvidia/nvml_process_list.hpp"

namespace runmon {
namespace {

constexpr auto kRetryLister = std::chrono::seconds(30);
constexpr auto kStopWait = std::chrono::seconds(2);

}  // namespace

struct GpuProcessWatch::Shared {
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  bool done = false;
  std::condition_variable finished;
  std::shared_ptr<const tui::GpuProcessSnapshot> latest;
  uint64_t listings = 0;

  void Publish(tui::GpuProcessSnapshot snapshot) {
    auto shared = std::make_shared<const tui::GpuProcessSnapshot>(std::move(snapshot));
    std::lock_guard lock(mutex);
    latest = std::move(shared);
    ++listings;
  }
  // Waits `period` or until stopped; false when stopped.
  bool Sleep(std::chrono::steady_clock::duration period) {
    std::unique_lock lock(mutex);
    return !wake.wait_for(lock, period, [&] { return stop; });
  }
};

tui::GpuProcessSnapshot JoinGpuProcesses(const gpu::GpuProcessListing& listing,
                                         const std::map<long, HostProcess>& host) {
  tui::GpuProcessSnapshot snapshot;
  snapshot.available = true;
  snapshot.problems = listing.problems;
  for (const gpu::GpuProcess& process : listing.processes) {
    const auto it = host.find(process.pid);
    if (it == host.end()) continue;
    const HostProcess& facts = it->second;
    tui::GpuProcessRow row;
    row.gpu = process.device_index;
    row.pid = process.pid;
    row.user = facts.user;
    row.gpu_memory_bytes = process.memory_bytes;
    row.sm_percent = process.sm_percent;
    row.cpu_percent = facts.cpu_percent;
    row.rss_bytes = facts.rss_bytes;
    row.command = facts.command;
    if (facts.run) {
      row.in_run = true;
      row.run_child_pid = facts.run->child_pid;
      row.run_command = facts.run->child_command;
    }
    snapshot.rows.push_back(std::move(row));
  }
  return snapshot;
}

GpuProcessWatch::GpuProcessWatch(ListerFactory make_lister, HostProcessOptions host,
                                 std::chrono::milliseconds interval)
    : shared_(std::make_shared<Shared>()) {
  // The thread owns the lister and the reader and shares only `Shared`, so it may outlive this object.
  std::thread([shared = shared_, make_lister = std::move(make_lister),
               reader = HostProcessReader(std::move(host)), interval]() mutable {
    std::unique_ptr<gpu::GpuProcessLister> lister;
    std::string why_not;
    auto next_attempt = std::chrono::steady_clock::time_point::min();
    for (bool running = true; running; running = shared->Sleep(interval)) {
      const auto now = std::chrono::steady_clock::now();
      if (!lister && now >= next_attempt) {
        auto made = make_lister();
        if (made) {
          lister = std::move(*made);
        } else {
          why_not = made.error();
          next_attempt = now + kRetryLister;
        }
      }
      if (!lister) {
        tui::GpuProcessSnapshot snapshot;
        snapshot.unavailable_reason = why_not;
        shared->Publish(std::move(snapshot));
        continue;
      }
      const gpu::GpuProcessListing listing = lister->List();
      std::vector<long> pids;
      for (const auto& process : listing.processes) pids.push_back(process.pid);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      shared->Publish(JoinGpuProcesses(listing, reader.Read(pids, seconds)));
    }
    std::lock_guard lock(shared->mutex);
    shared->done = true;
    shared->finished.notify_all();
  }).detach();
}

GpuProcessWatch::~GpuProcessWatch() {
  std::unique_lock lock(shared_->mutex);
  shared_->stop = true;
  shared_->wake.notify_all();
  shared_->finished.wait_for(lock, kStopWait, [&] { return shared_->done; });
}

std::shared_ptr<const tui::GpuProcessSnapshot> GpuProcessWatch::Latest() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->latest;
}

uint64_t GpuProcessWatch::listings() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->listings;
}

GpuProcessWatch::ListerFactory NvidiaProcessListerFactory(std::string library_path) {
  return [path = std::move(library_path)]() -> Result<std::unique_ptr<gpu::GpuProcessLister>> {
    auto library = nvml::Library::Open(path);
    if (!library) return Error{"no NVIDIA GPU (" + library.error() + ")"};
    auto lister = nvidia::NvmlProcessLister::Start(std::move(*library));
    if (!lister) return Error{"NVML cannot list processes: " + lister.error()};
    if ((*lister)->device_count() == 0) return Error{"no NVIDIA GPU"};
    return std::unique_ptr<gpu::GpuProcessLister>(std::move(*lister));
  };
}

}  // namespace runmon
