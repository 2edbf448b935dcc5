// The client of libtpu's runtime-metrics service (tpu.monitoring.runtime.RuntimeMetricService): plaintext
// gRPC to one address (127.0.0.1:8431 by default, one per process of TPU_RUNTIME_METRICS_PORTS). gRPC (and
// the shared libprotobuf and libstdc++ it brings) would cost every `runmon run` resident memory, TPU or
// not, so the client is the module runmon-modules/tpu-runtime-metrics.so (modules/module_loader.hpp),
// loaded only when the PCI scan found TPU chips; the collector reaches it through this interface, and
// tests, the fuzzer and the bench link its code as it is.
//
// The service lives inside the workload: before the workload starts (or after it ends) nothing listens,
// which is normal, and Listening() says so within the probe timeout without a gRPC call. Every call is
// bounded by the timeouts W&B uses (probe 100 ms, connect 250 ms, request 500 ms).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "collectors/tpu/runtime_metric_reading.hpp"
#include "core/result.hpp"
#include "modules/module_loader.hpp"

namespace runmon::tpu {

struct RuntimeServiceTimeouts {
  double probe_seconds = 0.1;     // TCP connect of Listening()
  double connect_seconds = 0.25;  // the channel's connection, when it has none
  double request_seconds = 0.5;   // one call, or one batch of GetRuntimeMetrics
};

enum class RuntimeCallCode {
  kNotFound,          // the service does not know the metric (gRPC NOT_FOUND)
  kUnavailable,       // no connection, or the server went away (UNAVAILABLE, a failed connect)
  kDeadlineExceeded,  // no answer within the timeouts
  kMalformed,         // an answer that does not decode
  kOther,             // any other gRPC status
};

struct RuntimeCallError {
  RuntimeCallCode code = RuntimeCallCode::kOther;
  std::string message = {};  // gRPC's status message, or what did not decode
};

template <typename T>
using RuntimeCall = std::variant<T, RuntimeCallError>;

class RuntimeMetricsClient {
 public:
  virtual ~RuntimeMetricsClient() = default;
  // Whether a TCP connection to the address succeeds within the probe timeout.
  virtual bool Listening() = 0;
  // ListSupportedMetrics with an empty filter: every metric name the service has.
  virtual RuntimeCall<std::vector<std::string>> ListSupportedMetrics() = 0;
  // GetRuntimeMetric{metric_name, skip_node_aggregation=false} for every name, all in flight at once and
  // all under one request timeout: one answer (or error) per name, in the names' order. A slow server
  // costs one timeout per batch, never one per metric.
  virtual std::vector<RuntimeCall<RuntimeMetricReading>> GetRuntimeMetrics(
      const std::vector<std::string>& names) = 0;
};

struct TpuRuntimeModule {
  static constexpr std::string_view kModuleName = "tpu-runtime-metrics";
  static constexpr const char* kModuleEntry = "runmon_tpu_runtime_metrics_module";
  static constexpr std::uint32_t kModuleAbi = 1;
  ModuleHeader header = {};
  // A client of `address` ("127.0.0.1:8431"), owned by the caller. Connects lazily: making one costs no
  // connection attempt.
  RuntimeMetricsClient* (*make_client)(const char* address, const RuntimeServiceTimeouts* timeouts);
};

// The module's make_client.
RuntimeMetricsClient* MakeClient(const char* address, const RuntimeServiceTimeouts* timeouts);

// A client over the code linked into the caller (the module, tests, the bench).
std::unique_ptr<RuntimeMetricsClient> MakeLinkedRuntimeMetricsClient(const std::string& address,
                                                                     const RuntimeServiceTimeouts& timeouts);

// In the executable: the module loaded from `directory`, a client made; errors name the module's file.
Result<std::unique_ptr<RuntimeMetricsClient>> LoadRuntimeMetricsClient(
    const std::string& address, const RuntimeServiceTimeouts& timeouts,
    const std::filesystem::path& directory = ModuleDirectory());

// A serialized MetricResponse in runmon's form (module side; pure, fuzzed): an error when the bytes are not
// a MetricResponse or it has no metric.
Result<RuntimeMetricReading> DecodeMetricResponse(std::string_view serialized);

}  // namespace runmon::tpu
