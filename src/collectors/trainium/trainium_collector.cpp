// The Trainium collector (trainium_collector.hpp). The reader thread parses and publishes; the lane only
// takes the latest document, under a lock held for a pointer swap. Warnings from the reader thread are
// queued and written from the lane, once per kind.
#include "collectors/trainium/trainium_collector.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "collectors/linux/run_tree.hpp"
#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "collectors/trainium/trainium_metadata.hpp"

namespace runmon {
namespace {

using trainium::NeuronDocument;

// What the reader thread hands over: the latest document and when it came.
struct LatestDocument {
  std::shared_ptr<const NeuronDocument> document;
  double arrived_seconds = 0;
};

// The kinds of trouble reported once each.
enum class Trouble { kExit, kLine, kHang };

class TrainiumCollector : public Collector {
 public:
  explicit TrainiumCollector(TrainiumOptions options)
      : options_(std::move(options)),
        tree_(options_.paths, options_.pid, options_.whole_tree),
        started_seconds_(options_.monotonic_seconds()) {
    tool_ = options_.start_tool(
        options_.command, options_.tool_options, [this](std::string_view line) { return TakeLine(line); },
        [this](const std::string& message) { QueueWarning(message); });
  }

  ~TrainiumCollector() override {
    if (tool_) tool_->Stop();
  }

  std::string_view Name() const override { return "trainium"; }

  Status Collect(const Tick& /*tick*/, MetricBatch& out) override {
    WritePendingWarnings();
    LatestDocument latest;
    {
      std::lock_guard lock(mutex_);
      latest = latest_;
    }
    const double now = options_.monotonic_seconds();
    const double since = latest.document ? latest.arrived_seconds : started_seconds_;
    const double silent_for = now - since;
    if (silent_for > HungAfterSeconds() && ended_run_for_ != since) {
      ended_run_for_ = since;
      const std::string reason = fmt::format("no document for {:.0f} s", silent_for);
      ending_hung_run_ = true;  // the tool's report of this run's end is the hang's
      if (tool_) tool_->EndRun(reason);
    }
    if (!latest.document) {
      if (silent_for > StaleAfterSeconds()) {
        return Error{
            fmt::format("{}: no document yet after {:.0f} s", options_.command.executable, silent_for)};
      }
      return OkStatus();  // neuron-monitor writes its first document after one period
    }
    if (!metadata_published_ && options_.publish_metadata) {
      if (auto metadata = trainium::DescribeTrainium(*latest.document)) {
        options_.publish_metadata(*metadata);
        metadata_published_ = true;
      }
    }
    if (silent_for > StaleAfterSeconds()) {
      return Error{
          fmt::format("{}: its latest document is {:.0f} s old", options_.command.executable, silent_for)};
    }
    tree_.BeginLookups();
    trainium::EmitNeuronDocument(
        *latest.document, [this](long pid) { return !tree_.watching() || tree_.Contains(pid); },
        options_.limits, out);
    tree_.EndLookups();
    return OkStatus();
  }

 private:
  double StaleAfterSeconds() const { return options_.stale_after_seconds; }
  double HungAfterSeconds() const { return options_.hung_after_seconds; }

  // On the reader thread.
  Status TakeLine(std::string_view line) {
    auto parsed = parser_.Parse(line);
    if (!parsed) return Error{parsed.error()};
    auto document = std::make_shared<const NeuronDocument>(std::move(*parsed));
    const double now = options_.monotonic_seconds();
    std::lock_guard lock(mutex_);
    latest_ = {std::move(document), now};
    return OkStatus();
  }

  // On the reader thread: the streaming tool's reports (an exit and its restart, a skipped line).
  void QueueWarning(const std::string& message) {
    const bool skipped_line = message.find(": skipped a line") != std::string::npos;
    const Trouble trouble = skipped_line                       ? Trouble::kLine
                            : ending_hung_run_.exchange(false) ? Trouble::kHang
                                                               : Trouble::kExit;
    std::lock_guard lock(mutex_);
    pending_.emplace_back(trouble, message);
  }

  void WritePendingWarnings() {
    std::vector<std::pair<Trouble, std::string>> pending;
    {
      std::lock_guard lock(mutex_);
      pending.swap(pending_);
    }
    for (auto& [trouble, message] : pending) Report(trouble, message);
  }

  void Report(Trouble trouble, const std::string& message) {
    const auto bit = 1u << static_cast<unsigned>(trouble);
    if ((reported_ & bit) != 0) return;
    reported_ |= bit;
    const char* later = trouble == Trouble::kLine   ? "further bad lines are not reported"
                        : trouble == Trouble::kHang ? "further hangs are not reported"
                                                    : "further restarts are not reported";
    if (options_.warn) options_.warn(fmt::format("{} ({})", message, later));
  }

  TrainiumOptions options_;
  RunTree tree_;
  double started_seconds_;
  trainium::NeuronDocumentParser parser_;  // the reader thread's
  std::mutex mutex_;
  LatestDocument latest_;                                 // guarded by mutex_
  std::vector<std::pair<Trouble, std::string>> pending_;  // guarded by mutex_
  unsigned reported_ = 0;
  double ended_run_for_ = -1;  // the arrival (or start) time the hung tool was last ended for
  std::atomic<bool> ending_hung_run_{false};
  bool metadata_published_ = false;
  std::unique_ptr<StreamingTool> tool_;  // last: stopped (in the destructor) before the rest goes
};

}  // namespace

TrainiumThresholds ThresholdsForPeriod(double period_seconds) {
  return {.stale_after_seconds = 2 * period_seconds + std::min(2.0, period_seconds),
          .hung_after_seconds = std::max(30.0, 5 * period_seconds)};
}

std::unique_ptr<Collector> MakeTrainiumCollector(TrainiumOptions options) {
  return std::make_unique<TrainiumCollector>(std::move(options));
}

}  // namespace runmon
