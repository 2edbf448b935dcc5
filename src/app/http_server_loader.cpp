// The executable's side of the http-server module (http_server_module.hpp): `runmon serve` and the /metrics
// server of `runmon run --metrics-listen` and `runmon exporter`, each loading the module on first use.
#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "app/http_server_module.hpp"

namespace runmon {

int RunServeCommand(const ServeCommandOptions& options) {
  auto module = LoadModule<HttpServerModule>();
  if (!module) {
    Warn(fmt::format("serve: {}", module.error()));
    return 1;
  }
  return (*module)->run_serve_command(options);
}

Result<std::unique_ptr<MetricsEndpoint>> BindMetricsServer(const ExpositionCache& cache,
                                                           const MetricsServerOptions& options) {
  auto module = LoadModule<HttpServerModule>();
  if (!module) return Error{module.error()};
  return (*module)->bind_metrics_server(cache, options);
}

}  // namespace runmon
