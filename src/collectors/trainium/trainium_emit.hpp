// A parsed neuron-monitor document as trn.* keys (trainium_metrics.hpp): the run's runtimes' NeuronCore
// utilisation and memory (W&B's keys, summed over the run's runtimes, so that every rank of a torchrun job
// counts), the instance's vCPU and memory figures and each device's ECC counters. Pure: the caller says
// which runtimes are the run's. A value that cannot be true is left out: a utilisation or vCPU share
// outside 0-100 %, host memory above the machine's, device memory above what the instance's devices hold
// (when the document says their size), a used figure above its total, a negative or fractional count.
#pragma once

#include <functional>
#include <optional>

#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "core/sample.hpp"

namespace runmon::trainium {

struct EmitLimits {
  std::optional<double> host_memory_bytes;  // the machine's RAM, when known
};

// Appends the document's keys; `in_run(pid)` says whether a runtime is the run's.
void EmitNeuronDocument(const NeuronDocument& document, const std::function<bool(long pid)>& in_run,
                        const EmitLimits& limits, MetricBatch& out);

}  // namespace runmon::trainium
