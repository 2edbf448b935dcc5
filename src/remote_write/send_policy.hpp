// What the sender does with a receiver's answer, and how long it waits before trying again: pure functions,
// so every rule has a test of its own.
//
// Remote write 1.0 (and what Prometheus, Mimir and VictoriaMetrics do): a 2xx is stored; no answer, a 5xx or
// a 429 is worth retrying with backoff; any other 4xx will never be taken and retrying it would block the
// queue. Among the 4xx, two cases are told apart by the receiver's body:
//  - "out of order sample" / "duplicate sample for timestamp" when this batch may already be stored (an
//    earlier try timed out after the request went out, got a 5xx, or was in flight at a restart): the
//    receiver refuses it because it has those samples, so the batch counts as delivered;
//  - "out of bounds" (or "too old", which Prometheus answers with a 5xx): the samples are older than the
//    receiver takes (its TSDB head, plus storage.tsdb.out_of_order_time_window when set), so they never
//    will be: dropped as too old rather than retried.
#pragma once

#include <optional>
#include <string>

namespace runmon::remote_write {

// What the transport (the HTTP client) answered for one POST.
struct PostResult {
  long status = 0;  // HTTP status; 0 when no response came
  std::string body;
  std::optional<double> retry_after_seconds;
  bool request_sent = false;  // some of the request may have reached the receiver
  std::string error;          // what failed when no response came
};

enum class Outcome {
  kDelivered,         // 2xx
  kAlreadyDelivered,  // a 4xx saying the receiver has these samples, after an unknown outcome
  kRetry,             // no response, 5xx, 429
  kTooOld,            // the receiver will never take samples this old
  kRejected,          // any other 4xx (and other statuses: 1xx, 3xx)
};

// `maybe_stored`: an earlier try of this batch may have reached the receiver's storage.
Outcome Classify(const PostResult& result, bool maybe_stored);

// After this answer, whether the batch may be stored even though the receiver did not say so: the request
// went out and no answer came, or a 5xx came (a receiver may store part of a request and fail the rest).
bool MayHaveStored(const PostResult& result);

struct BackoffOptions {
  double min_seconds = 0.1;
  double max_seconds = 30;
};

// The wait before try number `failures` + 1 (failures >= 1): min x 2^(failures - 1), at most max, with
// jitter (`unit_random` in [0, 1) takes it down by up to half, never below min) so that many runmons behind
// one receiver that restarts do not come back at the same instant. A Retry-After the receiver sent is
// honoured instead, from min up to twice max (a longer one is waited to twice max, then the batch is tried
// again and the receiver asked again).
double BackoffSeconds(const BackoffOptions& options, unsigned failures, double unit_random,
                      std::optional<double> retry_after_seconds);

// The start of a receiver's body for a message: valid UTF-8, at most `max_bytes`, "..." when cut.
std::string BodyExcerpt(const std::string& body, size_t max_bytes = 200);

}  // namespace runmon::remote_write
