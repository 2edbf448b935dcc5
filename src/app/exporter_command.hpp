// `runmon exporter --listen HOST:PORT [sampler flags] [--token T]`: a Prometheus exporter. Samples the host
// (and the process tree given by --pid, if any) at the interval and serves the latest sample at
// http://HOST:PORT/metrics (src/export) until SIGINT, SIGTERM or SIGHUP, then exits 0. Exit 2 for bad
// flags (a malformed --listen, a non-loopback address without a token), 1 when the address cannot be bound.
#pragma once

#include <string>

#include "app/cli_common.hpp"

namespace runmon {

struct ExporterCommandOptions {
  SamplerFlags sampler;
  std::string listen;
  std::string token;
};

int RunExporterCommand(const ExporterCommandOptions& options);

}  // namespace runmon
