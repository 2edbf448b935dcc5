// The gRPC client of the runtime-metrics service (runtime_metrics_client.hpp), the module's code: one
// plaintext channel to an IPv4 address, made on first use, and calls bounded by RuntimeServiceTimeouts.
//
// gRPC starts threads of its own (its timer manager, executor and event-engine threads, and a thread that
// finishes grpc_shutdown), and a thread starts with the signal mask of the thread that started it. The
// client's caller is a collector's lane, which may have the signals runmon takes as requests (SIGTERM,
// SIGINT, ...: host/tool_process.hpp) unblocked; a gRPC thread that inherited that mask would take a SIGTERM
// meant for runmon's signal waiter and end runmon without its final sample. So everything that enters gRPC
// here (making the channel, every call, dropping the channel) runs with those signals blocked on the calling
// thread, and every thread gRPC starts meanwhile, or later from its own threads, has them blocked. The
// caller's mask is restored when the client returns.
#pragma once

#include <netinet/in.h>

#include <memory>
#include <optional>
#include <string>

#include "collectors/tpu/runtime_metrics_client.hpp"
#include "tpu/tpu_runtime_metrics.grpc.pb.h"

namespace runmon::tpu {

class GrpcRuntimeMetricsClient final : public RuntimeMetricsClient {
 public:
  GrpcRuntimeMetricsClient(std::string address, const RuntimeServiceTimeouts& timeouts);
  ~GrpcRuntimeMetricsClient() override;
  GrpcRuntimeMetricsClient(const GrpcRuntimeMetricsClient&) = delete;
  GrpcRuntimeMetricsClient& operator=(const GrpcRuntimeMetricsClient&) = delete;

  bool Listening() override;
  RuntimeCall<std::vector<std::string>> ListSupportedMetrics() override;
  std::vector<RuntimeCall<RuntimeMetricReading>> GetRuntimeMetrics(
      const std::vector<std::string>& names) override;

 private:
  // Makes the channel when there is none and waits up to the connect timeout for it to be READY.
  std::optional<RuntimeCallError> Connected();

  std::string address_;
  std::optional<sockaddr_in> endpoint_;  // nullopt: not an IPv4 "host:port"
  RuntimeServiceTimeouts timeouts_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::tpu::monitoring::runtime::RuntimeMetricService::Stub> stub_;
};

}  // namespace runmon::tpu
