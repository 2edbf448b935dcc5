// The sender's rules for answers and waits. See send_policy.hpp.
#include "remote_write/send_policy.hpp"

#include <algorithm>
#include <cmath>

#include "core/utf8.hpp"

namespace runmon::remote_write {
namespace {

bool Says(const std::string& lowered_body, std::string_view words) {
  return lowered_body.find(words) != std::string::npos;
}

}  // namespace

Outcome Classify(const PostResult& result, bool maybe_stored) {
  const long status = result.status;
  if (status >= 200 && status < 300) return Outcome::kDelivered;
  if (status == 0 || status == 429) return Outcome::kRetry;
  const std::string body = AsciiLowercase(result.body);
  if (status >= 500 && status < 600) return Says(body, "too old") ? Outcome::kTooOld : Outcome::kRetry;
  if (status >= 400 && status < 500) {
    if (maybe_stored && (Says(body, "out of order") || Says(body, "duplicate sample"))) {
      return Outcome::kAlreadyDelivered;
    }
    if (Says(body, "out of bounds") || Says(body, "too old")) return Outcome::kTooOld;
  }
  return Outcome::kRejected;
}

bool MayHaveStored(const PostResult& result) {
  if (result.status == 0) return result.request_sent;
  return result.status >= 500 && result.status < 600;
}

double BackoffSeconds(const BackoffOptions& options, unsigned failures, double unit_random,
                      std::optional<double> retry_after_seconds) {
  const double min = std::max(options.min_seconds, 0.0);
  const double max = std::max(options.max_seconds, min);
  if (retry_after_seconds && std::isfinite(*retry_after_seconds)) {
    return std::clamp(*retry_after_seconds, min, 2 * max);
  }
  const unsigned doublings = failures == 0 ? 0 : std::min(failures - 1, 62u);
  const double full = std::min(max, min * std::ldexp(1.0, static_cast<int>(doublings)));
  const double jitter = std::clamp(unit_random, 0.0, 1.0) * full / 2;
  return std::max(min, full - jitter);
}

std::string BodyExcerpt(const std::string& body, size_t max_bytes) {
  std::string valid = ToValidUtf8(body);
  while (!valid.empty() && (valid.back() == '\n' || valid.back() == '\r' || valid.back() == ' '))
    valid.pop_back();
  if (valid.size() <= max_bytes) return valid;
  size_t cut = 0;
  while (cut < valid.size()) {
    const size_t length = Utf8SequenceLength(valid, cut);
    if (cut + length > max_bytes) break;
    cut += length;
  }
  valid.resize(cut);
  return valid + "...";
}

}  // namespace runmon::remote_write
