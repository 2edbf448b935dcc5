// `runmon leet symon`'s source (see symon_source.hpp).
#include "app/symon_source.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "collectors/builtin.hpp"
#include "core/utf8.hpp"
#include "core/wall_clock.hpp"
#include "runlog/records.hpp"

namespace runmon {
namespace {

constexpr size_t kMaxQueuedSamples = 64;  // a screen that stalls costs the oldest samples, not memory
constexpr size_t kMaxWarnings = 8;

}  // namespace

Result<std::unique_ptr<SymonSource>> SymonSource::Start(const std::string& interval) {
  SamplerFlags flags;
  flags.interval = interval.empty() ? "1s" : interval;
  flags.pid = 0;  // the host alone
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
          runlog::MakeEnvironmentRecord(ProbeHostMetadata(ctx, EnvironmentStrings()), "symon")) {
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
  } catch (const std::system_error& e) {
    return Error{fmt::format("cannot start the sampler: {}", e.what())};
  }
  return source;
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
  std::lock_guard lock(mutex_);
  model.warnings = warnings_;
  return model;
}

bool SymonSource::Apply(tui::ViewAction action, tui::LeetView&) {
  return action != tui::ViewAction::kQuit;
}

}  // namespace runmon
