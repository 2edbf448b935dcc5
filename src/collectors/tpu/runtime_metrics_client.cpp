// The gRPC client of libtpu's runtime-metrics service (runtime_metrics_grpc_client.hpp). Each call first
// makes sure of a connection within the connect timeout (a service that is not there costs that much, not
// gRPC's own connection timeout of 20 s), then runs under the request timeout. GetRuntimeMetrics starts every
// call of a batch at once on one completion queue under one deadline, so a slow service costs one timeout
// per batch. The channel's reconnection backoff is short (100 ms to 1 s): the service appears when the
// workload starts and again when it restarts, and a later call reaches it within about a second.
#include "collectors/tpu/runtime_metrics_grpc_client.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "collectors/tpu/ipv4_endpoint.hpp"
#include "collectors/tpu/runtime_metric_decode.hpp"

namespace runmon::tpu {
namespace {

namespace proto = ::tpu::monitoring::runtime;

// Blocks the signals runmon takes as requests (host/tool_process.hpp's BlockRequestSignalsOnThisThread:
// the same set) on the calling thread while gRPC runs on it; the caller's mask comes back at the end.
class RequestSignalsBlocked {
 public:
  RequestSignalsBlocked() {
    sigset_t requests;
    sigemptyset(&requests);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD}) {
      sigaddset(&requests, signal);
    }
    ::pthread_sigmask(SIG_BLOCK, &requests, &previous_);
  }
  ~RequestSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  RequestSignalsBlocked(const RequestSignalsBlocked&) = delete;
  RequestSignalsBlocked& operator=(const RequestSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

std::chrono::system_clock::time_point DeadlineAfter(double seconds) {
  return std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                std::chrono::duration<double>(seconds));
}

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::DO_NOT_USE:
      break;
  }
  return "an unknown status code";
}

RuntimeCallError ErrorOfStatus(std::string_view call, const grpc::Status& status) {
  RuntimeCallCode code = RuntimeCallCode::kOther;
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
      code = RuntimeCallCode::kNotFound;
      break;
    case grpc::StatusCode::UNAVAILABLE:
      code = RuntimeCallCode::kUnavailable;
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      code = RuntimeCallCode::kDeadlineExceeded;
      break;
    default:
      break;
  }
  return RuntimeCallError{.code = code,
                          .message = fmt::format("{}: {}: {}", call, StatusCodeName(status.error_code()),
                                                 status.error_message())};
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  arguments.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, INT_MAX);
  // Loopback: never through an http_proxy of the environment.
  arguments.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  // This client's connection is its own, not one shared through gRPC's process-wide subchannel pool.
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  arguments.SetMaxReceiveMessageSize(static_cast<int>(kMaxResponseBytes));
  // "ipv4:" resolves the literal address itself: no DNS resolver.
  return grpc::CreateCustomChannel("ipv4:" + address, grpc::InsecureChannelCredentials(), arguments);
}

// One GetRuntimeMetric of a batch.
struct PendingCall {
  grpc::ClientContext context;
  proto::MetricResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<proto::MetricResponse>> reader;
  bool finished = false;
};

}  // namespace

GrpcRuntimeMetricsClient::GrpcRuntimeMetricsClient(std::string address,
                                                   const RuntimeServiceTimeouts& timeouts)
    : address_(std::move(address)), endpoint_(Ipv4Endpoint(address_)), timeouts_(timeouts) {
  RequestSignalsBlocked blocked;
  grpc_init();
}

// The last client's end shuts gRPC down and waits for it: its threads are joined here, not left to end on
// their own while the process exits (where they raced the leak checker's scan of the threads).
GrpcRuntimeMetricsClient::~GrpcRuntimeMetricsClient() {
  RequestSignalsBlocked blocked;
  stub_.reset();
  channel_.reset();
  grpc_shutdown_blocking();
}

bool GrpcRuntimeMetricsClient::Listening() {
  if (!endpoint_) return false;
  const int socket = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (socket < 0) return false;
  bool connected = false;
  if (::connect(socket, reinterpret_cast<const sockaddr*>(&*endpoint_), sizeof(sockaddr_in)) == 0) {
    connected = true;
  } else if (errno == EINPROGRESS) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeouts_.probe_seconds);
    pollfd watched{.fd = socket, .events = POLLOUT, .revents = 0};
    int ready = 0;
    do {
      const auto left =
          std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now());
      const int timeout_ms = static_cast<int>(std::clamp(std::ceil(left.count()), 0.0, 600000.0));
      ready = ::poll(&watched, 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready == 1) {
      int error = 0;
      socklen_t length = sizeof(error);
      connected = ::getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
  }
  ::close(socket);
  return connected;
}

