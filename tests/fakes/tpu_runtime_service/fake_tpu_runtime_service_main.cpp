// fake_tpu_runtime_service: the fake runtime-metrics service (fake_tpu_runtime_service.hpp) as a process,
// for end-to-end tests of runmon. Prints exactly one line, "listening 127.0.0.1:PORT", once it accepts
// connections, and runs until SIGTERM or SIGINT.
//   fake_tpu_runtime_service --responses FILE [--case NAME] [--port N] [--delay-ms N] [--not-found NAME]...
//                            [--unavailable]
//   fake_tpu_runtime_service --stall [--port N]
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "fake_tpu_runtime_service.hpp"

namespace {

using runmon::tpu::fake::FakeServiceOptions;

int Usage(const char* problem) {
  std::fprintf(stderr,
               "fake_tpu_runtime_service: %s\nusage: fake_tpu_runtime_service --responses FILE [--case NAME] "
               "[--port N] [--delay-ms N] [--not-found NAME]... [--unavailable] | --stall [--port N]\n",
               problem);
  return 2;
}

bool ParseInt(const char* text, int& value) {
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc() && end == view.data() + view.size() && value >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  FakeServiceOptions options;
  bool stall = false;
  for (int index = 1; index < argc; ++index) {
    const std::string_view flag(argv[index]);
    const bool has_value = index + 1 < argc;
    if (flag == "--stall") {
      stall = true;
    } else if (flag == "--unavailable") {
      options.unavailable = true;
    } else if (!has_value) {
      return Usage("a flag without its value, or an unknown flag");
    } else if (flag == "--responses") {
      options.responses_file = argv[++index];
    } else if (flag == "--case") {
      options.case_name = argv[++index];
    } else if (flag == "--not-found") {
      options.not_found.insert(argv[++index]);
    } else if (flag == "--port") {
      if (!ParseInt(argv[++index], options.port) || options.port > 65535)
        return Usage("--port needs 0..65535");
    } else if (flag == "--delay-ms") {
      if (!ParseInt(argv[++index], options.delay_ms))
        return Usage("--delay-ms needs a count of milliseconds");
    } else {
      return Usage("an unknown flag");
    }
  }
  if (!stall && options.responses_file.empty()) return Usage("--responses FILE or --stall is needed");

  // Blocked before the server starts its threads (they inherit the mask), taken here by sigwait.
  sigset_t requests;
  sigemptyset(&requests);
  sigaddset(&requests, SIGTERM);
  sigaddset(&requests, SIGINT);
  pthread_sigmask(SIG_BLOCK, &requests, nullptr);

  std::unique_ptr<runmon::tpu::fake::FakeTpuRuntimeService> service;
  std::unique_ptr<runmon::tpu::fake::StalledListener> stalled;
  int port = 0;
  if (stall) {
    auto started = runmon::tpu::fake::StalledListener::Start(options.port);
    if (!started) return Usage(started.error().c_str());
    stalled = std::move(*started);
    port = stalled->port();
  } else {
    auto started = runmon::tpu::fake::FakeTpuRuntimeService::Start(options);
    if (!started) return Usage(started.error().c_str());
    service = std::move(*started);
    port = service->port();
  }
  std::printf("listening 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  int signal = 0;
  sigwait(&requests, &signal);
  return 0;
}
