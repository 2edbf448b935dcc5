// The GPU process table's data for `runmon leet symon`: on a thread of its own, at the symon interval, the
// GPUs' processes (a gpu::GpuProcessLister; NVIDIA's today) joined with what the host knows about each
// (HostProcessReader: user, CPU %, RSS, command line, the `runmon run` it belongs to) into a
// tui::GpuProcessSnapshot. The screen takes the latest snapshot without waiting: a driver call that hangs
// holds only this thread, and the screen keeps showing the last snapshot meanwhile. A GPU process the host
// cannot see (it exited between the two reads, or lives in another PID namespace) is left out.
// The lister is made on the thread too (loading NVML and nvmlInit can block); when it cannot be made, the
// snapshot says why and making it is tried again every 30 s (a driver loaded later is found).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "collectors/gpu/gpu_processes.hpp"
#include "collectors/linux/host_process_reader.hpp"
#include "core/result.hpp"
#include "tui/process_table.hpp"

namespace runmon {

// The rows of a snapshot: each listed GPU process the host knows, with its host facts.
tui::GpuProcessSnapshot JoinGpuProcesses(const gpu::GpuProcessListing& listing,
                                         const std::map<long, HostProcess>& host);

class GpuProcessWatch {
 public:
  // Makes the lister; the error is the snapshot's unavailable reason ("no NVIDIA GPU (...)", "NVML cannot
  // list processes: ..."). A lister that lists no device at all makes "no NVIDIA GPU" too.
  using ListerFactory = std::function<Result<std::unique_ptr<gpu::GpuProcessLister>>()>;

  GpuProcessWatch(ListerFactory make_lister, HostProcessOptions host, std::chrono::milliseconds interval);
  // Stops the thread; one stuck in the driver is left to finish on its own (it keeps what it uses alive).
  ~GpuProcessWatch();
  GpuProcessWatch(const GpuProcessWatch&) = delete;
  GpuProcessWatch& operator=(const GpuProcessWatch&) = delete;

  // The latest snapshot (null before the first listing). Never blocks on the lister.
  std::shared_ptr<const tui::GpuProcessSnapshot> Latest() const;
  // Listings made so far.
  uint64_t listings() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

// The NVIDIA lister at `library_path` (empty: libnvidia-ml.so.1), with the reasons worded for the table.
GpuProcessWatch::ListerFactory NvidiaProcessListerFactory(std::string library_path);

}  // namespace runmon
