// One POST per call on a kept libcurl handle (http_post.hpp). The handle's fixed options are set once; the
// body, the headers and the timeouts for each call.
#include "http_client/http_post.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "http_client/curl_library.hpp"

namespace runmon::http {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

struct HttpPoster::Impl {
  std::string url;
  std::vector<HttpHeader> headers;
  PostOptions options;
  std::mutex mutex;
  const CurlLibrary* libcurl = nullptr;
  CURL* curl = nullptr;
  std::string setup_error;
  std::string response;
  bool truncated = false;
  char error_buffer[CURL_ERROR_SIZE] = {};

  static size_t Write(char* data, size_t size, size_t count, void* user) {
    auto* self = static_cast<Impl*>(user);
    const size_t bytes = size * count;
    const size_t room =
        self->options.max_response_bytes - std::min(self->response.size(), self->options.max_response_bytes);
    if (bytes > room) {
      self->response.append(data, room);
      self->truncated = true;
      return 0;  // CURLE_WRITE_ERROR: the rest is not read
    }
    self->response.append(data, bytes);
    return bytes;
  }

  void Setup() {
    auto handle = NewCurlHandle(url, 3, error_buffer);
    if (!handle) {
      setup_error = handle.error();
      return;
    }
    libcurl = handle->library;
    curl = handle->handle;
    libcurl->easy_setopt(curl, CURLOPT_POST, 1L);
    libcurl->easy_setopt(curl, CURLOPT_POSTREDIR, static_cast<long>(CURL_REDIR_POST_ALL));
    libcurl->easy_setopt(curl, CURLOPT_PROXY, "");  // "" also ignores the environment's proxies
    libcurl->easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Impl::Write);
    libcurl->easy_setopt(curl, CURLOPT_WRITEDATA, this);
  }

  std::string Describe(CURLcode code) const {
    return error_buffer[0] != '\0' ? std::string(error_buffer) : libcurl->easy_strerror(code);
  }
};

HttpPoster::HttpPoster(std::string url, std::vector<HttpHeader> headers, PostOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->url = std::move(url);
  impl_->headers = std::move(headers);
  impl_->options = options;
  impl_->Setup();
}

HttpPoster::~HttpPoster() {
  if (impl_->curl != nullptr) impl_->libcurl->easy_cleanup(impl_->curl);
}

PostResult HttpPoster::Post(const std::string& body, std::span<const HttpHeader> extra_headers,
                            Clock::time_point deadline) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  PostResult result;
  if (s.curl == nullptr) {
    result.error = s.setup_error;
    return result;
  }
  const auto started = Clock::now();
  const double left = std::chrono::duration<double>(deadline - started).count();
  if (left < 0.001) {
    result.error = "the deadline passed before the request";
    return result;
  }
  const long timeout_ms = std::max(1L, std::lround(left * 1000));
  const bool connect_limited = left < s.options.connect_timeout_seconds;
  s.libcurl->easy_setopt(s.curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  s.libcurl->easy_setopt(
      s.curl, CURLOPT_CONNECTTIMEOUT_MS,
      connect_limited ? timeout_ms : std::lround(s.options.connect_timeout_seconds * 1000));

  curl_slist* header_list = s.libcurl->slist_append(nullptr, "Expect:");
  for (const HttpHeader& header : s.headers)
    header_list = s.libcurl->slist_append(header_list, CurlHeaderLine(header.name, header.value).c_str());
  for (const HttpHeader& header : extra_headers)
    header_list = s.libcurl->slist_append(header_list, CurlHeaderLine(header.name, header.value).c_str());
  s.libcurl->easy_setopt(s.curl, CURLOPT_HTTPHEADER, header_list);
  s.libcurl->easy_setopt(s.curl, CURLOPT_POSTFIELDS, body.data());
  s.libcurl->easy_setopt(s.curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  s.response.clear();
  s.truncated = false;
  s.error_buffer[0] = '\0';

  const CURLcode code = s.libcurl->easy_perform(s.curl);

  s.libcurl->easy_setopt(s.curl, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
  s.libcurl->easy_setopt(s.curl, CURLOPT_POSTFIELDS, static_cast<const char*>(nullptr));
  s.libcurl->slist_free_all(header_list);

  long status = 0;
  s.libcurl->easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &status);
  long connects = 0;
  s.libcurl->easy_getinfo(s.curl, CURLINFO_NUM_CONNECTS, &connects);
  long request_bytes = 0;
  s.libcurl->easy_getinfo(s.curl, CURLINFO_REQUEST_SIZE, &request_bytes);
  result.new_connection = connects > 0;
  result.request_sent = request_bytes > 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const bool answered = code == CURLE_OK || (code == CURLE_WRITE_ERROR && s.truncated && status != 0);
  if (!answered) {
    result.error = s.Describe(code);
    return result;
  }
  result.status = status;
  result.body = std::move(s.response);
  s.response = std::string();
  result.body_truncated = s.truncated;
  // libcurl reports 0 when there was no Retry-After (a 0 would mean nothing to a backoff either).
  curl_off_t retry_after = 0;
  if (s.libcurl->easy_getinfo(s.curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0 &&
      (status == 429 || status >= 500))
    result.retry_after_seconds = static_cast<double>(retry_after);
  return result;
}

}  // namespace runmon::http
