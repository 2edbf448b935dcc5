// What `runmon leet symon` shows: this machine, live, with no run. runmon's own sampler (every collector
// family, the host alone: no process metrics) runs in-process on a thread of its own at the interval; its
// samples, as the stats records a run log would hold, go to the loop's thread through a small queue and
// into one RunModel there, so the view reads the model on the thread that draws it and the sampler never
// waits for the screen. The model starts with a run record (the host's name) and the host's environment, so
// the overview shows the machine. The GPUs' processes are listed on a thread of their own at the same
// interval (gpu_process_watch.hpp) and each view model points at the latest listing (gpu_processes), so a
// driver call that hangs never holds the screen. It has the interface of LeetSession (Work, loading,
// BuildViewModel, Apply) for leet's loop.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/gpu_process_watch.hpp"
#include "core/result.hpp"
#include "runlog/wandb_record.pb.h"
#include "runview/run_model.hpp"
#include "sampler/sampler.hpp"
#include "tui/view.hpp"

namespace runmon {

class SymonSource {
 public:
  using Clock = std::chrono::steady_clock;

  // `interval` as --interval takes it ("1s", "500ms", "2"); empty: 1 s.
  static Result<std::unique_ptr<SymonSource>> Start(const std::string& interval);
  ~SymonSource();
  SymonSource(const SymonSource&) = delete;
  SymonSource& operator=(const SymonSource&) = delete;

  // Takes the samples that came; true when there were any.
  bool Work(Clock::time_point now, Clock::duration budget);
  bool loading() const { return false; }
  tui::ViewModel BuildViewModel(const tui::LeetView& view, double now_seconds);
  bool Apply(tui::ViewAction action, tui::LeetView& view);
  // Waits until `samples` samples have come (or `limit` passed): for --print-frame.
  void WaitForSamples(uint64_t samples, std::chrono::milliseconds limit);
  // Waits until the GPUs' processes were listed `listings` times (or `limit` passed): for --print-frame.
  void WaitForGpuProcesses(uint64_t listings, std::chrono::milliseconds limit);
  // The latest listing of the GPUs' processes (null before the first); what BuildViewModel points at.
  std::shared_ptr<const tui::GpuProcessSnapshot> gpu_processes() const { return gpu_watch_->Latest(); }

 private:
  SymonSource() = default;

  runview::RunModel model_;
  std::string label_;
  uint64_t samples_ = 0;
  std::mutex mutex_;  // guards incoming_ and warnings_
  std::deque<wandb::Record> incoming_;
  std::vector<std::string> warnings_;
  std::unique_ptr<Sampler> sampler_;
  std::thread thread_;
  std::unique_ptr<GpuProcessWatch> gpu_watch_;
  std::shared_ptr<const tui::GpuProcessSnapshot> shown_gpu_processes_;  // kept alive for the view model
};

}  // namespace runmon
