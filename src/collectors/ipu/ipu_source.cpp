// IpuAnswers and the gcipuinfo helper's source (see ipu_source.hpp). The helper's lines are parsed on the
// StreamingTool's reader thread: an answer goes to IpuAnswers, a line that does not parse is refused (the
// tool reports it as skipped), the missing module's line makes the family absent and silences the reports
// of the helper's exit that follows it.
#include "collectors/ipu/ipu_source.hpp"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "collectors/ipu/ipu_helper.hpp"

namespace runmon::ipu {

void IpuAnswers::Put(IpuAnswer answer) {
  {
    std::lock_guard lock(mutex_);
    if (latest_ && latest_->request > answer.request) return;  // a late answer to an older request
    latest_ = std::move(answer);
    failure_.reset();
    heard_ = true;
  }
  arrived_.notify_all();
}

void IpuAnswers::FailAll(std::string why) {
  {
    std::lock_guard lock(mutex_);
    failure_ = std::move(why);
    heard_ = true;
  }
  arrived_.notify_all();
}

void IpuAnswers::Started() {
  std::lock_guard lock(mutex_);
  failure_.reset();
  heard_ = true;
}

bool IpuAnswers::Heard() const {
  std::lock_guard lock(mutex_);
  return heard_;
}

void IpuAnswers::SetMissingModule(std::string why) {
  {
    std::lock_guard lock(mutex_);
    missing_module_ = std::move(why);
  }
  arrived_.notify_all();
}

std::optional<std::string> IpuAnswers::MissingModule() const {
  std::lock_guard lock(mutex_);
  return missing_module_;
}

std::optional<IpuAnswer> IpuAnswers::WaitFor(uint64_t request, double timeout_seconds) {
  std::unique_lock lock(mutex_);
  const auto timeout = std::chrono::duration<double>(timeout_seconds);
  arrived_.wait_for(lock, timeout,
                    [&] { return missing_module_ || failure_ || (latest_ && latest_->request >= request); });
  if (missing_module_) return std::nullopt;
  if (latest_ && latest_->request >= request) return latest_;
  if (failure_) return IpuAnswer{request, Error{*failure_}};
  return std::nullopt;
}

namespace {

class HelperDeviceSource final : public IpuSource {
 public:
  HelperDeviceSource(const StartStreamingToolFunction& start_streaming_tool, ToolCommand command,
                     std::shared_ptr<IpuAnswers> answers, WarnFunction warn)
      : answers_(std::move(answers)), warn_(std::move(warn)) {
    StreamingToolOptions options;
    options.requests_on_stdin = true;
    options.max_line_bytes = kMaxHelperLineBytes;
    tool_ = start_streaming_tool(
        std::move(command), options, [this](std::string_view line) { return HandleLine(line); },
        [this](const std::string& message) {
          if (!answers_->MissingModule() && warn_) warn_(message);
        });
  }
  ~HelperDeviceSource() override {
    if (tool_) tool_->Stop();  // before the handlers' captures go
  }

  std::string_view Name() const override { return "gcipuinfo"; }
  bool Request(uint64_t request) override { return tool_ && tool_->Send(fmt::format("{}", request)); }
  void EndRun(const std::string& reason) override {
    if (tool_) tool_->EndRun(reason);
  }

 private:
  Status HandleLine(std::string_view line) {
    auto message = ParseIpuHelperLine(line);
    if (!message.ok()) return Error{message.error()};
    switch (message->kind) {
      case HelperMessage::Kind::kReady:
        answers_->Started();
        break;
      case HelperMessage::Kind::kDevices:
        answers_->Put({message->request.value_or(0), std::move(message->devices)});
        break;
      case HelperMessage::Kind::kError:
        if (message->missing_module) {
          answers_->SetMissingModule(std::move(message->error));
        } else if (message->request) {
          answers_->Put({*message->request, Error{"gcipuinfo: " + message->error}});
        } else {
          answers_->FailAll(message->error);
        }
        break;
    }
    return OkStatus();
  }

  std::shared_ptr<IpuAnswers> answers_;
  WarnFunction warn_;
  std::unique_ptr<StreamingTool> tool_;
};

}  // namespace

std::unique_ptr<IpuSource> StartHelperSource(const StartStreamingToolFunction& start_streaming_tool,
                                             const std::string& search_path,
                                             std::optional<std::vector<std::string>> environment,
                                             std::shared_ptr<IpuAnswers> answers, WarnFunction warn) {
  ToolCommand command{.executable = "python3",
                      .arguments = {"-c", std::string(HelperSource())},
                      .search_path = search_path,
                      .environment = std::move(environment)};
  return std::make_unique<HelperDeviceSource>(start_streaming_tool, std::move(command), std::move(answers),
                                              std::move(warn));
}

}  // namespace runmon::ipu
