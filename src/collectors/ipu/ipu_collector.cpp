// The IPU collector and its reader (see ipu_collector.hpp): a request per tick, the answer waited for with
// a bound, the devices of the run kept, and their fields through parse_metric into ipu.{id}.* keys.
#include "collectors/ipu/ipu_collector.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "collectors/ipu/ipu_metrics.hpp"
#include "collectors/linux/parse/text.hpp"
#include "collectors/linux/run_tree.hpp"

namespace runmon {
namespace {

using ipu::IpuDevice;

// Requests that go unanswered in a row (for hung_after_seconds) before the source is ended.
constexpr int kMissedAnswersBeforeEnd = 3;
// How often a request is tried again while the helper is not up yet (it is being started).
constexpr auto kResendPause = std::chrono::milliseconds(10);

// The fields W&B writes on every sample; the others only when a device is first seen.
constexpr std::string_view kVariableFields[] = {
    "average board temp", "average die temp", "clock",
    "ipu power",          "ipu utilisation",  "ipu utilisation (session)"};

bool IsVariable(std::string_view field) {
  return std::find(std::begin(kVariableFields), std::end(kVariableFields), field) !=
         std::end(kVariableFields);
}

// The device's id as a key part: a plain number; nullopt for a device without one.
std::optional<std::string> DeviceId(const IpuDevice& device) {
  const auto id = device.Field("id");
  if (!id) return std::nullopt;
  const auto number = text::ParseU64(text::Trim(*id));
  if (!number) return std::nullopt;
  return fmt::format("{}", *number);
}

class IpuCollector final : public Collector {
 public:
  explicit IpuCollector(IpuOptions options)
      : options_(std::move(options)),
        reader_(std::move(options_.starters), options_.monotonic_seconds, options_.hung_after_seconds),
        tree_(options_.paths, options_.pid, options_.whole_tree) {}

  std::string_view Name() const override { return "ipu"; }

  Status Collect(const Tick&, MetricBatch& out) override {
    auto devices = reader_.Read(options_.wait_seconds);
    if (reader_.absent_reason()) return OkStatus();  // the module is missing: quietly absent
    if (!devices.ok()) return reader_.starting() ? OkStatus() : Status(Error{devices.error()});
    if (!published_ && options_.publish_metadata) options_.publish_metadata(DescribeIpuDevices(*devices));
    published_ = true;
    tree_.BeginLookups();
    for (const IpuDevice& device : *devices) {
      const auto id = DeviceId(device);
      if (!id || !InRun(device)) continue;
      const bool first_sight = seen_.insert(*id).second;
      for (const auto& [field, value] : device.fields) {
        if (!first_sight && !IsVariable(field)) continue;
        const auto metric = ipu::ParseIpuMetric(field, value);
        if (metric && ipu::IsPossible(*metric))
          out.Add(ipu_metrics::FieldKey(*id, metric->key), metric->value);
      }
    }
    tree_.EndLookups();
    return OkStatus();
  }

  bool Ended() const override { return reader_.absent_reason().has_value(); }

 private:
  // Whether the device belongs to the run: every device when no process is monitored; else one whose user
  // process id is in the monitored tree (an idle device has none).
  bool InRun(const IpuDevice& device) {
    if (!tree_.watching()) return true;
    const auto user = device.Field("user process id");
    if (!user) return false;
    const auto pid = text::ParseI64(text::Trim(*user));
    return pid && *pid > 0 && tree_.Contains(static_cast<long>(*pid));
  }

