// The sender's rules for answers and waits: every status class, the receivers' words for samples they have
// ("out of order", "duplicate sample") counted as delivered only after an unknown outcome, "out of bounds"
// and "too old" as too old, which answers may have stored a batch, the backoff's growth, cap, jitter and
// Retry-After, and the body excerpt for messages.
#include "remote_write/send_policy.hpp"

#include <string>

#include <gtest/gtest.h>

#include "core/utf8.hpp"

namespace runmon::remote_write {
namespace {

PostResult Answer(long status, std::string body = "") {
  PostResult result;
  result.status = status;
  result.body = std::move(body);
  result.request_sent = true;
  return result;
}

PostResult NoAnswer(bool request_sent) {
  PostResult result;
  result.request_sent = request_sent;
  result.error = "POST http://127.0.0.1:1/api/v1/write: timed out";
  return result;
}

TEST(SendPolicy, TwoHundredsAreDelivered) {
  for (long status : {200L, 204L, 299L}) {
    EXPECT_EQ(Classify(Answer(status), false), Outcome::kDelivered);
    EXPECT_EQ(Classify(Answer(status), true), Outcome::kDelivered);
  }
}

TEST(SendPolicy, NoAnswerFiveHundredsAnd429AreRetried) {
  EXPECT_EQ(Classify(NoAnswer(false), false), Outcome::kRetry);
  EXPECT_EQ(Classify(NoAnswer(true), true), Outcome::kRetry);
  for (long status : {500L, 502L, 503L, 599L, 429L}) {
    EXPECT_EQ(Classify(Answer(status, "out of order sample"), false), Outcome::kRetry) << status;
    EXPECT_EQ(Classify(Answer(status, "out of order sample"), true), Outcome::kRetry) << status;
  }
}

TEST(SendPolicy, HavingTheSamplesAlreadyCountsOnlyAfterAnUnknownOutcome) {
  const std::string bodies[] = {
      "out of order sample",
      "duplicate sample for timestamp",
      "Error: Out Of Order Sample for series {__name__=\"runmon_process_cpu_ratio\"}",
  };
  for (const std::string& body : bodies) {
    EXPECT_EQ(Classify(Answer(400, body), true), Outcome::kAlreadyDelivered) << body;
    EXPECT_EQ(Classify(Answer(400, body), false), Outcome::kRejected) << body;
  }
}

TEST(SendPolicy, OutOfBoundsAndTooOldAreTooOld) {
  EXPECT_EQ(Classify(Answer(400, "out of bounds"), false), Outcome::kTooOld);
  EXPECT_EQ(Classify(Answer(400, "out of bounds"), true), Outcome::kTooOld);
  EXPECT_EQ(
      Classify(Answer(400, "err-mimir-sample-too-old: the sample has been rejected because it is too old"),
               false),
      Outcome::kTooOld);
  // Prometheus 2.42 answers its ErrTooOldSample with a 500.
  EXPECT_EQ(Classify(Answer(500, "too old sample"), false), Outcome::kTooOld);
  EXPECT_EQ(Classify(Answer(503, "TOO OLD SAMPLE"), true), Outcome::kTooOld);
}

TEST(SendPolicy, OtherStatusesAreRejected) {
  EXPECT_EQ(Classify(Answer(400, "snappy: corrupt input"), true), Outcome::kRejected);
  EXPECT_EQ(Classify(Answer(401, "unauthorized"), false), Outcome::kRejected);
  EXPECT_EQ(Classify(Answer(404), false), Outcome::kRejected);
  EXPECT_EQ(Classify(Answer(413, "request too large"), false), Outcome::kRejected);
  EXPECT_EQ(Classify(Answer(302), false), Outcome::kRejected);
  EXPECT_EQ(Classify(Answer(100), false), Outcome::kRejected);
}

TEST(SendPolicy, WhatMayHaveStoredABatch) {
  EXPECT_TRUE(MayHaveStored(NoAnswer(true)));
  EXPECT_FALSE(MayHaveStored(NoAnswer(false)));
  EXPECT_TRUE(MayHaveStored(Answer(500)));
  EXPECT_TRUE(MayHaveStored(Answer(503)));
  EXPECT_FALSE(MayHaveStored(Answer(429)));
  EXPECT_FALSE(MayHaveStored(Answer(400)));
  EXPECT_FALSE(MayHaveStored(Answer(200)));
}

TEST(SendPolicy, BackoffDoublesUpToTheMaximum) {
  const BackoffOptions options{0.1, 30};
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0, std::nullopt), 0.1);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 2, 0, std::nullopt), 0.2);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 5, 0, std::nullopt), 1.6);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 9, 0, std::nullopt), 25.6);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 10, 0, std::nullopt), 30);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 4000000000u, 0, std::nullopt), 30);
}

TEST(SendPolicy, JitterTakesUpToHalfAndNeverGoesBelowTheMinimum) {
  const BackoffOptions options{0.1, 30};
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 5, 0.5, std::nullopt), 1.2);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 10, 0.999999, std::nullopt), 30 - 0.999999 * 15);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0.999, std::nullopt), 0.1);
  // Out-of-range randomness is clamped.
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 10, 7, std::nullopt), 15);
}

TEST(SendPolicy, RetryAfterIsHonouredUpToTwiceTheMaximum) {
  const BackoffOptions options{0.1, 30};
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0.5, 7), 7);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 8, 0.5, 45), 45);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0.5, 3600), 60);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0.5, 0), 0.1);
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 1, 0.5, -3), 0.1);
  // A Retry-After that is not a number falls back to the backoff.
  EXPECT_DOUBLE_EQ(BackoffSeconds(options, 2, 0, std::numeric_limits<double>::quiet_NaN()), 0.2);
}

TEST(SendPolicy, BodyExcerptIsShortValidAndTrimmed) {
  EXPECT_EQ(BodyExcerpt("out of bounds\n"), "out of bounds");
  EXPECT_EQ(BodyExcerpt(std::string(300, 'x')), std::string(200, 'x') + "...");
  // A two-byte character across the cut is left out whole.
  const std::string body = std::string(199, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(BodyExcerpt(body), std::string(199, 'x') + "...");
  const std::string invalid = BodyExcerpt("bad \xff byte");
  EXPECT_TRUE(IsValidUtf8(invalid));
  EXPECT_NE(invalid.find("byte"), std::string::npos);
}

}  // namespace
}  // namespace runmon::remote_write
