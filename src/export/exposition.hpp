// A sample in the Prometheus text exposition format 0.0.4: one HELP and one TYPE line per family, then its
// series, families in catalog order and series in the sample's order, each with its placeholder label
// and the constant labels (host, run_id, job_id, node_rank). Label values are made valid UTF-8 (a disk path
// or a host name can hold any bytes; Prometheus refuses invalid UTF-8) and escaped, values written in the
// shortest form that reads back as the same double, both by the text format's primitives (prometheus_text/).
// No series carries a timestamp: Prometheus stamps the scrape, and a sample older than the scrape interval
// would otherwise be refused as out of order or duplicated. Keys without a Prometheus name are left out and
// counted (runmon_exporter_unexported_keys).
//
// ExpositionCache holds the text of the latest sample so that a scrape only copies a string: rendering
// happens once per sample, on the sampler's thread, and a scrape never triggers sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/sample.hpp"

namespace runmon {

// Constant labels of every series, in this order; an empty value leaves its label out. job_id and node_rank
// name a distributed job's node (src/cluster/job_identity.hpp): labels of the node, never of a process (no
// PID, rank or step), so a job has as many label sets as nodes.
struct ExpositionLabels {
  std::string host = {};
  std::string run_id = {};
  std::string job_id = {};
  std::string node_rank = {};
};

// `samples_total` is the number of samples taken so far; with 0 the timestamp series is left out (no
// sample yet) and `sample` is ignored.
std::string RenderExposition(const Sample& sample, const ExpositionLabels& labels, uint64_t samples_total);

inline constexpr std::string_view kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

class ExpositionCache {
 public:
  explicit ExpositionCache(ExpositionLabels labels);

  // Takes a sample from the sampler's sink (one caller at a time). A late sample (a lane that missed its
  // tick's deadline) updates and adds its keys to the latest sample instead of replacing it, and is not
  // counted as a sample.
  void Publish(const Sample& sample);
  // The current text; safe from any thread.
  std::shared_ptr<const std::string> Text() const;

 private:
  const ExpositionLabels labels_;
  Sample latest_;         // the publisher's own state
  uint64_t samples_ = 0;  // likewise
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_;  // guarded by mutex_
};

}  // namespace runmon
