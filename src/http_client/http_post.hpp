// An HTTP POST on libcurl (loaded at run time, curl_library.hpp) for pushing data to a receiver: remote
// write's sender posts each batch through one HttpPoster. Bounded in time and memory, so a dead, slow or
// hostile receiver costs the caller its deadline at most and a few KiB of response:
//  - Every Post has a deadline; connecting and the whole exchange must fit in it.
//  - The response body is kept up to max_response_bytes (a receiver's error message; what is past it is
//    not read, the transfer stops and body_truncated says so; the status still counts).
//  - One handle, reused: the connection stays open between posts (new_connection says when one was
//    opened). No signals (CURLOPT_NOSIGNAL): the caller is a thread.
//  - Only http and https, also on redirects; at most 3 redirects, and a POST stays a POST on 301, 302 and
//    303 (a receiver moved behind a redirect must not get an empty GET). libcurl drops Authorization when a
//    redirect leaves the host.
//  - No proxy, whatever http_proxy says: receivers are on the cluster's network, where a proxy set for
//    package downloads cannot reach them and should not see their tokens.
//  - "Expect: 100-continue" is never sent (libcurl adds it to bodies over 1 MiB, and receivers behind some
//    proxies never answer it: each request would wait a second first).
//  - Retry-After (seconds or an HTTP date, read by libcurl) is reported for the caller's backoff.
// Retrying is the caller's: Post makes one attempt.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace runmon::http {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct PostOptions {
  double connect_timeout_seconds = 10;
  size_t max_response_bytes = size_t{64} << 10;
};

struct PostResult {
  long status = 0;  // the HTTP status; 0 when no response came
  std::string body;
  bool body_truncated = false;
  std::optional<double> retry_after_seconds;
  bool request_sent = false;    // some of the request went out (it may have been acted on)
  bool new_connection = false;  // a connection was opened for it
  std::string error;            // why no response came (status 0)
  double seconds = 0;
};

class HttpPoster {
 public:
  // `headers` go with every request (header values are the caller's to check: no line breaks).
  HttpPoster(std::string url, std::vector<HttpHeader> headers, PostOptions options = {});
  ~HttpPoster();
  HttpPoster(const HttpPoster&) = delete;
  HttpPoster& operator=(const HttpPoster&) = delete;

  // One POST of `body`, with `extra_headers` after the constructor's. Never throws; one at a time (a second
  // caller waits for the first).
  PostResult Post(const std::string& body, std::span<const HttpHeader> extra_headers,
                  std::chrono::steady_clock::time_point deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runmon::http
