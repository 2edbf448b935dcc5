// Where the IPU collector gets its devices from, one answer per request: runmon's gcipuinfo helper
// (ipu_helper.hpp) on a StreamingTool, which answers each request line written to its stdin; or, where the
// Python module is missing and Graphcore's command-line tools are installed, `gc-info` run per request on a
// worker thread (gc-info --list-devices once, then `gc-info -d N --device-info` per single IPU), through
// the host's tool runner with a deadline. Either way a request returns at once and its answer arrives on
// another thread, in IpuAnswers, where the collector waits for it with a bound (a hung source never holds
// a tick for longer than that). An answer carries its request's number, so one that comes late is never
// taken for a newer request's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collectors/ipu/ipu_parse.hpp"
#include "core/result.hpp"
#include "host/streaming_tool.hpp"
#include "host/tool_runner.hpp"

namespace runmon::ipu {

struct IpuAnswer {
  uint64_t request = 0;
  Result<std::vector<IpuDevice>> devices = std::vector<IpuDevice>{};
};

// The answers of a source, handed from its thread to the collector's.
class IpuAnswers {
 public:
  void Put(IpuAnswer answer);
  // A failure that answers every request until the next answer or start (the helper could not create
  // gcipuinfo).
  void FailAll(std::string why);
  // The source has (re)started: a failure of all is over.
  void Started();
  // gcipuinfo cannot be imported: the helper will never answer (the family is absent).
  void SetMissingModule(std::string why);
  std::optional<std::string> MissingModule() const;
  // Whether the source has said anything yet (ready, an answer, a failure): before that, it is starting
  // (python3 and the module's import take a while) and a missed answer is not its fault.
  bool Heard() const;

  // The answer to `request` (or a newer one), a failure of all, or nullopt once `timeout_seconds` have
  // passed or the module turned out to be missing.
  std::optional<IpuAnswer> WaitFor(uint64_t request, double timeout_seconds);

 private:
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::optional<IpuAnswer> latest_;
  std::optional<std::string> failure_;
  std::optional<std::string> missing_module_;
  bool heard_ = false;
};

class IpuSource {
 public:
  virtual ~IpuSource() = default;
  virtual std::string_view Name() const = 0;  // for messages: "gcipuinfo", "gc-info"
  // Asks for the devices; the answer comes through the IpuAnswers the source was started with. False when
  // the request could not be delivered (the helper is being started again).
  virtual bool Request(uint64_t request) = 0;
  // The source is hung (no answer for too long): end it, to be started again.
  virtual void EndRun(const std::string& reason) = 0;
};

using StartStreamingToolFunction = std::function<std::unique_ptr<StreamingTool>(
    ToolCommand, StreamingToolOptions, StreamingTool::LineHandler, StreamingTool::WarningHandler)>;
using RunToolFunction = std::function<Result<ToolOutput>(const ToolCommand&, const ToolLimits&)>;
using WarnFunction = std::function<void(const std::string&)>;

// The gcipuinfo helper run as `python3 -c <source>` (`python3` found on `search_path`, with `environment`:
// PYTHONPATH is honoured). Its reports (an exit, a bad line) go to `warn`, except once the module is known
// to be missing (the family is quietly absent then).
std::unique_ptr<IpuSource> StartHelperSource(const StartStreamingToolFunction& start_streaming_tool,
                                             const std::string& search_path,
                                             std::optional<std::vector<std::string>> environment,
                                             std::shared_ptr<IpuAnswers> answers, WarnFunction warn);

struct GcInfoOptions {
  double deadline_seconds = 2.0;  // per gc-info process
  size_t max_stdout_bytes = 1024 * 1024;
  double kill_grace_seconds = 0.5;
};

// gc-info (found on `search_path`) on a worker thread; each request lists the devices until a listing has
// worked, then reads each single IPU's device info.
std::unique_ptr<IpuSource> StartGcInfoSource(RunToolFunction run_tool, const std::string& search_path,
                                             std::optional<std::vector<std::string>> environment,
                                             std::shared_ptr<IpuAnswers> answers, GcInfoOptions options);

}  // namespace runmon::ipu
