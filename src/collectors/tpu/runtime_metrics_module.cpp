// The tpu-runtime-metrics module's side (runtime_metrics_client.hpp): clients over the gRPC code linked
// here, and the module's entry. Linked into runmon-modules/tpu-runtime-metrics.so, and into tests as it is.
#include "collectors/tpu/runtime_metrics_grpc_client.hpp"

namespace runmon::tpu {

RuntimeMetricsClient* MakeClient(const char* address, const RuntimeServiceTimeouts* timeouts) {
  return new GrpcRuntimeMetricsClient(address, timeouts != nullptr ? *timeouts : RuntimeServiceTimeouts{});
}

std::unique_ptr<RuntimeMetricsClient> MakeLinkedRuntimeMetricsClient(const std::string& address,
                                                                     const RuntimeServiceTimeouts& timeouts) {
  return std::make_unique<GrpcRuntimeMetricsClient>(address, timeouts);
}

}  // namespace runmon::tpu

extern "C" const void* runmon_tpu_runtime_metrics_module() {
  using runmon::tpu::TpuRuntimeModule;
  static const TpuRuntimeModule table{
      .header = {.abi = TpuRuntimeModule::kModuleAbi, .table_size = sizeof(TpuRuntimeModule)},
      .make_client = &runmon::tpu::MakeClient};
  return &table;
}
