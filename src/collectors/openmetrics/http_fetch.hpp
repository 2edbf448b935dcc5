// An HTTP GET of one OpenMetrics endpoint on libcurl, bounded in time and memory so that a dead, slow or
// hostile endpoint costs one lane at most its tick's deadline and the response cap in memory.
//
// Choices (spec/metrics.md B §9 has W&B's: 3 retries on connection errors, 429 and 5xx, exponential
// backoff with jitter of 1-10 s, 5 s per attempt):
//  - Every Fetch has an overall deadline (the sampler tick's); an attempt's timeout is the smaller of
//    attempt_timeout_seconds and the time left, and a retry whose backoff would end past the deadline is
//    not made. W&B's 1-10 s backoff would never fit a tick, so runmon's is 0.1 s doubling to 2 s, each wait
//    drawn uniformly from its upper half (jitter). A 429 or 503's Retry-After is honoured when it fits.
//  - Retried: connection refused/unreachable, DNS failures, timeouts, resets, empty or cut-off responses,
//    HTTP 429 and 5xx but 501 (as Go's retryablehttp). Not retried: other statuses, redirect errors, TLS
//    verification failures, a response over the cap.
//  - The response is capped (max_response_bytes, after decompression): an announced Content-Length over it
//    stops the transfer before the body, and the write callback aborts a stream that grows past it.
//  - A transfer slower than low_speed_limit bytes/s for low_speed_time_seconds is aborted (slow-loris).
//  - Only http and https, also on redirects; at most max_redirects redirects. libcurl drops Authorization
//    and Cookie headers when a redirect leaves the host.
//  - Proxies: none by default, whatever http_proxy/https_proxy say: metrics endpoints are local or on the
//    cluster's network, where an environment's proxy (set for package downloads) cannot reach them and
//    should not see their headers. kEnvironment uses libcurl's reading of http_proxy, https_proxy,
//    all_proxy and no_proxy (what W&B's Go client does), kUrl one given proxy; loopback hosts (localhost,
//    127.0.0.0/8, ::1) never go through a proxy.
//  - One CURL handle per fetcher, reused, so the connection is kept alive between ticks. libcurl is loaded
//    (src/http_client/curl_library.hpp) and initialised once per process, when the first fetcher is made;
//    when it cannot be loaded every Fetch fails with the reason. No signals (CURLOPT_NOSIGNAL): lanes are
//    threads.
//  - Accept asks for the Prometheus text format 0.0.4 first and OpenMetrics 1.0 second: with 0.0.4 a
//    client library names a counter as its author did, which is what W&B (which sends no preference) keys.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/openmetrics_settings.hpp"
#include "core/result.hpp"

namespace runmon::openmetrics {

inline constexpr std::string_view kAcceptHeader =
    "text/plain;version=0.0.4;q=1.0,application/openmetrics-text;version=1.0.0;q=0.8,*/*;q=0.1";

enum class ProxyMode { kNone, kEnvironment, kUrl };

struct FetchOptions {
  double attempt_timeout_seconds = 5.0;
  unsigned max_retries = 3;
  double backoff_initial_seconds = 0.1;
  double backoff_max_seconds = 2.0;
  size_t max_response_bytes = size_t{16} << 20;
  long low_speed_limit_bytes_per_second = 64;
  long low_speed_time_seconds = 3;
  long max_redirects = 3;
  ProxyMode proxy = ProxyMode::kNone;
  std::string proxy_url;  // kUrl
  // kEnvironment: the environment's no_proxy (else NO_PROXY), handed in by the family's factory (collectors
  // never read the environment); loopback is added to it. libcurl reads the proxies themselves.
  std::string no_proxy;
};

// What the last Fetch did, for tests and diagnostics.
struct FetchStats {
  unsigned attempts = 0;
  long http_status = 0;      // of the last attempt that got a response; 0 when none did
  long new_connections = 0;  // connections opened, all attempts together (0: a kept-alive one was reused)
  long redirects = 0;        // of the last attempt
  size_t body_bytes = 0;
  double seconds = 0;
};

class HttpFetcher {
 public:
  HttpFetcher(std::string url, std::vector<OpenMetricsHeader> headers, FetchOptions options = {});
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  // GETs the URL, retrying as above until a 200, a final error or `deadline`. On success Body() and
  // ContentType() hold the response until the next Fetch. Errors begin with "GET <url>" (password redacted).
  Status Fetch(std::chrono::steady_clock::time_point deadline);

  std::string_view Body() const;
  const std::string& ContentType() const;
  const FetchStats& Stats() const;
  // Gives back the body's memory when it is much larger than the last response needed.
  void TrimBuffer();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The proxy settings from RUNMON_OPENMETRICS_PROXY's value: unset or "" (none), "environment" or a proxy
// URL.
void ApplyProxySetting(const char* value, FetchOptions& options);

// "16 MiB", "512 KiB" or "1000 bytes".
std::string FormatByteSize(size_t bytes);

}  // namespace runmon::openmetrics
