// The one decision of a run's state (see run_state.hpp).
#include "runlog/run_state.hpp"

#include <sys/stat.h>

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "runlog/log_format.hpp"

namespace runmon::runlog {
namespace {

double TimestampSeconds(const google::protobuf::Timestamp& timestamp) {
  return static_cast<double>(timestamp.seconds()) + static_cast<double>(timestamp.nanos()) * 1e-9;
}

}  // namespace

std::string_view RunStateName(RunState state) {
  switch (state) {
    case RunState::kNotARunLog:
      return "not a run log";
    case RunState::kRunning:
      return "running";
    case RunState::kFinished:
      return "finished";
    case RunState::kFailed:
      return "failed";
    case RunState::kCrashed:
      return "crashed";
  }
  return "unknown";
}

namespace {
// Plain decimals of at most 15 significant digits ("45.3", "-0.25", "1024"), the shape nearly every
// metric value has: the digits as an integer (exact below 2^53) divided by a power of ten (exact up to
// 10^22) is one correctly rounded division, the very double from_chars gives. Anything else (an exponent,
// more digits) is left to from_chars.
std::optional<double> ParseShortDecimal(std::string_view text) {
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t at = text.front() == '-' ? 1 : 0;
  uint64_t digits = 0;
  size_t count = 0;
  size_t fraction = 0;
  bool point = false;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c >= '0' && c <= '9') {
      if (++count > 15) return std::nullopt;
      digits = digits * 10 + static_cast<uint64_t>(c - '0');
      if (point) ++fraction;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      return std::nullopt;
    }
  }
  const double magnitude = static_cast<double>(digits) / kPowersOfTen[fraction];
  return text.front() == '-' ? -magnitude : magnitude;
}
}  // namespace

std::optional<double> ParseJsonNumber(std::string_view value_json) {
  // JSON numbers only: no leading '+', no hex, no "inf"/"nan" (from_chars would take those).
  if (value_json.empty()) return std::nullopt;
  const char first = value_json.front();
  if (first != '-' && (first < '0' || first > '9')) return std::nullopt;
  if (value_json.size() > 1 && first == '-' && (value_json[1] < '0' || value_json[1] > '9')) {
    return std::nullopt;
  }
  if (first != '-' || value_json.size() > 1) {
    if (const auto value = ParseShortDecimal(value_json)) return value;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(value_json.data(), value_json.data() + value_json.size(), value);
  if (error != std::errc() || end != value_json.data() + value_json.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

void RunProgress::NoteTime(double seconds) {
  if (!last_time_ || seconds > *last_time_) last_time_ = seconds;
}

void RunProgress::Note(const wandb::Record& record) {
  switch (record.record_type_case()) {
    case wandb::Record::kHeader:
      runmon_writer_ = record.header().version_info().producer().starts_with("runmon");
      break;
    case wandb::Record::kRun:
      if (record.run().has_start_time()) start_time_ = TimestampSeconds(record.run().start_time());
      break;
    case wandb::Record::kEnvironment:
      // W&B's environment record may say when the run started; the run record's time wins.
      if (record.environment().has_started_at() && !start_time_) {
        start_time_ = TimestampSeconds(record.environment().started_at());
      }
      break;
    case wandb::Record::kStats:
      NoteTime(TimestampSeconds(record.stats().timestamp()));
      break;
    case wandb::Record::kHistory:
      for (const auto& item : record.history().item()) {
        if (item.key() != "_timestamp") continue;
        if (auto value = ParseJsonNumber(item.value_json())) NoteTime(*value);
      }
      break;
    case wandb::Record::kExit:
      exit_code_ = record.exit().exit_code();
      exit_runtime_ = record.exit().runtime();
      break;
    default:
      break;
  }
}

LogEvidence GatherEvidence(const LogReader& reader, ReadOutcome last, int fd) {
  LogEvidence evidence;
  if (last == ReadOutcome::kFailed)
    evidence.refusal = reader.error().empty() ? "cannot be read" : reader.error();
  evidence.header_read = reader.header_read();
  struct stat info {};
  if (::fstat(fd, &info) == 0) evidence.file_bytes = static_cast<uint64_t>(info.st_size);
  evidence.writer_lock_held = WriterHoldsLock(fd);
  evidence.damaged = !reader.damage().empty();
  evidence.torn_tail = last == ReadOutcome::kIncomplete && reader.header_read();
  return evidence;
}

RunVerdict JudgeRun(const LogEvidence& evidence, const RunProgress& progress, double now_seconds,
                    double quiet_limit_seconds) {
  RunVerdict verdict;
  verdict.damaged = evidence.damaged;
  verdict.torn_tail = evidence.torn_tail;
  if (!evidence.refusal.empty()) {
    verdict.reason = evidence.refusal;
    return verdict;
  }
  if (!evidence.header_read) {
    // Only a file shorter than the header is left here (the reader refuses a wrong one at once).
    if (evidence.writer_lock_held) {
      verdict.state = RunState::kRunning;
      return verdict;
    }
    verdict.reason = fmt::format("{} bytes: too short to be a run log (W&B's header is {} bytes)",
                                 evidence.file_bytes, kFileHeaderSize);
    return verdict;
  }
  if (const auto code = progress.exit_code()) {
    verdict.state = *code == 0 ? RunState::kFinished : RunState::kFailed;
    verdict.exit_code = code;
    return verdict;
  }
  if (evidence.writer_lock_held) {
    verdict.state = RunState::kRunning;
    return verdict;
  }
  // runmon's writer holds its lock until the exit record is written: without it, the writer is gone.
  if (progress.runmon_writer()) {
    verdict.state = RunState::kCrashed;
    return verdict;
  }
  const auto last = progress.last_time() ? progress.last_time() : progress.start_time();
  verdict.state =
      last && now_seconds - *last <= quiet_limit_seconds ? RunState::kRunning : RunState::kCrashed;
  return verdict;
}

}  // namespace runmon::runlog
