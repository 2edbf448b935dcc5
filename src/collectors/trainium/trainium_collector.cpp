// The Trainium collector (trainium_collector.hpp). The reader thread parses (with the module's reader) and
// publishes; the lane only takes the latest document, under a lock held for a pointer swap. Warnings from the
// reader thread are queued and written from the lane, once per kind.
#include "collectors/trainium/trainium_collector.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "collectors/linux/run_tree.hpp"
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

// How the reason a hung run is ended with starts; the streaming tool reports that run's end with it.
constexpr std::string_view kHangReasonStart = "no document for ";

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
    EndHungRun(now, since);
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

  // Ends the current run when neither it nor the previous ones have written for the hang threshold, counted
  // from the later of the last document and the first tick that saw this run started; each run at most
  // once (while no run is up, the streaming tool's EndRun does nothing).
  void EndHungRun(double now, double last_document_seconds) {
    if (!tool_) return;
    const int restarts = tool_->restarts();
    if (restarts != restarts_seen_) {
      restarts_seen_ = restarts;
      run_seen_seconds_ = now;
    }
    const double silent_for = now - std::max(last_document_seconds, run_seen_seconds_);
    if (silent_for <= HungAfterSeconds() || ended_run_ == restarts) return;
    ended_run_ = restarts;
    tool_->EndRun(fmt::format("{}{:.0f} s", kHangReasonStart, now - last_document_seconds));
  }

  // On the reader thread.
  Status TakeLine(std::string_view line) {
    auto parsed = options_.reader->Read(line);
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
    const bool hang =
        message.starts_with(fmt::format("{}: {}", options_.command.executable, kHangReasonStart));
    const Trouble trouble = skipped_line ? Trouble::kLine : hang ? Trouble::kHang : Trouble::kExit;
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
  std::mutex mutex_;
  LatestDocument latest_;                                 // guarded by mutex_
  std::vector<std::pair<Trouble, std::string>> pending_;  // guarded by mutex_
  unsigned reported_ = 0;
  int restarts_seen_ = 0;                       // the tool's restart count as the last tick saw it
  double run_seen_seconds_ = started_seconds_;  // when a tick first saw that run
  int ended_run_ = -1;                          // the restart count of the run last ended as hung
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
