// `runmon leet symon`'s source (see symon_source.hpp).
#include "app/symon_source.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "collectors/builtin.hpp"
#include "collectors/collector_context.hpp"
#include "core/utf8.hpp"
#include "core/wall_clock.hpp"
#include "host/process_environment.hpp"
#include "runlog/records.hpp"

namespace runmon {
namespace {

constexpr size_t kMaxQueuedSamples = 64;  // a screen that stalls costs the oldest samples, not memory
constexpr size_t kMaxWarnings = 8;

}  // namespace

Result<std::unique_ptr<SymonSource>> SymonSource::Start(const std::string& interval) {
  SamplerFlags flags;
  flags.interval = interval.empty() ? "1s" : interval;
  flags.pid = 0;          // the host alone
  flags.per_core = true;  // each core: a heatmap on many-core hosts
  auto settings = flags.Resolve();
  if (!settings) return Error{settings.error()};
  std::unique_ptr<SymonSource> source(new SymonSource());
  const CollectorContext ctx = MakeContext(*settings, flags.Paths());
  const double start = WallSeconds();
  source->label_ = ToValidUtf8(HostName());
  source->model_.Ingest(runlog::MakeRunRecord({.run_id = "symon",
                                               .project = {},
                                               .display_name = source->label_,
                                               .host = source->label_,
                                               .start_time = start,
                                               .tags = {}}));
  if (auto environment =
          runlog::MakeEnvironmentRecord(ProbeHostMetadata(ctx, ProcessEnvironmentStrings()), "symon")) {
    source->model_.Ingest(*environment);
  }
  SymonSource* raw = source.get();
  SamplerOptions options;
  options.interval_seconds = settings->interval_seconds;
  source->sampler_ = std::make_unique<Sampler>(
      BuiltinCollectors(ctx), options,
      [raw](const Sample& sample) {
        wandb::Record record;
        if (!runlog::FillStatsRecord(sample, record)) return;
        std::lock_guard lock(raw->mutex_);
        raw->incoming_.push_back(std::move(record));
        if (raw->incoming_.size() > kMaxQueuedSamples) raw->incoming_.pop_front();
      },
      [raw](const std::string& message) {
        std::lock_guard lock(raw->mutex_);
        if (raw->warnings_.size() < kMaxWarnings) raw->warnings_.push_back(message);
      });
  try {
    source->thread_ = std::thread([raw] { raw->sampler_->Run(); });
    source->gpu_watch_ = std::make_unique<GpuProcessWatch>(
        NvidiaProcessListerFactory(EnvironmentValue(ctx, "RUNMON_NVML_LIBRARY").value_or("")),
        HostProcessOptions{
            .paths = ctx.paths,
            .ticks_per_second = static_cast<double>(std::max(ctx.facts.clock_ticks_per_second, 1L)),
            .page_bytes = static_cast<uint64_t>(std::max(ctx.facts.page_size_bytes, 1L))},
        std::chrono::milliseconds(std::max<int64_t>(1, std::llround(settings->interval_seconds * 1000))));
  } catch (const std::system_error& e) {
    return Error{fmt::format("cannot start the sampler: {}", e.what())};
  }
  return source;
}

void SymonSource::WaitForGpuProcesses(uint64_t listings, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (gpu_watch_->listings() < listings && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

SymonSource::~SymonSource() {
  if (sampler_) sampler_->Stop();
  if (thread_.joinable()) thread_.join();
}

bool SymonSource::Work(Clock::time_point, Clock::duration) {
  std::deque<wandb::Record> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(incoming_);
  }
  for (const auto& record : taken) model_.Ingest(record);
  samples_ += taken.size();
  return !taken.empty();
}

void SymonSource::WaitForSamples(uint64_t samples, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (samples_ < samples && Clock::now() < until) {
    if (!Work(Clock::now(), {})) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

tui::ViewModel SymonSource::BuildViewModel(const tui::LeetView&, double now_seconds) {
  tui::ViewModel model;
  model.mode = tui::LeetMode::kSingleRun;
  model.location = "symon: " + label_;
  model.chart_runs = {&model_};
  model.chart_run_labels = {label_};
  model.overview_run = &model_;
  model.overview_state = runview::RunState::kRunning;
  model.now_seconds = now_seconds;
  model.symon = true;
  shown_gpu_processes_ = gpu_watch_->Latest();
  model.gpu_processes = shown_gpu_processes_.get();
  std::lock_guard lock(mutex_);
  model.warnings = warnings_;
  return model;
}

bool SymonSource::Apply(tui::ViewAction action, tui::LeetView&) {
  return action != tui::ViewAction::kQuit;
}

}  // namespace runmon
