// `runmon serve`: the store, the server and the signals that stop them. See serve_command.hpp. This file is
// part of the http-server module (ServeCommandMain); the executable's RunServeCommand loads the module and
// calls it (http_server_loader.cpp).
#include "app/serve_command.hpp"

#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "app/http_server_module.hpp"
#include "web/assets.hpp"
#include "web/run_store.hpp"
#include "web/server.hpp"

namespace runmon {

int ServeCommandMain(const ServeCommandOptions& options) {
  web::ServeOptions serve;
  serve.logdir = options.logdir;
  serve.host = options.host;
  serve.port = options.port;
  serve.token = options.token;
  if (auto status = web::CheckServeOptions(serve); !status) {
    Warn(status.error());
    return 2;
  }
  std::error_code error;
  if (std::filesystem::exists(serve.logdir, error) && !std::filesystem::is_directory(serve.logdir, error)) {
    Warn(fmt::format("--logdir {}: not a directory", serve.logdir.string()));
    return 2;
  }
  if (!std::filesystem::is_directory(serve.logdir, error)) {
    Warn(fmt::format("serve: {} does not exist (yet): runs appear when it exists and holds some",
                     serve.logdir.string()));
  }

  // The signals are taken by one thread with sigwait; every other thread (started below) has them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&stop_signals, signal);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  web::RunStore store(serve.logdir);
  store.Start();
  web::DashboardServer server(store, serve, web::EmbeddedAssets());
  if (auto status = server.Bind(); !status) {
    Warn(status.error());
    return 1;
  }
  const std::string host = serve.host.find(':') != std::string::npos ? "[" + serve.host + "]" : serve.host;
  const std::string url = fmt::format("http://{}:{}/", host, server.port());
  fmt::print("runmon serve: {} in {}\n", serve.token.empty() ? url : url + "?token=" + serve.token,
             serve.logdir.string());
  std::fflush(stdout);

  std::thread signals([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.Stop();
  });
  server.Serve();
  server.Stop();
  pthread_kill(signals.native_handle(), SIGUSR1);  // when serving ended without a signal
  signals.join();
  return 0;
}

}  // namespace runmon