  IpuOptions options_;
  IpuReader reader_;
  RunTree tree_;
  std::set<std::string> seen_;  // device ids written in full once
  bool published_ = false;
};

}  // namespace

IpuReader::IpuReader(IpuSourceStarters starters, std::function<double()> monotonic_seconds,
                     double hung_after_seconds)
    : starters_(std::move(starters)),
      monotonic_seconds_(std::move(monotonic_seconds)),
      hung_after_seconds_(hung_after_seconds) {
  EnsureSource();  // started now, so that it is up by the first tick
}

bool IpuReader::EnsureSource() {
  if (absent_reason_) return false;
  if (source_ && !answers_->MissingModule()) return true;
  std::optional<std::string> missing = answers_ ? answers_->MissingModule() : std::nullopt;
  source_.reset();
  answers_ = std::make_shared<ipu::IpuAnswers>();
  missed_in_a_row_ = 0;
  unanswered_since_.reset();
  if (!missing && starters_.helper) {
    source_ = starters_.helper(answers_);
  } else if (!on_gc_info_ && starters_.gc_info) {
    on_gc_info_ = true;
    source_ = starters_.gc_info(answers_);
  }
  if (!source_) absent_reason_ = missing.value_or("no source of IPU data");
  return source_ != nullptr;
}

void IpuReader::NoteMissedAnswer(double asked_at) {
  ++missed_in_a_row_;
  if (!unanswered_since_) unanswered_since_ = asked_at;
  const double silent_seconds = monotonic_seconds_() - *unanswered_since_;
  if (missed_in_a_row_ < kMissedAnswersBeforeEnd || silent_seconds < hung_after_seconds_) return;
  source_->EndRun(fmt::format("no answer for {:.0f} s", silent_seconds));
  missed_in_a_row_ = 0;
  unanswered_since_.reset();
}

Result<std::vector<IpuDevice>> IpuReader::Read(double wait_seconds) {
  const double deadline = monotonic_seconds_() + wait_seconds;
  // Twice at most: the helper may say the module is missing while this read waits, and gc-info answers
  // in the time that is left.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!EnsureSource()) return Error{*absent_reason_};
    const double asked_at = monotonic_seconds_();
    const uint64_t request = ++last_request_;
    bool sent = source_->Request(request);
    while (!sent && monotonic_seconds_() < deadline && !answers_->MissingModule()) {
      std::this_thread::sleep_for(kResendPause);
      sent = source_->Request(request);
    }
    if (answers_->MissingModule()) continue;
    if (!sent) return Error{fmt::format("{}: not running (it is being started again)", source_->Name())};
    auto answer = answers_->WaitFor(request, std::max(0.0, deadline - monotonic_seconds_()));
    if (answers_->MissingModule()) continue;
    if (!answer) {
      NoteMissedAnswer(asked_at);
      return Error{fmt::format("{}: no answer within {:.3g} s", source_->Name(), wait_seconds)};
    }
    missed_in_a_row_ = 0;
    unanswered_since_.reset();
    return std::move(answer->devices);
  }
  if (!EnsureSource()) return Error{*absent_reason_};
  return Error{fmt::format("{}: no answer within {:.3g} s", source_->Name(), wait_seconds)};
}

void SetIpuWaits(IpuOptions& options, double interval_seconds) {
  options.wait_seconds = std::min(interval_seconds / 2, 2.0);
  options.hung_after_seconds = std::max(3 * interval_seconds, 10.0);
}

std::unique_ptr<Collector> MakeIpuCollector(IpuOptions options) {
  return std::make_unique<IpuCollector>(std::move(options));
}

nlohmann::json DescribeIpuDevices(const std::vector<IpuDevice>& devices) {
  nlohmann::json listed = nlohmann::json::array();
  for (size_t i = 0; i < devices.size(); ++i) {
    const IpuDevice& device = devices[i];
    const auto id = device.Field("id");
    const auto index = device.Field("board ipu index");
    const auto type = device.Field("board type");
    listed.push_back({{"id", id ? nlohmann::json(std::string(*id)) : nlohmann::json(i)},
                      {"board ipu index", index ? nlohmann::json(std::string(*index)) : nlohmann::json()},
                      {"board type", type && !type->empty() ? std::string(*type) : std::string("unknown")}});
  }
  return {
      {"ipu", {{"device_count", devices.size()}, {"devices", std::move(listed)}, {"vendor", "Graphcore"}}}};
}

}  // namespace runmon
