// The http-server module's entry (see http_server_module.hpp): the table, and the MetricsServer behind
// MetricsEndpoint. Compiled into the module only, never into the executable.
#include "app/http_server_module.hpp"

#include "export/metrics_server.hpp"

namespace runmon {
namespace {

class BoundMetricsServer final : public MetricsEndpoint {
 public:
  BoundMetricsServer(const ExpositionCache& cache, const MetricsServerOptions& options)
      : server_(cache, options) {}
  Status Bind() { return server_.Bind(); }
  int port() const override { return server_.port(); }
  Status Start() override { return server_.Start(); }
  void Stop() override { server_.Stop(); }

 private:
  MetricsServer server_;
};

Result<std::unique_ptr<MetricsEndpoint>> BindInModule(const ExpositionCache& cache,
                                                      const MetricsServerOptions& options) {
  auto server = std::make_unique<BoundMetricsServer>(cache, options);
  if (auto status = server->Bind(); !status) return Error{status.error()};
  return std::unique_ptr<MetricsEndpoint>(std::move(server));
}

}  // namespace
}  // namespace runmon

extern "C" const void* runmon_http_server_module() {
  using runmon::HttpServerModule;
  static const HttpServerModule table{
      .header = {.abi = HttpServerModule::kModuleAbi, .table_size = sizeof(HttpServerModule)},
      .run_serve_command = &runmon::ServeCommandMain,
      .bind_metrics_server = &runmon::BindInModule,
  };
  return &table;
}
