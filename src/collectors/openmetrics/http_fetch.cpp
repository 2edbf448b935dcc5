// The libcurl GET behind OpenMetrics scraping (see http_fetch.hpp for the choices). Error messages are built
// from what went wrong, not from libcurl's error buffer where that holds timings or byte counts: the sampler
// logs a failing collector's message again only when it changes, so a dead endpoint must fail with the same
// words every tick.
#include "collectors/openmetrics/http_fetch.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "http_client/curl_library.hpp"

namespace runmon::openmetrics {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kLoopback = "localhost,127.0.0.0/8,::1";
constexpr double kMinAttemptSeconds = 0.01;  // a retry needs at least this much time before the deadline

double SecondsUntil(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

std::string ErrnoText(long error) {
  char buffer[256] = {};
  // GNU strerror_r returns the message, which may or may not be in buffer.
  const char* text = strerror_r(static_cast<int>(error), buffer, sizeof buffer);
  return text != nullptr ? std::string(text) : fmt::format("errno {}", error);
}

// The first line of an error page, short and printable, for a non-200 message.
std::string Snippet(std::string_view body) {
  body = body.substr(0, body.find('\n'));
  if (body.size() > 120) body = body.substr(0, 120);
  std::string out = ToValidUtf8(body);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool RetryableCurlCode(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

bool RetryableStatus(long status) {
  return status == 429 || (status >= 500 && status <= 599 && status != 501);
}

}  // namespace

std::string FormatByteSize(size_t bytes) {
  if (bytes >= (size_t{1} << 30) && bytes % (size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

void ApplyProxySetting(const char* value, FetchOptions& options) {
  const std::string_view text = value == nullptr ? std::string_view() : std::string_view(value);
  if (text.empty()) {
    options.proxy = ProxyMode::kNone;
  } else if (text == "environment") {
    options.proxy = ProxyMode::kEnvironment;
  } else {
    options.proxy = ProxyMode::kUrl;
    options.proxy_url = std::string(text);
  }
}

struct HttpFetcher::Impl {
  std::string url;
  std::string shown_url;  // password redacted
  FetchOptions options;
  const http::CurlLibrary* libcurl = nullptr;  // loaded on the first fetcher's setup
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  std::string no_proxy;
  std::string body;
  std::string content_type;
  bool too_large = false;
  long long announced_length = -1;  // the last response head's Content-Length
  char error_buffer[CURL_ERROR_SIZE] = {};
  FetchStats stats;
  std::mt19937_64 random{std::random_device{}()};
  std::string setup_error;

  static size_t Write(char* data, size_t size, size_t count, void* user) {
    auto* self = static_cast<Impl*>(user);
    const size_t bytes = size * count;
    if (bytes >
        self->options.max_response_bytes - std::min(self->body.size(), self->options.max_response_bytes)) {
      self->too_large = true;
      return 0;  // CURLE_WRITE_ERROR: the transfer stops here
    }
    self->body.append(data, bytes);
    return bytes;
  }

  // libcurl refuses an announced length over CURLOPT_MAXFILESIZE before it records the length, so the head's
  // Content-Length is noted here for the message.
  static size_t Header(char* data, size_t size, size_t count, void* user) {
    auto* self = static_cast<Impl*>(user);
    const size_t bytes = size * count;
    std::string_view line(data, bytes);
    if (line.starts_with("HTTP/")) self->announced_length = -1;  // a new head (after a redirect)
    constexpr std::string_view kName = "content-length:";
    if (line.size() > kName.size() && AsciiLowercase(line.substr(0, kName.size())) == kName) {
      line.remove_prefix(kName.size());
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      long long value = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
      if (ec == std::errc() && end != line.data()) self->announced_length = value;
    }
    return bytes;
  }

  void Setup(const std::vector<OpenMetricsHeader>& extra_headers) {
    auto handle = http::NewCurlHandle(url, options.max_redirects, error_buffer);
    if (!handle) {
      setup_error = handle.error();
      return;
    }
    libcurl = handle->library;
    curl = handle->handle;
    bool have_accept = false;
    for (const OpenMetricsHeader& header : extra_headers) {
      if (AsciiLowercase(header.name) == "accept") {
        have_accept = true;
      }
      headers = libcurl->slist_append(headers, http::CurlHeaderLine(header.name, header.value).c_str());
    }
    if (!have_accept)
      headers = libcurl->slist_append(headers, fmt::format("Accept: {}", kAcceptHeader).c_str());

    libcurl->easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    libcurl->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    libcurl->easy_setopt(curl, CURLOPT_USERAGENT, "runmon (OpenMetrics scraper)");
    libcurl->easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl can decode
    libcurl->easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Impl::Write);
    libcurl->easy_setopt(curl, CURLOPT_WRITEDATA, this);
    libcurl->easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Impl::Header);
    libcurl->easy_setopt(curl, CURLOPT_HEADERDATA, this);
    libcurl->easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                         static_cast<curl_off_t>(options.max_response_bytes));
    libcurl->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_limit_bytes_per_second);
    libcurl->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options.low_speed_time_seconds);
    switch (options.proxy) {
      case ProxyMode::kNone:
        libcurl->easy_setopt(curl, CURLOPT_PROXY, "");  // "" also ignores the environment's proxies
        break;
      case ProxyMode::kEnvironment: {
        no_proxy = options.no_proxy.empty() ? std::string(kLoopback)
                                            : fmt::format("{},{}", options.no_proxy, kLoopback);
        libcurl->easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
        break;
      }
      case ProxyMode::kUrl:
        no_proxy = std::string(kLoopback);
        libcurl->easy_setopt(curl, CURLOPT_PROXY, options.proxy_url.c_str());
        libcurl->easy_setopt(curl, CURLOPT_NOPROXY, no_proxy.c_str());
        break;
    }
  }

  // Why an attempt failed, in words that stay the same from one tick to the next.
  std::string Describe(CURLcode code, bool deadline_limited) {
    switch (code) {
      case CURLE_WRITE_ERROR:
        if (too_large) {
          return fmt::format("response larger than {}", FormatByteSize(options.max_response_bytes));
        }
        break;
      case CURLE_FILESIZE_EXCEEDED:
        if (announced_length >= 0) {
          return fmt::format("response larger than {} (Content-Length: {})",
                             FormatByteSize(options.max_response_bytes), announced_length);
        }
        return fmt::format("response larger than {}", FormatByteSize(options.max_response_bytes));
      case CURLE_OPERATION_TIMEDOUT:
        if (std::string_view(error_buffer).starts_with("Operation too slow")) {
          return fmt::format("transfer slower than {} bytes/s for {} s",
                             options.low_speed_limit_bytes_per_second, options.low_speed_time_seconds);
        }
        if (deadline_limited) return "no complete response before the tick's deadline";
        return fmt::format("no complete response within {} s", options.attempt_timeout_seconds);
      case CURLE_COULDNT_CONNECT: {
        long os_error = 0;
        libcurl->easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_error);
        if (os_error != 0) return fmt::format("cannot connect: {}", ErrnoText(os_error));
        return "cannot connect";
      }
      case CURLE_TOO_MANY_REDIRECTS:
        return fmt::format("more than {} redirects", options.max_redirects);
      case CURLE_WEIRD_SERVER_REPLY:
        return fmt::format("the reply is not valid HTTP ({})", error_buffer);
      case CURLE_UNSUPPORTED_PROTOCOL: {
        // libcurl's words for bytes that are not an HTTP reply at all.
        if (std::string_view(error_buffer).find("HTTP/0.9") != std::string_view::npos) {
          return "the reply is not HTTP";
        }
        long redirects = 0;
        libcurl->easy_getinfo(curl, CURLINFO_REDIRECT_COUNT, &redirects);
        const std::string_view detail(error_buffer);
        return fmt::format("{}only http and https are allowed{}{}",
                           redirects > 0 ? "redirected to another scheme: " : "", detail.empty() ? "" : " - ",
                           detail);
      }
      case CURLE_PARTIAL_FILE:
        return "the response was cut short (the connection closed before the announced length)";
      case CURLE_GOT_NOTHING:
        return "the server closed the connection without a response";
      default:
        break;
    }
    if (error_buffer[0] != '\0') return std::string(error_buffer);
    return libcurl->easy_strerror(code);
  }
};

