// The gc-info source (see ipu_source.hpp): Graphcore's command-line tool, for hosts with the tools but not
// the Python module. A worker thread takes the newest request (one that arrives while a run is under way
// waits for it; older ones are answered by the newer run), lists the devices until a listing has worked
// (the IPUs of a host do not change while it runs), then reads each single IPU's device info; the answer
// is every IPU read, or the first failure when none could be. Each gc-info process has a deadline and an
// output cap (the runner kills its process group past them), and the destructor stops a process under way
// (within 50 ms), so neither a hung gc-info nor shutting down waits out a deadline.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "collectors/ipu/ipu_source.hpp"

namespace runmon::ipu {
namespace {

class GcInfoSource final : public IpuSource {
 public:
  GcInfoSource(RunToolFunction run_tool, ToolCommand command, std::shared_ptr<IpuAnswers> answers,
               GcInfoOptions options)
      : run_tool_(std::move(run_tool)),
        command_(std::move(command)),
        answers_(std::move(answers)),
        options_(options) {
    worker_ = std::thread([this] {
      BlockRequestSignalsOnThisThread();
      Work();
    });
  }

  ~GcInfoSource() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    stop_tool_ = true;
    wake_.notify_one();
    worker_.join();
  }

  std::string_view Name() const override { return "gc-info"; }

  bool Request(uint64_t request) override {
    {
      std::lock_guard lock(mutex_);
      pending_ = request;
    }
    wake_.notify_one();
    return true;
  }

  // Each run has its deadline: a hung gc-info ends by itself.
  void EndRun(const std::string&) override {}

 private:
  void Work() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stopping_ || pending_; });
      if (stopping_) return;
      const uint64_t request = *std::exchange(pending_, std::nullopt);
      lock.unlock();
      answers_->Put({request, ReadDevices()});
      lock.lock();
    }
  }

  Result<std::string> Run(std::vector<std::string> arguments) {
    ToolCommand command = command_;
    command.arguments = std::move(arguments);
    ToolLimits limits;
    limits.deadline_seconds = options_.deadline_seconds;
    limits.max_stdout_bytes = options_.max_stdout_bytes;
    limits.kill_grace_seconds = options_.kill_grace_seconds;
    limits.stop = &stop_tool_;
    auto output = run_tool_(command, limits);
    if (!output.ok()) return Error{output.error()};
    return std::move(output->stdout_text);
  }

  Result<std::vector<IpuDevice>> ReadDevices() {
    if (!listed_) {
      auto listing = Run({"--list-devices"});
      if (!listing.ok()) return Error{listing.error()};
      auto devices = ParseGcInfoDeviceList(*listing);
      if (!devices.ok()) return Error{"gc-info --list-devices: " + devices.error()};
      if (devices->empty()) return Error{"gc-info --list-devices: no IPU"};
      listed_ = std::move(*devices);
    }
    std::vector<IpuDevice> out;
    std::optional<std::string> first_failure;
    for (const GcInfoListedDevice& listed : *listed_) {
      if (stop_tool_) return Error{"gc-info: stopped"};
      const std::string id = fmt::format("{}", listed.id);
      auto info = Run({"-d", id, "--device-info"});
      Result<IpuDevice> device =
          info.ok() ? ParseGcInfoDeviceInfo(*info) : Result<IpuDevice>(Error{info.error()});
      if (!device.ok()) {
        if (!first_failure)
          first_failure = fmt::format("gc-info -d {} --device-info: {}", id, device.error());
        continue;
      }
      if (!device->Field("id")) device->fields.insert(device->fields.begin(), {"id", id});
      out.push_back(std::move(*device));
    }
    if (out.empty() && first_failure) return Error{*first_failure};
    return out;
  }

  const RunToolFunction run_tool_;
  const ToolCommand command_;
  const std::shared_ptr<IpuAnswers> answers_;
  const GcInfoOptions options_;
  std::optional<std::vector<GcInfoListedDevice>> listed_;  // the worker's own

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<uint64_t> pending_;
  std::atomic<bool> stop_tool_{false};  // the runner's stop request (ToolLimits::stop)
  std::thread worker_;
};

}  // namespace

std::unique_ptr<IpuSource> StartGcInfoSource(RunToolFunction run_tool, const std::string& search_path,
                                             std::optional<std::vector<std::string>> environment,
                                             std::shared_ptr<IpuAnswers> answers, GcInfoOptions options) {
  ToolCommand command{
      .executable = "gc-info", .search_path = search_path, .environment = std::move(environment)};
  return std::make_unique<GcInfoSource>(std::move(run_tool), std::move(command), std::move(answers), options);
}

}  // namespace runmon::ipu
