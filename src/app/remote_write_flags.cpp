// The remote-write flags and their checks (remote_write_flags.hpp).
#include "app/remote_write_flags.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "config/openmetrics_settings.hpp"

namespace runmon {
namespace {

// Headers the protocol or the HTTP client sets itself; a second value would make the request ambiguous.
constexpr std::array<std::string_view, 9> kReservedHeaders = {"content-encoding",
                                                              "content-type",
                                                              "content-length",
                                                              "host",
                                                              "connection",
                                                              "transfer-encoding",
                                                              "user-agent",
                                                              "x-prometheus-remote-write-version",
                                                              "expect"};

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool IsTokenCharacter(unsigned char c) {
  return std::isalnum(c) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

Result<std::pair<std::string, std::string>> ParseHeader(const std::string& assignment) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    return Error{fmt::format("--remote-write-header '{}': expected NAME=VALUE", assignment)};
  const std::string name = assignment.substr(0, equals);
  std::string value = assignment.substr(equals + 1);
  if (!std::all_of(name.begin(), name.end(), [](unsigned char c) { return IsTokenCharacter(c); }))
    return Error{
        fmt::format("--remote-write-header '{}': '{}' is not an HTTP header name", assignment, name)};
  if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
    return Error{fmt::format("--remote-write-header {}: the value holds a line break or NUL", name)};
  const std::string lower = Lowercase(name);
  if (std::find(kReservedHeaders.begin(), kReservedHeaders.end(), lower) != kReservedHeaders.end())
    return Error{fmt::format("--remote-write-header {}: runmon sets this header itself", name)};
  return std::pair{name, std::move(value)};
}

// An http(s) URL with a host (the scraper's rule, CheckOpenMetricsUrl), without user:password@: a password
// on the command line is seen by every user of the machine (ps), and would be written in the queue's name
// and in messages. Basic authentication goes in a header.
Status CheckPushUrl(std::string_view url) {
  if (auto status = CheckOpenMetricsUrl(url); !status) return status;
  if (RedactUrl(url) != url)
    return Error{"user:password@ in the URL is refused (use --remote-write-header Authorization=Basic ...)"};
  if (url.find('#') != std::string_view::npos) return Error{"a URL to push to has no #fragment"};
  return OkStatus();
}

Status CheckTokenFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{fmt::format("--remote-write-bearer-token-file {}: cannot be read", path)};
  std::string token(64 * 1024 + 1, '\0');
  file.read(token.data(), static_cast<std::streamsize>(token.size()));
  token.resize(static_cast<size_t>(file.gcount()));
  if (token.size() > 64 * 1024)
    return Error{fmt::format("--remote-write-bearer-token-file {}: over 64 KiB, not a token", path)};
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    return Error{fmt::format("--remote-write-bearer-token-file {}: empty", path)};
  return OkStatus();
}

// FNV-1a, 32 bits: stable across builds and machines, which std::hash is not.
uint32_t Fnv1a(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

}  // namespace

void RemoteWriteFlags::AddTo(CLI::App& command, DrainFlag drain_flag) {
  AddRepeatableOption(
      command, "--remote-write", urls,
      "Push every sample to this Prometheus remote-write URL (repeatable), through a queue on disk")
      ->type_name("URL");
  AddRepeatableOption(
      command, "--remote-write-header", headers,
      "Send this header with every remote-write request (repeatable), e.g. Authorization=Basic ...")
      ->type_name("NAME=VALUE");
  command
      .add_option("--remote-write-bearer-token-file", bearer_token_file,
                  "Send Authorization: Bearer <the file's content>, read again for every request")
      ->type_name("FILE");
  command
      .add_option("--remote-write-queue-size", queue_size,
                  "Bound of each destination's queue on disk; past it the oldest samples go (default 256MiB)")
      ->type_name("SIZE");
  if (drain_flag == DrainFlag::kLeaveOut) return;
  command
      .add_option(
          "--remote-write-drain-timeout", drain_timeout_seconds,
          "At the end, wait at most this long for the queue to be delivered (default 10; the rest goes "
          "on the next start or with runmon push)")
      ->type_name("SECONDS");
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  const std::string original(text);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data())
    return Error{fmt::format("'{}': expected a size such as 256MiB", original)};
  std::string suffix = Lowercase(std::string_view(end, static_cast<size_t>(text.data() + text.size() - end)));
  suffix.erase(0, suffix.find_first_not_of(' '));
  struct Unit {
    std::string_view name;
    uint64_t bytes;
  };
  constexpr std::array<Unit, 10> kUnits = {{{"", 1},
                                            {"b", 1},
                                            {"kib", uint64_t{1} << 10},
                                            {"mib", uint64_t{1} << 20},
                                            {"gib", uint64_t{1} << 30},
                                            {"tib", uint64_t{1} << 40},
                                            {"kb", 1000},
                                            {"mb", 1000 * 1000},
                                            {"gb", 1000 * 1000 * 1000},
                                            {"tb", uint64_t{1000} * 1000 * 1000 * 1000}}};
  for (const Unit& unit : kUnits) {
    if (suffix != unit.name) continue;
    if (number > UINT64_MAX / unit.bytes) return Error{fmt::format("'{}': too large", original)};
    return number * unit.bytes;
  }
  return Error{
      fmt::format("'{}': unknown unit '{}' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", original, suffix)};
}