std::optional<RuntimeCallError> GrpcRuntimeMetricsClient::Connected() {
  if (!endpoint_) {
    return RuntimeCallError{.code = RuntimeCallCode::kUnavailable,
                            .message = fmt::format("{} is not an IPv4 address and port", address_)};
  }
  if (!channel_) {
    channel_ = MakeChannel(address_);
    stub_ = proto::RuntimeMetricService::NewStub(channel_);
  }
  if (channel_->GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY) return std::nullopt;
  if (channel_->WaitForConnected(DeadlineAfter(timeouts_.connect_seconds))) return std::nullopt;
  return RuntimeCallError{
      .code = RuntimeCallCode::kUnavailable,
      .message = fmt::format("no connection to {} within {} s", address_, timeouts_.connect_seconds)};
}

RuntimeCall<std::vector<std::string>> GrpcRuntimeMetricsClient::ListSupportedMetrics() {
  RequestSignalsBlocked blocked;
  if (auto error = Connected()) return *error;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeouts_.request_seconds));
  proto::ListSupportedMetricsResponse response;
  const grpc::Status status =
      stub_->ListSupportedMetrics(&context, proto::ListSupportedMetricsRequest(), &response);
  if (!status.ok()) return ErrorOfStatus("ListSupportedMetrics", status);
  if (response.supported_metric_size() > kMaxMetricsPerResponse) {
    return RuntimeCallError{.code = RuntimeCallCode::kMalformed,
                            .message = fmt::format("ListSupportedMetrics: {} names (at most {})",
                                                   response.supported_metric_size(), kMaxMetricsPerResponse)};
  }
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(response.supported_metric_size()));
  for (const proto::SupportedMetric& metric : response.supported_metric()) {
    if (metric.metric_name().empty()) continue;
    if (metric.metric_name().size() > kMaxStringBytes) {
      return RuntimeCallError{.code = RuntimeCallCode::kMalformed,
                              .message = fmt::format("ListSupportedMetrics: a name of {} bytes (at most {})",
                                                     metric.metric_name().size(), kMaxStringBytes)};
    }
    names.push_back(metric.metric_name());
  }
  return names;
}

std::vector<RuntimeCall<RuntimeMetricReading>> GrpcRuntimeMetricsClient::GetRuntimeMetrics(
    const std::vector<std::string>& names) {
  std::vector<RuntimeCall<RuntimeMetricReading>> results;
  if (names.empty()) return results;
  RequestSignalsBlocked blocked;
  if (auto error = Connected()) return std::vector<RuntimeCall<RuntimeMetricReading>>(names.size(), *error);

  grpc::CompletionQueue queue;
  const auto deadline = DeadlineAfter(timeouts_.request_seconds);
  std::vector<std::unique_ptr<PendingCall>> calls;
  calls.reserve(names.size());
  for (std::size_t index = 0; index < names.size(); ++index) {
    auto call = std::make_unique<PendingCall>();
    call->context.set_deadline(deadline);
    proto::MetricRequest request;
    request.set_metric_name(names[index]);
    request.set_skip_node_aggregation(false);
    call->reader = stub_->PrepareAsyncGetRuntimeMetric(&call->context, request, &queue);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status, reinterpret_cast<void*>(index));
    calls.push_back(std::move(call));
  }
  // gRPC ends every call at its deadline; should one outlive it by a second, the batch cancels what is
  // left (a cancelled call completes too), so the queue drains in any case.
  const auto give_up = deadline + std::chrono::seconds(1);
  std::size_t left = calls.size();
  bool cancelled = false;
  while (left > 0) {
    void* tag = nullptr;
    bool ok = false;
    const auto next = cancelled ? (queue.Next(&tag, &ok) ? grpc::CompletionQueue::GOT_EVENT
                                                         : grpc::CompletionQueue::SHUTDOWN)
                                : queue.AsyncNext(&tag, &ok, give_up);
    if (next == grpc::CompletionQueue::GOT_EVENT) {
      calls[reinterpret_cast<std::uintptr_t>(tag)]->finished = true;
      --left;
    } else if (next == grpc::CompletionQueue::TIMEOUT) {
      for (auto& call : calls) {
        if (!call->finished) call->context.TryCancel();
      }
      cancelled = true;
    } else {
      break;
    }
  }
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }

  results.reserve(names.size());
  for (std::size_t index = 0; index < names.size(); ++index) {
    const PendingCall& call = *calls[index];
    const std::string call_name = fmt::format("GetRuntimeMetric({})", names[index].substr(0, 200));
    if (!call.status.ok()) {
      results.emplace_back(ErrorOfStatus(call_name, call.status));
      continue;
    }
    auto reading = ReadingFromResponse(call.response);
    if (!reading) {
      results.emplace_back(RuntimeCallError{.code = RuntimeCallCode::kMalformed,
                                            .message = call_name + ": " + reading.error()});
      continue;
    }
    results.emplace_back(std::move(*reading));
  }
  return results;
}

}  // namespace runmon::tpu
