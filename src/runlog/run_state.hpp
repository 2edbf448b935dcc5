// What a file is and what state its run is in, decided in one place for every reader (`runmon dump`,
// `runmon leet`, `runmon serve`), so a file gets the same verdict everywhere. A reader gathers evidence:
// what its LogReader found (the header checked, or why the file is not a run log; damage; a torn tail),
// what the records said (RunProgress: the writer, the exit record, the newest record time) and whether a
// writer holds the file's lock; JudgeRun turns that into a verdict.
//
// Odd cases: a file shorter than the 7-byte header is a run log being created while runmon's writer holds
// its lock, and not a run log otherwise (an empty file, a cut-off copy); W&B's writers take no lock, so their
// runs are running while a record arrived in the last 10 minutes (by the records' own times, so a copied old
// run is not mistaken for a live one); runmon's logs are crashed as soon as the lock is gone without an exit
// record. A file that does not start with W&B's header (2 GB of zeros included) is refused at its first
// bytes, never read further.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runlog/log_reader.hpp"
#include "runlog/wandb_record.pb.h"

namespace runmon::runlog {

enum class RunState { kNotARunLog, kRunning, kFinished, kFailed, kCrashed };
// "not a run log", "running", "finished", "failed", "crashed".
std::string_view RunStateName(RunState state);

// W&B's LEET calls a run whose writer takes no lock crashed after this long without a record.
inline constexpr double kQuietLimitSeconds = 600;

// What the records read so far say about the run; fed every record (cheap: no record is kept).
class RunProgress {
 public:
  void Note(const wandb::Record& record);

  // The header names runmon as the writer (runmon's writer holds the log's lock while it writes).
  bool runmon_writer() const { return runmon_writer_; }
  std::optional<int> exit_code() const { return exit_code_; }
  // The exit record's runtime: whole seconds in W&B's format.
  std::optional<double> exit_runtime() const { return exit_runtime_; }
  // The run record's start time (else the environment record's), seconds since the epoch.
  std::optional<double> start_time() const { return start_time_; }
  // The newest time a stats record (its timestamp) or a history record (its _timestamp) carries.
  std::optional<double> last_time() const { return last_time_; }
  // A sample's time known without its record (a summary index's newest stats time).
  void NoteSampleTime(double seconds) { NoteTime(seconds); }

 private:
  void NoteTime(double seconds);

  bool runmon_writer_ = false;
  std::optional<int> exit_code_;
  std::optional<double> exit_runtime_;
  std::optional<double> start_time_;
  std::optional<double> last_time_;
};

// What a reader found in the file itself.
struct LogEvidence {
  std::string refusal;       // the reader failed: not a run log, an unsupported version, unreadable
  bool header_read = false;  // the file header was read and is W&B's
  uint64_t file_bytes = 0;   // the file's size when it was looked at
  bool writer_lock_held = false;
  bool damaged = false;    // bytes were skipped
  bool torn_tail = false;  // the data read ends inside a record
};

// From a reader whose last Next() said `last`, over the open file `fd` (its size and lock are looked at).
LogEvidence GatherEvidence(const LogReader& reader, ReadOutcome last, int fd);

struct RunVerdict {
  RunState state = RunState::kNotARunLog;
  std::optional<int> exit_code;  // finished and failed runs
  std::string reason;            // not a run log: why ("not a W&B run log (...)", "3 bytes: too short ...")
  bool damaged = false;
  bool torn_tail = false;
};

// The verdict: not a run log (the reader's refusal, or too short without a writer), finished (exit code
// 0) or failed (another code) once the exit record is in, running while a writer holds the lock, crashed
// when runmon's writer is gone without an exit record, else running while the newest record time (the run's
// start time without one) is within `quiet_limit_seconds` of `now_seconds`, crashed after that.
RunVerdict JudgeRun(const LogEvidence& evidence, const RunProgress& progress, double now_seconds,
                    double quiet_limit_seconds = kQuietLimitSeconds);

// Reads a value_json as a finite number ("12.5", "4", "1e+21"; "true" is not a number); nullopt otherwise.
std::optional<double> ParseJsonNumber(std::string_view value_json);

}  // namespace runmon::runlog
