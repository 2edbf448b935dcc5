// The TPU collector of tpu_collector.hpp.
#include "collectors/tpu/tpu_collector.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/linux/parse/text.hpp"
#include "collectors/linux/run_tree.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;
using tpu::MetricSpec;
using tpu::RuntimeCall;
using tpu::RuntimeCallCode;
using tpu::RuntimeCallError;
using tpu::RuntimeMetricReading;

constexpr double kRelistSeconds = 60;
constexpr double kOwnerScanSeconds = 60;

std::string_view CodeName(RuntimeCallCode code) {
  switch (code) {
    case RuntimeCallCode::kNotFound:
      return "not found";
    case RuntimeCallCode::kUnavailable:
      return "unavailable";
    case RuntimeCallCode::kDeadlineExceeded:
      return "deadline exceeded";
    case RuntimeCallCode::kMalformed:
      return "malformed answer";
    case RuntimeCallCode::kOther:
      return "failed";
  }
  return "failed";
}

// One address of the service.
struct Endpoint {
  std::string address = {};
  std::unique_ptr<tpu::RuntimeMetricsClient> client = {};
  bool listening = false;
  // The names ListSupportedMetrics gave (nullopt: not asked yet, or to be asked again); all names of the
  // registry when the service has no ListSupportedMetrics.
  std::optional<std::set<std::string, std::less<>>> supported = {};
  double listed_at = 0;
  std::set<uint64_t> devices = {};  // the devices its gauges reported last (DeviceOffsets)
};

// Readings of one metric, each with the endpoint it came from.
using Readings = std::map<const MetricSpec*, std::vector<std::pair<size_t, RuntimeMetricReading>>>;

class TpuCollector : public Collector {
 public:
  explicit TpuCollector(TpuOptions options) : options_(std::move(options)) {
    layout_.duty_cycle_fanout = options_.chips.type->duty_cycle_fanout;
    layout_.device_count = options_.chips.device_count();
    layout_.max_device_hbm_bytes = 2.0 * options_.chips.type->hbm_gib * 1024.0 * 1024.0 * 1024.0;
    for (const std::string& address : options_.addresses) endpoints_.push_back({.address = address});
  }

  std::string_view Name() const override { return "tpu"; }

  Status Collect(const Tick& /*tick*/, MetricBatch& out) override {
    if (!started_) Begin();
    tpu::TpuSample sample;
    std::vector<const MetricSpec*> wanted;
    for (const MetricSpec& spec : tpu::MetricSpecs()) {
      if (!ReadFromSdk(spec, sample) && !spec.service_name.empty()) wanted.push_back(&spec);
    }
    std::string trouble;
    Readings readings;
    for (size_t index = 0; index < endpoints_.size(); ++index)
      ReadFromService(index, wanted, readings, trouble);
    const std::vector<uint64_t> offsets = DeviceOffsetsOf(readings);
    for (const MetricSpec* spec : wanted) {
      auto found = readings.find(spec);
      if (found == readings.end()) continue;
      std::vector<tpu::PortReading> ports;
      for (const auto& [endpoint, reading] : found->second) {
        ports.push_back({.reading = &reading, .device_offset = offsets[endpoint]});
      }
      tpu::EmitServiceReadings(*spec, ports, layout_, sample);
    }
    sample.AddHbmMemoryUsage();
    sample.AppendTo(out);
    if (sample.dropped_labels() > 0 && !warned_labels_) {
      warned_labels_ = true;
      Warn(fmt::format("tpu: {} labels left out (at most {} a metric, each at most {} bytes)",
                       sample.dropped_labels(), tpu::kMaxLabelsPerMetric, tpu::kMaxLabelBytes));
    }
    LookForOwners();
    if (sample.size() == 0 && !trouble.empty()) return Error{trouble};
    return OkStatus();
  }

 private:
  void Begin() {
    started_ = true;
    if (options_.publish_metadata)
      options_.publish_metadata(nlohmann::json{{"tpu", DescribeTpuChips(options_.chips)}});
    if (options_.open_sdk) {
      auto sdk = options_.open_sdk();
      if (sdk) {
        sdk_ = std::move(*sdk);
      } else {
        Warn("tpu: libtpu's SDK is not used (the runtime-metrics service is read instead): " + sdk.error());
      }
    }
  }

  double Now() const { return options_.monotonic_seconds(); }

  void Warn(const std::string& message) {
    if (options_.warn) options_.warn(message);
  }

