// The remote-write flags `runmon run` and `runmon push` share (--remote-write URL, repeatable, with
// --remote-write-header K=V, --remote-write-bearer-token-file F, --remote-write-queue-size and
// --remote-write-drain-timeout), and their checks, made before anything is recorded or started so that a
// mistyped flag costs nothing: a URL that is not http(s) or carries user:password (refused in favour of an
// Authorization header, which does not end up in shell histories and process lists), a header that is not
// NAME=VALUE, names one the protocol itself sets, or holds a line break, a token file that cannot be read.
// Each destination's queue is a directory of its own under the run directory, named after the URL's host
// and port and a hash of the whole URL, so that the next start of the same log directory (and `runmon
// push`) find the queue of the same receiver again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/result.hpp"

namespace runmon {

struct RemoteWriteFlags {
  std::vector<std::string> urls;
  std::vector<std::string> headers;  // NAME=VALUE, for every URL
  std::string bearer_token_file;
  std::string queue_size = "256MiB";  // per destination
  double drain_timeout_seconds = 10;

  enum class DrainFlag { kAdd, kLeaveOut };  // push bounds its wait with its own --timeout
  void AddTo(CLI::App& command, DrainFlag drain_flag);
};

struct RemoteWriteDestination {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string bearer_token_file;     // empty: none
  std::string queue_directory_name;  // under <run dir>/remote-write/
};

struct RemoteWriteSetup {
  std::vector<RemoteWriteDestination> destinations;  // empty without --remote-write
  uint64_t queue_max_bytes = 0;
  double drain_timeout_seconds = 0;
};

// Checks the flags; errors name the flag (usage errors: the caller exits 2).
Result<RemoteWriteSetup> ResolveRemoteWrite(const RemoteWriteFlags& flags);

// "256MiB", "1 GiB", "500MB", "4096" (bytes): binary and decimal suffixes, case-insensitive.
Result<uint64_t> ParseByteSize(std::string_view text);

// `host_port-<8 hex digits>`: a directory name from the URL (only [A-Za-z0-9._-]).
std::string QueueDirectoryName(std::string_view url);

// Where a run directory's queue for a destination lives.
std::filesystem::path QueueDirectory(const std::filesystem::path& run_directory,
                                     const RemoteWriteDestination& destination);

}  // namespace runmon
