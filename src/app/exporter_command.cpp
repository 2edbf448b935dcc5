// `runmon exporter` (see exporter_command.hpp). Order: flags are checked, the address is bound (a port in
// use fails before anything else starts), the stop signals are taken, the server starts on its own
// threads, and the sampler runs on this one, publishing each sample to the exposition cache the server
// reads; a scrape only copies the cached text. Without --pid (or x_stats_pid) there are no process metrics:
// an exporter has no parent worth watching.
#include "app/exporter_command.hpp"

#include <signal.h>

#include <filesystem>

#include <fmt/format.h>

#include "app/http_server_module.hpp"
#include "collectors/builtin.hpp"
#include "export/exposition.hpp"
#include "sampler/sampler.hpp"

namespace runmon {

int RunExporterCommand(const ExporterCommandOptions& options) {
  auto settings = options.sampler.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  if (options.listen.empty()) {
    Warn("exporter: --listen HOST:PORT is required (such as --listen 127.0.0.1:9100)");
    return 2;
  }
  auto listen = ParseListenAddress(options.listen);
  if (!listen) {
    Warn(fmt::format("--listen {}", listen.error()));
    return 2;
  }
  MetricsServerOptions server_options{*listen, options.token};
  if (auto status = CheckMetricsServerOptions(server_options, "--listen", "--token"); !status) {
    Warn(status.error());
    return 2;
  }
  const HostPaths paths = options.sampler.Paths();
  if (!settings->pid) settings->pid = 0;
  CollectorContext ctx = MakeContext(*settings, paths);
  if (ctx.pid && !std::filesystem::exists(paths.proc / std::to_string(*ctx.pid))) {
    Warn(fmt::format("process {} does not exist; process metrics are off, host metrics continue", *ctx.pid));
  }

  ::signal(SIGPIPE, SIG_IGN);
  ExpositionCache cache(ExpositionLabels{.host = HostName(), .run_id = {}});
  auto bound_server = BindMetricsServer(cache, server_options);
  if (!bound_server) {
    Warn(bound_server.error());
    return 1;
  }
  MetricsEndpoint& server = **bound_server;
  SamplerOptions sampler_options;
  sampler_options.interval_seconds = settings->interval_seconds;
  Sampler sampler(
      BuiltinCollectors(ctx), sampler_options, [&cache](const Sample& sample) { cache.Publish(sample); },
      Warn);
  // After the sampler, so it is destroyed (its waiter joined) before the sampler is; before the server's
  // and the sampler's threads start, so they all have the stop signals blocked.
  StopSignals signals([&](const siginfo_t&) { sampler.Stop(); });
  if (auto status = server.Start(); !status) {
    Warn(status.error());
    return 1;
  }
  const ListenAddress bound{listen->host, server.port()};
  Warn(fmt::format("exporter: serving http://{}/metrics every {} s{}", FormatListenAddress(bound),
                   settings->interval_seconds, options.token.empty() ? "" : " (bearer token required)"));
  sampler.Run();
  server.Stop();
  return 0;
}

}  // namespace runmon
