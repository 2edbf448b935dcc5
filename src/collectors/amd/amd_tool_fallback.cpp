// Runs amd-smi or rocm-smi in the background for the AMD family (see amd_tool_fallback.hpp).
#include "collectors/amd/amd_tool_fallback.hpp"

#include <algorithm>
#include <utility>
#include <variant>

#include "collectors/amd/rocm_smi_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "host/child_process.hpp"
#include "host/streaming_tool.hpp"

namespace runmon::amd {
namespace {

ToolCommand ReadingCommand(VendorTool tool) {
  if (tool == VendorTool::kRocmSmi)
    return {.executable = "rocm-smi", .arguments = {"-a", "--showmeminfo", "vram", "gtt", "--json"}};
  // Only the categories the family reads: ecc, pcie and throttle counters cost amd-smi time and say nothing
  // runmon reports. The long names are the same from 6.0 on.
  return {.executable = "amd-smi",
          .arguments = {"metric", "--usage", "--power", "--clock", "--temperature", "--fan", "--energy",
                        "--mem-usage", "--overdrive", "--json"}};
}

}  // namespace

std::string_view VendorToolName(VendorTool tool) {
  return tool == VendorTool::kAmdSmi ? "amd-smi" : "rocm-smi";
}

ToolFallbackOptions ToolFallbackOptions::ForInterval(double interval_seconds) {
  ToolFallbackOptions options;
  options.interval_seconds = interval_seconds;
  options.deadline_seconds = std::clamp(interval_seconds, 1.0, 5.0);
  return options;
}

std::optional<VendorTool> FindVendorTool(const std::string& search_path) {
  for (VendorTool tool : {VendorTool::kAmdSmi, VendorTool::kRocmSmi}) {
    if (std::holds_alternative<std::string>(FindExecutable(VendorToolName(tool), search_path))) return tool;
  }
  return std::nullopt;
}

Result<std::unique_ptr<AmdToolFallback>> AmdToolFallback::Find(
    RunToolFunction run_tool, const std::string& search_path,
    const std::map<std::string, std::string>& environment, ToolFallbackOptions options) {
  const auto tool = FindVendorTool(search_path);
  if (!tool) return Error{"neither amd-smi nor rocm-smi is on PATH (" + search_path + ")"};
  ToolCommand command = ReadingCommand(*tool);
  command.search_path = search_path;
  command.environment = ToolEnvironment(environment);
  return std::make_unique<AmdToolFallback>(*tool, std::move(run_tool), std::move(command), options);
}

AmdToolFallback::AmdToolFallback(VendorTool tool, RunToolFunction run_tool, ToolCommand command,
                                 ToolFallbackOptions options)
    : tool_(tool), run_tool_(std::move(run_tool)), command_(std::move(command)), options_(options) {
  worker_ = std::thread([this] {
    BlockRequestSignalsOnThisThread();
    Work();
  });
}

AmdToolFallback::~AmdToolFallback() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_tool_ = true;
  wake_.notify_one();
  worker_.join();  // a run in flight is stopped by the runner within 50 ms
}

void AmdToolFallback::Request(double now_seconds) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || in_flight_) return;
    if (last_start_ && now_seconds - *last_start_ < options_.interval_seconds) return;
    if (now_seconds < next_allowed_start_) return;
    in_flight_ = true;
    run_started_at_ = now_seconds;
    last_start_ = now_seconds;
  }
  wake_.notify_one();
}

std::optional<ToolReading> AmdToolFallback::Latest(double now_seconds) const {
  std::lock_guard lock(mutex_);
  if (!latest_) return std::nullopt;
  if (now_seconds - latest_->taken_at_seconds > options_.stale_after_intervals * options_.interval_seconds) {
    return std::nullopt;
  }
  return latest_;
}

std::optional<std::string> AmdToolFallback::TakeFailure() {
  std::lock_guard lock(mutex_);
  if (!failure_) return std::nullopt;
  last_taken_ = failure_;
  return std::exchange(failure_, std::nullopt);
}

bool AmdToolFallback::InFlight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void AmdToolFallback::Work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || in_flight_; });
    if (stopping_) return;
    const double started_at = run_started_at_;
    lock.unlock();
    auto cards = RunOnce();
    lock.lock();
    in_flight_ = false;
    if (cards.ok()) {
      latest_ = ToolReading{std::move(*cards), started_at};
      consecutive_failures_ = 0;
      next_allowed_start_ = 0;
      failure_.reset();
      last_taken_.reset();
      continue;
    }
    ++consecutive_failures_;
    const double first_retry = 2 * options_.interval_seconds;
    next_allowed_start_ = started_at + RestartDelaySeconds(consecutive_failures_, first_retry,
                                                           std::max(options_.retry_max_seconds, first_retry));
    if (cards.error() != last_taken_) failure_ = cards.error();
  }
}

Result<std::string> AmdToolFallback::RunCommand(const ToolCommand& command) {
  ToolLimits limits;
  limits.deadline_seconds = options_.deadline_seconds;
  limits.max_stdout_bytes = options_.max_stdout_bytes;
  limits.kill_grace_seconds = options_.kill_grace_seconds;
  limits.stop = &stop_tool_;
  auto output = run_tool_(command, limits);
  if (!output.ok()) return Error{output.error()};
  if (text::Trim(output->stdout_text).empty()) {
    std::string message = command.executable + ": printed nothing";
    if (!output->stderr_tail.empty()) message += ": " + output->stderr_tail;
    return Error{std::move(message)};
  }
  return std::move(output->stdout_text);
}

Result<std::vector<ToolCard>> AmdToolFallback::RunOnce() {
  Result<std::vector<ToolCard>> cards = Error{""};
  if (tool_ == VendorTool::kRocmSmi) {
    auto text = RunCommand(command_);
    if (!text.ok()) return Error{text.error()};
    cards = ParseRocmSmiJson(*text);
  } else {
    if (!amd_smi_list_) {
      ToolCommand list = command_;
      list.arguments = {"list", "--json"};
      auto text = RunCommand(list);
      if (!text.ok()) return Error{text.error()};
      auto entries = ParseAmdSmiListJson(*text);
      if (!entries.ok()) return Error{entries.error()};
      if (entries->empty()) return Error{"amd-smi list: no GPU with a PCI address in its output"};
      amd_smi_list_ = std::move(*entries);
      if (stop_tool_) return Error{"amd-smi: stopped"};  // the metric run is not started on the way out
    }
    auto text = RunCommand(command_);
    if (!text.ok()) return Error{text.error()};
    cards = ParseAmdSmiMetricJson(*text);
    if (cards.ok()) AssignPciBuses(*cards, *amd_smi_list_);
  }
  if (cards.ok() && cards->empty()) return Error{command_.executable + ": no GPU in its output"};
  return cards;
}

}  // namespace runmon::amd
