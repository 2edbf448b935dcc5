// The executable's side of the tpu-runtime-metrics module (runtime_metrics_client.hpp): loaded once, a
// client per caller. Nothing here links gRPC or protobuf.
#include "collectors/tpu/runtime_metrics_client.hpp"

namespace runmon::tpu {

Result<std::unique_ptr<RuntimeMetricsClient>> LoadRuntimeMetricsClient(
    const std::string& address, const RuntimeServiceTimeouts& timeouts,
    const std::filesystem::path& directory) {
  auto module = LoadModule<TpuRuntimeModule>(directory);
  if (!module) return Error{module.error()};
  return std::unique_ptr<RuntimeMetricsClient>((*module)->make_client(address.c_str(), &timeouts));
}

}  // namespace runmon::tpu
