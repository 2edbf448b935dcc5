// The remote write of one `runmon run`, and `runmon push`. For every --remote-write URL a RemoteWriter
// (src/remote_write) with its queue under the run directory and a libcurl POST (src/http_client) as its
// transport: the protocol's headers, the user's, and the bearer token read again from its file for every
// request (a token a sidecar rotates keeps working). At the start it also takes up what earlier runs of the
// same log directory left in their queues for the same URLs (a run killed, or ended while the receiver was
// down): those are sent beside the new run's samples, each run with its own labels. At the end every queue
// is drained for at most --remote-write-drain-timeout, and one line per queue says what was sent, dropped
// and left (with the `runmon push` command that sends the rest).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/remote_write_flags.hpp"
#include "collectors/collector_context.hpp"
#include "core/result.hpp"
#include "core/sample.hpp"

namespace runmon {

struct RemoteWriteLabels {
  std::string host;
  std::string run_id;
  std::string job_id;
  std::string node_rank;
};

class RemoteWriteSession {
 public:
  // Errors when a queue cannot be opened (the run is then not started: nothing could be kept).
  static Result<std::unique_ptr<RemoteWriteSession>> Start(const RemoteWriteSetup& setup,
                                                           const std::filesystem::path& run_directory,
                                                           const std::filesystem::path& logdir,
                                                           const RemoteWriteLabels& labels);
  ~RemoteWriteSession();
  RemoteWriteSession(const RemoteWriteSession&) = delete;
  RemoteWriteSession& operator=(const RemoteWriteSession&) = delete;

  // The sampler's sink: never waits on the disk or the network.
  void Enqueue(const Sample& sample);
  // The run's own queues, in the order of the flags (runmon.remoteWrite.*).
  std::vector<RemoteWriteCounts> Counts() const;
  // Drains every queue for at most the drain timeout and reports each one.
  void Finish();

  struct Queue;

 private:
  RemoteWriteSession() = default;
  RemoteWriteSetup setup_;
  std::vector<std::unique_ptr<Queue>> own_;       // one per destination
  std::vector<std::unique_ptr<Queue>> leftover_;  // earlier runs' queues
};

struct PushOptions {
  std::string run_directory;
  RemoteWriteFlags remote_write;
  double timeout_seconds = 600;
};

// `runmon push RUN_DIR --remote-write URL`: sends the run's queue for that URL, or, when the run has none
// (it was recorded without --remote-write, or for another receiver), every value of its run log.
int RunPushCommand(const PushOptions& options);

}  // namespace runmon
