// The Trainium (and Inferentia) collector: one neuron-monitor for the whole run, started with the collector
// and ended with it, read on the streaming tool's own thread (host/streaming_tool.hpp), so a slow, silent or
// hung neuron-monitor never delays this lane or any other. Each line is parsed there as it arrives
// (neuron_monitor_parse.hpp) and kept as the latest document; every tick emits the latest one
// (trainium_emit.hpp) for the runtimes whose pid is the monitored process or one of its descendants
// (collectors/linux/run_tree.hpp), or every runtime when no process is monitored. A document older than
// `stale_after_seconds` is not used: the tick has no trn.* keys and says why. neuron-monitor that has
// written nothing for `hung_after_seconds` is ended and started again (the streaming tool's backoff); one
// that exits is started again the same way. Each kind of trouble (an exit, a skipped line, a hang) is
// reported once per run. The metadata is published with the first document that has the hardware section.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collectors/collector.hpp"
#include "collectors/trainium/neuron_document_reader.hpp"
#include "collectors/trainium/trainium_emit.hpp"
#include "host/host_paths.hpp"
#include "host/streaming_tool.hpp"

namespace runmon {

struct TrainiumOptions {
  ToolCommand command;                                     // neuron-monitor -c CONFIG
  std::shared_ptr<trainium::NeuronDocumentReader> reader;  // the parser (the module's, or linked in)
  StreamingToolOptions tool_options;
  std::function<std::unique_ptr<StreamingTool>(ToolCommand, StreamingToolOptions, StreamingTool::LineHandler,
                                               StreamingTool::WarningHandler)>
      start_tool;
  double stale_after_seconds = 4;  // TrainiumThresholds
  double hung_after_seconds = 30;
  HostPaths paths;
  std::optional<long> pid;  // the monitored process
  bool whole_tree = true;
  trainium::EmitLimits limits;
  std::function<double()> monotonic_seconds;
  std::function<void(const nlohmann::json&)> publish_metadata;
  std::function<void(const std::string&)> warn;
  // Kept alive as long as the collector (the private config file); destroyed after the tool has stopped.
  std::shared_ptr<void> keep_alive;
};

// For neuron-monitor's period: a document is current for two periods plus a period's slack (at most 2 s)
// for its own collection time; a neuron-monitor silent for five periods, and at least 30 s, is hung.
struct TrainiumThresholds {
  double stale_after_seconds;
  double hung_after_seconds;
};
TrainiumThresholds ThresholdsForPeriod(double period_seconds);

// Starts neuron-monitor at once.
std::unique_ptr<Collector> MakeTrainiumCollector(TrainiumOptions options);

}  // namespace runmon
