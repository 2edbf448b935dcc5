// `runmon serve [--logdir ./wandb] [--host 127.0.0.1] [--port 8765] [--token T]`: the local web dashboard
// over a directory of runs (src/web). Prints the URL to open, serves until SIGINT, SIGTERM or SIGHUP, then
// exits 0. Exit 2 for bad flags (including a non-loopback host without a token and a --logdir that is not a
// directory), 1 when the port cannot be bound.
#pragma once

#include <string>

namespace runmon {

struct ServeCommandOptions {
  std::string logdir = "wandb";
  std::string host = "127.0.0.1";
  int port = 8765;
  std::string token;
};

int RunServeCommand(const ServeCommandOptions& options);

}  // namespace runmon