HttpFetcher::HttpFetcher(std::string url, std::vector<OpenMetricsHeader> headers, FetchOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->shown_url = RedactUrl(url);
  impl_->url = std::move(url);
  impl_->options = std::move(options);
  impl_->Setup(headers);
}

HttpFetcher::~HttpFetcher() {
  if (impl_->libcurl == nullptr) return;  // libcurl never loaded: nothing was allocated
  if (impl_->curl != nullptr) impl_->libcurl->easy_cleanup(impl_->curl);
  impl_->libcurl->slist_free_all(impl_->headers);
}

std::string_view HttpFetcher::Body() const {
  return impl_->body;
}

const std::string& HttpFetcher::ContentType() const {
  return impl_->content_type;
}

const FetchStats& HttpFetcher::Stats() const {
  return impl_->stats;
}

void HttpFetcher::TrimBuffer() {
  std::string& body = impl_->body;
  if (body.capacity() > (size_t{1} << 20) && body.size() < body.capacity() / 4) {
    std::string().swap(body);
  }
}

Status HttpFetcher::Fetch(Clock::time_point deadline) {
  Impl& s = *impl_;
  const auto started = Clock::now();
  s.stats = FetchStats{};
  s.content_type.clear();
  auto fail = [&](std::string_view why) {
    s.stats.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    s.body.clear();
    return Error{fmt::format("GET {}: {}", s.shown_url, why)};
  };
  if (s.curl == nullptr) return fail(s.setup_error);

  std::string last_error;
  for (unsigned attempt = 0;; ++attempt) {
    const double left = SecondsUntil(deadline);
    if (left < kMinAttemptSeconds) {
      return fail(last_error.empty() ? "the tick's deadline passed before the request" : last_error);
    }
    const bool deadline_limited = left < s.options.attempt_timeout_seconds;
    const double timeout = std::min(left, s.options.attempt_timeout_seconds);
    const auto timeout_ms = std::max<long>(1, std::lround(timeout * 1000));
    s.libcurl->easy_setopt(s.curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    s.libcurl->easy_setopt(s.curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    s.body.clear();
    s.too_large = false;
    s.announced_length = -1;
    s.error_buffer[0] = '\0';

    const CURLcode code = s.libcurl->easy_perform(s.curl);
    ++s.stats.attempts;
    long connects = 0;
    s.libcurl->easy_getinfo(s.curl, CURLINFO_NUM_CONNECTS, &connects);
    s.stats.new_connections += connects;
    s.libcurl->easy_getinfo(s.curl, CURLINFO_REDIRECT_COUNT, &s.stats.redirects);
    long status = 0;
    s.libcurl->easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &status);
    if (status != 0) s.stats.http_status = status;

    bool retry = false;
    curl_off_t retry_after = 0;
    if (code == CURLE_OK && status == 200) {
      const char* type = nullptr;
      s.libcurl->easy_getinfo(s.curl, CURLINFO_CONTENT_TYPE, &type);
      if (type != nullptr) s.content_type = type;
      s.stats.body_bytes = s.body.size();
      s.stats.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      return OkStatus();
    }
    if (code == CURLE_OK) {
      const std::string snippet = Snippet(s.body);
      last_error = fmt::format("HTTP status {}{}{}", status, snippet.empty() ? "" : ": ", snippet);
      if (status >= 300 && status < 400) last_error += " (a redirect without a usable Location)";
      retry = RetryableStatus(status);
      if (status == 429 || status == 503) s.libcurl->easy_getinfo(s.curl, CURLINFO_RETRY_AFTER, &retry_after);
    } else {
      last_error = s.Describe(code, deadline_limited);
      // A server that dribbles (slow-loris) is not asked again: it would only take the rest of the tick.
      retry = RetryableCurlCode(code) && !std::string_view(s.error_buffer).starts_with("Operation too slow");
    }
    if (!retry || attempt >= s.options.max_retries) return fail(last_error);

    const double base =
        std::min(s.options.backoff_max_seconds,
                 s.options.backoff_initial_seconds * std::ldexp(1.0, static_cast<int>(attempt)));
    double wait = std::uniform_real_distribution<double>(0.5 * base, base)(s.random);
    if (retry_after > 0) wait = std::max(wait, static_cast<double>(retry_after));
    if (SecondsUntil(deadline) - wait < kMinAttemptSeconds) {
      if (retry_after > 0) {
        last_error += fmt::format(" (Retry-After {} s is past the tick's deadline)", retry_after);
      }
      return fail(last_error);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

}  // namespace runmon::openmetrics