  // The metric from the SDK: the first alias with values (cached once found); whether it gave keys.
  bool ReadFromSdk(const MetricSpec& spec, tpu::TpuSample& sample) {
    if (!sdk_ || spec.sdk_names.empty()) return false;
    auto cached = sdk_aliases_.find(&spec);
    if (cached != sdk_aliases_.end()) {
      auto values = sdk_->ReadMetric(std::string(cached->second));
      return values && tpu::EmitSdkValues(spec, *values, layout_, sample) > 0;
    }
    for (std::string_view alias : spec.sdk_names) {
      auto values = sdk_->ReadMetric(std::string(alias));
      if (!values || values->values.empty()) continue;
      sdk_aliases_.emplace(&spec, alias);
      return tpu::EmitSdkValues(spec, *values, layout_, sample) > 0;
    }
    return false;
  }

  // The client of `endpoint`, made at its first use; false when there is none (said once).
  bool EnsureClient(Endpoint& endpoint) {
    if (endpoint.client) return true;
    if (client_failed_) return false;
    auto client = options_.make_client(endpoint.address);
    if (!client) {
      client_failed_ = true;
      Warn("tpu: the runtime-metrics service cannot be read: " + client.error());
      return false;
    }
    endpoint.client = std::move(*client);
    return true;
  }

  // Each endpoint's device offset this tick, from the devices its gauges reported now (or last).
  std::vector<uint64_t> DeviceOffsetsOf(const Readings& readings) {
    std::vector<std::set<uint64_t>> now(endpoints_.size());
    for (const auto& [spec, answers] : readings) {
      for (const auto& [endpoint, reading] : answers)
        now[endpoint].merge(tpu::ReportedDevices(*spec, reading, layout_));
    }
    std::vector<std::set<uint64_t>> devices;
    for (size_t index = 0; index < endpoints_.size(); ++index) {
      if (!now[index].empty()) endpoints_[index].devices = std::move(now[index]);
      devices.push_back(endpoints_[index].devices);
    }
    return tpu::DeviceOffsets(devices);
  }

  void ReadFromService(size_t index, const std::vector<const MetricSpec*>& wanted, Readings& readings,
                       std::string& trouble) {
    Endpoint& endpoint = endpoints_[index];
    if (wanted.empty() || !EnsureClient(endpoint)) return;
    const bool was_listening = endpoint.listening;
    endpoint.listening = endpoint.client->Listening();
    if (!endpoint.listening) return;  // no workload (yet): normal, and quiet
    if (!was_listening || (endpoint.supported && Now() - endpoint.listed_at >= kRelistSeconds)) {
      endpoint.supported.reset();
    }
    if (!endpoint.supported && !List(endpoint, trouble)) return;
    std::vector<const MetricSpec*> asked;
    std::vector<std::string> names;
    for (const MetricSpec* spec : wanted) {
      if (endpoint.supported->count(spec->service_name) == 0) continue;
      asked.push_back(spec);
      names.emplace_back(spec->service_name);
    }
    if (names.empty()) return;
    auto answers = endpoint.client->GetRuntimeMetrics(names);
    size_t failed = 0;
    std::string first_failure;
    for (size_t i = 0; i < asked.size() && i < answers.size(); ++i) {
      if (auto* reading = std::get_if<RuntimeMetricReading>(&answers[i])) {
        readings[asked[i]].emplace_back(index, std::move(*reading));
        continue;
      }
      const auto& error = std::get<RuntimeCallError>(answers[i]);
      if (error.code == RuntimeCallCode::kNotFound) {
        endpoint.supported->erase(names[i]);  // listed but not served: not asked again until relisted
        continue;
      }
      if (error.code == RuntimeCallCode::kUnavailable) endpoint.listening = false;
      if (failed++ == 0)
        first_failure = fmt::format("{}: {} ({})", names[i], CodeName(error.code), error.message);
    }
    if (failed > 0) {
      const std::string message =
          fmt::format("tpu: the runtime-metrics service at {}: {} of {} metrics failed, {}", endpoint.address,
                      failed, names.size(), first_failure);
      AddTrouble(trouble, message);
      WarnOncePerKind(message, answers);
    }
  }