std::string QueueDirectoryName(std::string_view url) {
  std::string_view authority = url;
  if (const size_t scheme = authority.find("://"); scheme != std::string_view::npos)
    authority.remove_prefix(scheme + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  std::string name;
  for (const char c : authority.substr(0, 64)) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-';
    name += plain ? c : '_';
  }
  if (name.empty()) name = "receiver";
  return fmt::format("{}-{:08x}", name, Fnv1a(url));
}

std::filesystem::path QueueDirectory(const std::filesystem::path& run_directory,
                                     const RemoteWriteDestination& destination) {
  return run_directory / "remote-write" / destination.queue_directory_name;
}

Result<RemoteWriteSetup> ResolveRemoteWrite(const RemoteWriteFlags& flags) {
  RemoteWriteSetup setup;
  if (flags.urls.empty()) {
    if (!flags.headers.empty() || !flags.bearer_token_file.empty())
      return Error{"--remote-write-header and --remote-write-bearer-token-file go with --remote-write URL"};
    return setup;
  }
  auto size = ParseByteSize(flags.queue_size);
  if (!size) return Error{fmt::format("--remote-write-queue-size {}", size.error())};
  if (*size < (uint64_t{64} << 10))
    return Error{fmt::format("--remote-write-queue-size {}: at least 64KiB", flags.queue_size)};
  setup.queue_max_bytes = *size;
  if (!std::isfinite(flags.drain_timeout_seconds) || flags.drain_timeout_seconds < 0 ||
      flags.drain_timeout_seconds > 86400)
    return Error{"--remote-write-drain-timeout: expected 0 to 86400 seconds"};
  setup.drain_timeout_seconds = flags.drain_timeout_seconds;
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& assignment : flags.headers) {
    auto header = ParseHeader(assignment);
    if (!header) return Error{header.error()};
    const bool authorization = Lowercase(header->first) == "authorization";
    if (authorization && !flags.bearer_token_file.empty())
      return Error{
          "--remote-write-header Authorization and --remote-write-bearer-token-file: give one of them"};
    headers.push_back(std::move(*header));
  }
  if (!flags.bearer_token_file.empty()) {
    if (auto status = CheckTokenFile(flags.bearer_token_file); !status) return Error{status.error()};
  }
  for (const auto& url : flags.urls) {
    if (auto status = CheckPushUrl(url); !status)
      return Error{fmt::format("--remote-write {}", status.error())};
    const std::string directory = QueueDirectoryName(url);
    for (const auto& earlier : setup.destinations) {
      if (earlier.url == url) return Error{fmt::format("--remote-write {}: given twice", url)};
    }
    setup.destinations.push_back({.url = url,
                                  .headers = headers,
                                  .bearer_token_file = flags.bearer_token_file,
                                  .queue_directory_name = directory});
  }
  return setup;
}

}  // namespace runmon
