// The NVML collector (see nvidia_collector.hpp), kept thin: it opens and initialises the library, walks
// the devices once (nvml_discovery.hpp) and publishes their facts (nvml_metadata.hpp), then each tick
// samples every device still there (nvml_sampling.hpp) and the run's share of it (nvml_process_share.hpp).
// What each NVML answer means is decided in nvml_outcome.hpp; a device that is gone is reported once, in
// the status of the tick it went (the collector shows as degraded from then on), and not asked again.
// This is the layout the other GPU families follow: discovery, sampling, metadata, call outcomes, and the
// run's tree from run_tree.hpp.
#include "collectors/nvidia/nvidia_collector.hpp"

#include <utility>

#include <fmt/format.h>

#include "collectors/linux/run_tree.hpp"
#include "collectors/nvidia/nvml_api.hpp"
#include "collectors/nvidia/nvml_discovery.hpp"
#include "collectors/nvidia/nvml_metadata.hpp"
#include "collectors/nvidia/nvml_process_share.hpp"
#include "collectors/nvidia/nvml_sampling.hpp"

namespace runmon {
namespace {

using nvidia::GpuDevice;

std::string LostMessage(const GpuDevice& device) {
  return fmt::format("GPU {} ({}) is gone ({}); it is no longer sampled", device.key_index,
                     device.identity.uuid, device.health.lost_reason);
}

class NvidiaCollector final : public Collector {
 public:
  NvidiaCollector(std::unique_ptr<nvml::Library> library, NvidiaOptions options)
      : library_(std::move(library)),
        options_(std::move(options)),
        share_(*library_, RunTree(options_.paths, options_.pid, options_.whole_tree)) {}

  ~NvidiaCollector() override {
    const auto free_sample = library_->api().gpm_sample_free;
    if (free_sample == nullptr) return;
    for (auto& device : inventory_.devices) {
      for (auto sample : {device.gpm_previous, device.gpm_current}) {
        if (sample != nullptr) free_sample(sample);
      }
    }
  }

  std::string_view Name() const override { return "nvidia"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (!started_) {
      if (auto status = Start(); !status) return status;
    }
    share_.BeginTick();
    for (auto& device : inventory_.devices) {
      if (device.health.lost) continue;
      const nvidia::DeviceValues values = nvidia::SampleDevice(*library_, device, out);
      share_.Sample(device, values, out);
      if (device.health.lost) lost_reasons_.push_back(LostMessage(device));
    }
    share_.EndTick();
    if (!lost_reasons_.empty()) {
      std::string message;
      for (const auto& reason : lost_reasons_) message += (message.empty() ? "" : "; ") + reason;
      return Error{message};
    }
    return OkStatus();
  }

  Status Start() {
    if (auto status = library_->Init(); !status) return status;
    auto inventory = nvidia::DiscoverDevices(*library_, options_.device_ids, options_.other_vendor_gpus);
    if (!inventory) return Error{inventory.error()};
    inventory_ = std::move(*inventory);
    for (const auto& device : inventory_.devices) {
      if (device.health.lost) lost_reasons_.push_back(LostMessage(device));  // lost during the walk itself
    }
    started_ = true;
    if (options_.publish_metadata) options_.publish_metadata(Metadata());
    return OkStatus();
  }

  nlohmann::json Metadata() const {
    return nvidia::DescribeRunGpus(*library_, inventory_, options_.cuda_visible_devices,
                                   options_.host_gpu_count);
  }

 private:
  std::unique_ptr<nvml::Library> library_;
  NvidiaOptions options_;
  nvidia::ProcessShare share_;
  bool started_ = false;
  nvidia::DeviceInventory inventory_;
  std::vector<std::string> lost_reasons_;
};

}  // namespace

std::unique_ptr<Collector> MakeNvidiaCollector(NvidiaOptions options, std::string* why_not) {
  auto library = nvml::Library::Open(options.library_path);
  if (!library) {
    if (why_not != nullptr) *why_not = library.error();
    return nullptr;
  }
  return std::make_unique<NvidiaCollector>(std::move(*library), std::move(options));
}

Result<nlohmann::json> ProbeNvidiaMetadata(const NvidiaOptions& options) {
  auto library = nvml::Library::Open(options.library_path);
  if (!library) return Error{library.error()};
  NvidiaOptions quiet = options;
  quiet.publish_metadata = nullptr;
  NvidiaCollector collector(std::move(*library), quiet);
  if (auto status = collector.Start(); !status) return Error{status.error()};
  return collector.Metadata();
}

}  // namespace runmon
