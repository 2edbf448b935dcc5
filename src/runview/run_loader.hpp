// Feeds a RunModel from a run log on disk, a slice at a time: Read() stops when its time budget is spent,
// so the first frame shows after a few tens of milliseconds and a 250 MB run loads progressively while the
// UI stays responsive. Following a growing log costs one fstat per poll; only new bytes are read (the
// reader resumes at its position, and re-reads a torn record from its first chunk once it is complete).
// Damage (bad checksums, zeroed blocks, undecodable records) is skipped by the reader and kept here as
// warnings; what is readable is shown. Opening checks the file header at once, so a file that is not a run
// log is known (Verdict) before anything is read into a model. A long log (kIndexedLoadBytes and more) is
// loaded from its summary index instead (indexed_load.hpp: built in the background when missing or stale),
// and read in full from where the index ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runlog/record_reader.hpp"
#include "runview/indexed_load.hpp"
#include "runview/run_model.hpp"

namespace runmon::runview {

class RunLoader {
 public:
  // Opens the log (a regular file; FIFOs, devices and directories are refused) and checks its header.
  static Result<std::unique_ptr<RunLoader>> Open(const std::filesystem::path& log,
                                                 const IndexedLoadOptions& options = {});
  ~RunLoader();
  RunLoader(const RunLoader&) = delete;
  RunLoader& operator=(const RunLoader&) = delete;

  // Reads records into `model` until the data ends or `budget` is spent. True when it stopped at the end of
  // the data (caught up), false when the budget ran out first or the log cannot be read (see error()).
  bool Read(RunModel& model, std::chrono::steady_clock::duration budget);
  // The file is longer than what has been read (or its read ended in a torn record that may now be whole).
  bool HasNewData() const;
  // Whether a runmon writer holds the log's lock right now (W&B's writers take none).
  bool WriterLockHeld() const;
  // What the file is and the state of its run (runlog::JudgeRun), from what was read into `model`.
  runlog::RunVerdict Verdict(const RunModel& model, double now_seconds) const;

  const std::filesystem::path& path() const { return path_; }
  uint64_t position() const { return reader_.log().position(); }
  uint64_t file_size() const;
  // How much of the log is in the model, 0 to 1 (for a "loading" figure).
  double loaded_fraction() const;
  // Whether the summary index is still being built: a Read then mostly waits for its workers (until its
  // budget is spent or there is something new), so a caller holding a lock others need gives it little.
  bool indexing() const;
  // Set when the log cannot be read at all (not a run log, unsupported version, I/O error).
  const std::string& error() const { return error_; }
  // Human-readable notes on skipped damage and a torn tail.
  std::vector<std::string> Warnings() const;

 private:
  RunLoader(std::filesystem::path path, int fd);

  std::filesystem::path path_;
  int fd_;
  runlog::RecordReader reader_;
  std::unique_ptr<IndexedLoad> indexed_;  // null for a log read in full
  runlog::ReadOutcome last_outcome_ = runlog::ReadOutcome::kEnd;
  bool incomplete_ = false;
  uint64_t incomplete_bytes_ = 0;
  uint64_t size_at_last_read_ = 0;
  std::string error_;
};

}  // namespace runmon::runview
