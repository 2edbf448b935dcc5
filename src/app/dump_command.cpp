// `runmon dump` (see dump_command.hpp). CSV needs its columns before its rows, so it reads the log twice:
// once for the keys (in order of first appearance), once for the rows. When following, a key that shows
// up later starts a new header line with the longer column list. OpenMetrics needs each family's values
// together, so it reads the log once for the run's labels and a count of each series' values, then again
// per range of families that fits the backfill's memory (export/openmetrics_backfill.hpp); each later
// reading stops at the records the first one found, so a live run is dumped as it was then. What the file
// is, and whether its run is still running (so following goes on), is runlog::JudgeRun's verdict, as in
// leet and the dashboard.
#include "app/dump_command.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "app/output.hpp"
#include "core/wall_clock.hpp"
#include "export/openmetrics_backfill.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/run_directory.hpp"
#include "runlog/run_state.hpp"

namespace runmon {
namespace {

using runlog::ReadOutcome;
using runlog::RecordReader;

// stdout with error tracking: a closed pipe ends the dump quietly, other errors are reported.
class Output {
 public:
  bool Write(std::string_view text) {
    if (failed_) return false;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) Fail();
    return !failed_;
  }
  bool Flush() {
    if (!failed_ && std::fflush(stdout) != 0) Fail();
    return !failed_;
  }
  bool failed() const { return failed_; }
  int error() const { return error_; }