  bool List(Endpoint& endpoint, std::string& trouble) {
    auto listed = endpoint.client->ListSupportedMetrics();
    endpoint.listed_at = Now();
    if (auto* names = std::get_if<std::vector<std::string>>(&listed)) {
      endpoint.supported.emplace(names->begin(), names->end());
      return true;
    }
    const auto& error = std::get<RuntimeCallError>(listed);
    if (error.code == RuntimeCallCode::kOther || error.code == RuntimeCallCode::kNotFound) {
      // A libtpu without ListSupportedMetrics (UNIMPLEMENTED): every metric of the registry is asked for.
      endpoint.supported.emplace();
      for (const MetricSpec& spec : tpu::MetricSpecs()) {
        if (!spec.service_name.empty()) endpoint.supported->emplace(spec.service_name);
      }
      return true;
    }
    if (error.code == RuntimeCallCode::kUnavailable) endpoint.listening = false;
    const std::string message =
        fmt::format("tpu: the runtime-metrics service at {}: ListSupportedMetrics {} ({})", endpoint.address,
                    CodeName(error.code), error.message);
    AddTrouble(trouble, message);
    if (warned_codes_.insert(error.code).second) Warn(message);
    return false;
  }

  static void AddTrouble(std::string& trouble, const std::string& message) {
    trouble += (trouble.empty() ? "" : "; ") + message;
  }

  void WarnOncePerKind(const std::string& message,
                       const std::vector<RuntimeCall<RuntimeMetricReading>>& answers) {
    for (const auto& answer : answers) {
      const auto* error = std::get_if<RuntimeCallError>(&answer);
      if (error == nullptr || error->code == RuntimeCallCode::kNotFound) continue;
      if (warned_codes_.insert(error->code).second) Warn(message);
      return;
    }
  }

  // The monitored tree's processes holding a TPU device node open: looked for at the first tick and then
  // once a minute, published when they change.
  void LookForOwners() {
    if (!options_.pid || *options_.pid <= 0) return;
    if (owner_scan_at_ && Now() - *owner_scan_at_ < kOwnerScanSeconds) return;
    owner_scan_at_ = Now();
    RunTree tree(options_.paths, options_.pid, options_.whole_tree);
    auto entries = ListDirectory(options_.paths.proc);
    if (!entries) return;
    std::set<long> pids;
    std::set<std::string> nodes;
    tree.BeginLookups();
    for (const std::string& entry : *entries) {
      const auto pid = text::ParseI64(entry);
      if (!pid || *pid <= 0 || !tree.Contains(static_cast<long>(*pid))) continue;
      const fs::path fd_dir = options_.paths.Proc(entry + "/fd");
      auto fds = ListDirectory(fd_dir);
      if (!fds) continue;
      for (const std::string& fd : *fds) {
        std::error_code error;
        const fs::path target = fs::read_symlink(fd_dir / fd, error);
        if (error || !IsTpuDeviceNode(target.string())) continue;
        pids.insert(static_cast<long>(*pid));
        nodes.insert(target.string());
      }
    }
    tree.EndLookups();
    if (pids.empty() || pids == owner_pids_) return;
    owner_pids_ = pids;
    if (!options_.publish_metadata) return;
    nlohmann::json tpu_metadata = DescribeTpuChips(options_.chips);
    tpu_metadata["owner_pids"] = pids;
    tpu_metadata["device_nodes"] = nodes;
    options_.publish_metadata(nlohmann::json{{"tpu", tpu_metadata}});
  }

  TpuOptions options_;
  tpu::DeviceLayout layout_;
  std::vector<Endpoint> endpoints_;
  bool started_ = false;
  std::unique_ptr<tpu::LibtpuSdk> sdk_;
  std::map<const MetricSpec*, std::string_view> sdk_aliases_;
  bool client_failed_ = false;
  std::set<RuntimeCallCode> warned_codes_;
  std::set<long> owner_pids_;
  bool warned_labels_ = false;
  std::optional<double> owner_scan_at_;
};

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

nlohmann::json DescribeTpuChips(const tpu::TpuChips& chips) {
  nlohmann::json description = nlohmann::json::object();
  if (chips.type == nullptr) return description;
  description["name"] = chips.type->name;
  description["hbm_gib"] = chips.type->hbm_gib;
  description["devices_per_chip"] = chips.type->devices_per_chip;
  description["count"] = chips.chip_count;
  if (!chips.other_types.empty()) description["other_types"] = chips.other_types;
  return description;
}

bool IsTpuDeviceNode(std::string_view link_target) {
  for (std::string_view prefix : {"/dev/accel", "/dev/vfio/"}) {
    if (link_target.starts_with(prefix) && AllDigits(link_target.substr(prefix.size()))) return true;
  }
  return false;
}

std::unique_ptr<Collector> MakeTpuCollector(TpuOptions options) {
  return std::make_unique<TpuCollector>(std::move(options));
}

}  // namespace runmon
