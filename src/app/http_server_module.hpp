// The http-server module, runmon-modules/http-server.so (modules/module_loader.hpp): both of runmon's HTTP
// servers, the dashboard (`runmon serve`, src/web) and the /metrics exporter (src/export), with cpp-httplib
// and the OpenSSL and Brotli libraries it brings. The executable reaches them only through this table, so
// `runmon run` without --metrics-listen and `runmon sample` never map them.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "app/serve_command.hpp"
#include "core/result.hpp"
#include "export/exposition.hpp"
#include "export/listen_address.hpp"
#include "modules/module_loader.hpp"

namespace runmon {

// A /metrics server whose socket is bound (metrics_server.hpp's MetricsServer behind the module's wall).
class MetricsEndpoint {
 public:
  virtual ~MetricsEndpoint() = default;
  virtual int port() const = 0;
  // Serves on a thread of its own; returns once the server accepts connections.
  virtual Status Start() = 0;
  // Stops serving and joins the thread; idempotent.
  virtual void Stop() = 0;
};

struct HttpServerModule {
  static constexpr std::string_view kModuleName = "http-server";
  static constexpr const char* kModuleEntry = "runmon_http_server_module";
  static constexpr std::uint32_t kModuleAbi = 1;
  ModuleHeader header;
  // `runmon serve` once its flags are parsed (serve_command.cpp).
  int (*run_serve_command)(const ServeCommandOptions& options);
  // A MetricsServer over `cache`, bound (the port in use, an address not this machine's: an error).
  Result<std::unique_ptr<MetricsEndpoint>> (*bind_metrics_server)(const ExpositionCache& cache,
                                                                  const MetricsServerOptions& options);
};

// Inside the module: the serve command (serve_command.cpp).
int ServeCommandMain(const ServeCommandOptions& options);

// In the executable: the module loaded, then its /metrics server bound; errors name the module's file when it
// cannot be loaded.
Result<std::unique_ptr<MetricsEndpoint>> BindMetricsServer(const ExpositionCache& cache,
                                                           const MetricsServerOptions& options);

}  // namespace runmon