 private:
  void Fail() {
    failed_ = true;
    error_ = errno;
  }
  bool failed_ = false;
  int error_ = 0;
};

// Waits for the file to change (inotify; polling when inotify is unavailable), at most `timeout_ms`.
class ChangeWaiter {
 public:
  explicit ChangeWaiter(const std::string& path) {
    fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ >= 0 && ::inotify_add_watch(fd_, path.c_str(), IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB) < 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~ChangeWaiter() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChangeWaiter(const ChangeWaiter&) = delete;
  ChangeWaiter& operator=(const ChangeWaiter&) = delete;

  void Wait(int timeout_ms) {
    if (fd_ < 0) {
      ::poll(nullptr, 0, std::min(timeout_ms, 250));
      return;
    }
    pollfd watched{fd_, POLLIN, 0};
    if (::poll(&watched, 1, timeout_ms) > 0) {
      char events[4096];
      while (::read(fd_, events, sizeof(events)) > 0) {
      }
    }
  }

 private:
  int fd_ = -1;
};

std::string CsvField(std::string_view value_json) {
  std::string text(value_json);
  if (!value_json.empty() && value_json.front() == '"') {
    auto parsed = nlohmann::json::parse(value_json, nullptr, false);
    if (parsed.is_string()) text = parsed.get<std::string>();
  }
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

double Seconds(const google::protobuf::Timestamp& timestamp) {
  return static_cast<double>(timestamp.seconds()) + timestamp.nanos() / 1e9;
}

std::string FormatSeconds(double seconds) {
  return fmt::format("{}", std::round(seconds * 1e6) / 1e6);
}

// A stats record's time in milliseconds, rounded; nullopt without one or outside protobuf's Timestamp range
// (years 1 to 9999), which a damaged or hostile log can hold.
std::optional<int64_t> TimestampMilliseconds(const runmon::wandb::StatsRecord& stats) {
  if (!stats.has_timestamp()) return std::nullopt;
  const auto& timestamp = stats.timestamp();
  constexpr int64_t kMinSeconds = -62135596800;  // 0001-01-01T00:00:00Z
  constexpr int64_t kMaxSeconds = 253402300799;  // 9999-12-31T23:59:59Z
  if (timestamp.seconds() < kMinSeconds || timestamp.seconds() > kMaxSeconds || timestamp.nanos() < 0 ||
      timestamp.nanos() > 999999999) {
    return std::nullopt;
  }
  return timestamp.seconds() * 1000 + (timestamp.nanos() + 500000) / 1000000;
}

class Dumper {
 public:
  Dumper(const DumpOptions& options, std::string path, int fd)
      : options_(options), path_(std::move(path)), fd_(fd) {}

  int Run() {
    if (options_.format == "openmetrics") return RunOpenMetrics();
    if (options_.format == "csv") {
      // First pass: the columns.
      RecordReader keys(runlog::FileSource(fd_));
      for (;;) {
        const ReadOutcome outcome = keys.Next();
        if (outcome == ReadOutcome::kFailed) return Refuse(Judge(keys, outcome));
        if (outcome != ReadOutcome::kRecord) break;
        if (keys.record().has_stats()) {
          for (const auto& item : keys.record().stats().item()) AddColumn(item.key());
        }
      }
      header_written_columns_ = 0;
      WriteCsvHeader();
    }
    RecordReader reader(runlog::FileSource(fd_));
    ChangeWaiter waiter(path_);
    for (;;) {
      const ReadOutcome outcome = reader.Next();
      ReportDamage(reader);
      if (outcome == ReadOutcome::kRecord) {
        if (!Print(reader)) break;
        continue;
      }
      runlog::RunVerdict verdict = Judge(reader, outcome);
      if (options_.follow && !FileRemoved() && outcome != ReadOutcome::kFailed) {
        if (!output_.Flush()) break;
        if (verdict.state == runlog::RunState::kRunning) {
          waiter.Wait(1000);
          continue;
        }
        // After the exit record, a moment for what the writer writes after it (its final record).
        if (verdict.exit_code && !grace_used_) {
          grace_used_ = true;
          waiter.Wait(300);
          continue;
        }
        if (verdict.state == runlog::RunState::kCrashed) {
          Warn(fmt::format("{}: its writer has stopped without an exit record", path_));
        }
      }
      if (verdict.state == runlog::RunState::kNotARunLog) return Refuse(verdict);
      if (outcome == ReadOutcome::kIncomplete) WarnIncomplete(reader, verdict);
      break;
    }
    ReportDamage(reader, true);
    output_.Flush();
    if (output_.failed() && output_.error() != EPIPE) {
      Warn(fmt::format("writing the output failed: {}", std::strerror(output_.error())));
      return 1;
    }
    return damaged_ ? 1 : 0;
  }

 private:
  runlog::RunVerdict Judge(const RecordReader& reader, ReadOutcome last) const {
    return runlog::JudgeRun(runlog::GatherEvidence(reader.log(), last, fd_), progress_, WallSeconds());
  }

  // Not a run log: the verdict's reason, as leet words it too.
  int Refuse(const runlog::RunVerdict& verdict) {
    output_.Flush();
    Warn(fmt::format("{}: {}", path_, verdict.reason));
    return 1;
  }

  void WarnIncomplete(const RecordReader& reader, const runlog::RunVerdict& verdict) const {
    Warn(fmt::format("{}: ends inside a record: {} bytes at offset {} are incomplete ({})", path_,
                     reader.log().incomplete_bytes(), reader.log().position(),
                     verdict.state == runlog::RunState::kRunning ? "the writer is still writing"
                                                                 : "the writer stopped part way"));
  }

  // --format openmetrics: the survey (labels, damage, each series' count), then the backfill's passes.
  int RunOpenMetrics() {
    OpenMetricsBackfill backfill(options_.openmetrics_points_per_pass);
    BackfillLabels labels;
    uint64_t records = 0;
    uint64_t untimed_records = 0;
    uint64_t not_numbers = 0;
    RecordReader survey(runlog::FileSource(fd_));
    ReadOutcome outcome = ReadOutcome::kRecord;
    for (;;) {
      outcome = survey.Next();
      ReportDamage(survey);
      if (outcome != ReadOutcome::kRecord) break;
      ++records;
      const auto& record = survey.record();
      progress_.Note(record);
      NoteLabels(record, labels);
      if (!record.has_stats()) continue;
      if (!TimestampMilliseconds(record.stats())) {
        ++untimed_records;
        continue;
      }
      for (const auto& item : record.stats().item()) {
        if (runlog::ParseJsonNumber(item.value_json())) {
          backfill.Survey(item.key());
        } else {
          ++not_numbers;
        }
      }
    }
    const runlog::RunVerdict verdict = Judge(survey, outcome);
    if (verdict.state == runlog::RunState::kNotARunLog) return Refuse(verdict);
    if (outcome == ReadOutcome::kIncomplete) WarnIncomplete(survey, verdict);
    ReportDamage(survey, true);

    const auto write = [this](std::string_view text) { return output_.Write(text); };
    const size_t passes = backfill.Plan();
    for (size_t pass = 0; pass < passes && !output_.failed(); ++pass) {
      RecordReader reader(runlog::FileSource(fd_));
      for (uint64_t read = 0; read < records; ++read) {
        if (reader.Next() != ReadOutcome::kRecord) {
          Warn(fmt::format("{}: the log changed while it was read: {} records at first, only {} later", path_,
                           records, read));
          return 1;
        }
        if (!reader.record().has_stats()) continue;
        const auto& stats = reader.record().stats();
        const auto timestamp_ms = TimestampMilliseconds(stats);
        if (!timestamp_ms) continue;
        for (const auto& item : stats.item()) {
          if (auto value = runlog::ParseJsonNumber(item.value_json())) {
            backfill.Collect(pass, *timestamp_ms, item.key(), *value);
          }
        }
      }
      backfill.WritePass(pass, labels, write);
    }
    if (!output_.failed()) backfill.WriteEnd(write);
    output_.Flush();
    // A cut-off backfill is not one (no `# EOF`): a closed pipe is an error here too.
    if (output_.failed()) {
      Warn(fmt::format("writing the output failed: {}", std::strerror(output_.error())));
      return 1;
    }
    ReportLeftOut(backfill, untimed_records, not_numbers);
    return damaged_ ? 1 : 0;
  }

  // The run record's host and id, the environment records' job identity (merged as W&B merges them: a
  // later record's field replaces an earlier one's).
  static void NoteLabels(const runmon::wandb::Record& record, BackfillLabels& labels) {
    if (record.has_run()) {
      labels.host = record.run().host();
      labels.run_id = record.run().run_id();
    }
    if (record.has_environment() && record.environment().has_job()) {
      const auto& job = record.environment().job();
      if (!job.job_id().empty()) labels.job_id = job.job_id();
      if (!job.node_rank().empty()) labels.node_rank = job.node_rank();
    }
  }

  static void ReportLeftOut(const OpenMetricsBackfill& backfill, uint64_t untimed_records,
                            uint64_t not_numbers) {
    const auto counted = [](uint64_t count, std::string_view one, std::string_view many) {
      return fmt::format("{} {}", count, count == 1 ? one : many);
    };
    const BackfillCounts& counts = backfill.counts();
    if (counts.unexported_keys > 0) {
      std::string examples;
      for (const std::string& key : backfill.unexported_examples()) {
        if (!examples.empty()) examples += ", ";
        AppendJsonString(examples, key);
      }
      if (counts.unexported_keys > backfill.unexported_examples().size()) examples += ", ...";
      Warn(fmt::format("left out {} of {} without a Prometheus name ({})",
                       counted(counts.unexported_values, "value", "values"),
                       counted(counts.unexported_keys, "key", "keys"), examples));
    }
    if (not_numbers > 0) {
      Warn("left out " + counted(not_numbers, "value that is not a number", "values that are not numbers"));
    }
    if (untimed_records > 0) {
      Warn(fmt::format("left out {} without a valid time",
                       counted(untimed_records, "stats record", "stats records")));
    }
    if (counts.duplicates > 0) {
      Warn(fmt::format("left out {} their series' millisecond with a later one",
                       counted(counts.duplicates, "value that shares", "values that share")));
    }
  }

  bool FileRemoved() const {
    struct stat info {};
    return ::fstat(fd_, &info) == 0 && info.st_nlink == 0;
  }

  void ReportDamage(const RecordReader& reader, bool all = false) {
    const auto& damage = reader.damage();
    // The last range may still grow (adjacent damage is merged), so report it once it is settled: when a
    // later range exists or the read moved past it.
    while (reported_damage_ < damage.size()) {
      const auto& range = damage[reported_damage_];
      const bool settled = all || reported_damage_ + 1 < damage.size() ||
                           reader.log().position() > range.offset + range.length;
      if (!settled) break;
      Warn(fmt::format("{}: skipped bytes {}-{} ({} bytes): {}", path_, range.offset,
                       range.offset + range.length, range.length, range.reason));
      damaged_ = true;
      ++reported_damage_;
    }
  }

  bool Print(const RecordReader& reader) {
    const auto& record = reader.record();
    progress_.Note(record);
    if (record.has_run() && record.run().has_start_time()) start_time_ = Seconds(record.run().start_time());
    if (options_.format == "csv") return record.has_stats() ? PrintCsvRow(record.stats()) : true;
    std::string line = fmt::format(R"({{"index":{},"offset":{},"end":{},"length":{},"record_type":)",
                                   reader.index(), reader.offset(), reader.end(), reader.length());
    AppendJsonString(line, runlog::RecordTypeName(record));
    line += ",\"record\":";
    line += runlog::RecordToJson(record);
    line += "}\n";
    return output_.Write(line);
  }

  void AddColumn(const std::string& key) {
    if (column_index_.emplace(key, columns_.size()).second) columns_.push_back(key);
  }

  bool WriteCsvHeader() {
    std::string line = "_timestamp,_runtime";
    for (const auto& column : columns_) line += "," + CsvField(nlohmann::json(column).dump());
    header_written_columns_ = columns_.size();
    return output_.Write(line + "\n");
  }

  bool PrintCsvRow(const runmon::wandb::StatsRecord& stats) {
    for (const auto& item : stats.item()) AddColumn(item.key());
    if (columns_.size() != header_written_columns_ && !WriteCsvHeader()) return false;
    const double timestamp = Seconds(stats.timestamp());
    if (!start_time_) start_time_ = timestamp;
    std::vector<std::string_view> values(columns_.size());
    for (const auto& item : stats.item()) values[column_index_[item.key()]] = item.value_json();
    std::string line = FormatSeconds(timestamp) + "," + FormatSeconds(timestamp - *start_time_);
    for (const auto& value : values) {
      line += ',';
      line += CsvField(value);
    }
    return output_.Write(line + "\n");
  }

  const DumpOptions& options_;
  const std::string path_;
  const int fd_;
  Output output_;
  runlog::RunProgress progress_;
  bool grace_used_ = false;
  bool damaged_ = false;
  size_t reported_damage_ = 0;
  std::optional<double> start_time_;
  std::vector<std::string> columns_;
  std::unordered_map<std::string, size_t> column_index_;
  size_t header_written_columns_ = 0;
};

}  // namespace

int RunDumpCommand(const DumpOptions& options) {
  if (options.format != "jsonl" && options.format != "csv" && options.format != "openmetrics") {
    Warn(fmt::format("--format: '{}' is not jsonl, csv or openmetrics", options.format));
    return 2;
  }
  if (options.follow && options.format == "openmetrics") {
    Warn(
        "--follow: openmetrics writes each metric's values together, so it needs the run as it is now; "
        "dump without --follow");
    return 2;
  }
  auto log = runlog::FindRunLog(options.path);
  if (!log) {
    Warn(log.error());
    return 1;
  }
  const std::string path = log->string();
  auto opened = runlog::OpenLogForReading(*log);
  if (!opened) {
    Warn(opened.error());
    return 1;
  }
  const int fd = *opened;
  ::signal(SIGPIPE, SIG_IGN);
  const int status = Dumper(options, path, fd).Run();
  ::close(fd);
  return status;
}

}  // namespace runmon
