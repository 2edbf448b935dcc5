// Reads a run log into a RunModel in time-bounded slices. See run_loader.hpp.
#include "runview/run_loader.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace runmon::runview {

Result<std::unique_ptr<RunLoader>> RunLoader::Open(const std::filesystem::path& log,
                                                   const IndexedLoadOptions& options) {
  auto fd = runlog::OpenLogForReading(log);
  if (!fd) return Error{fd.error()};
  std::unique_ptr<RunLoader> loader(new RunLoader(log, *fd));
  loader->last_outcome_ = loader->reader_.ReadHeader();
  if (loader->last_outcome_ == runlog::ReadOutcome::kFailed) {
    loader->error_ = loader->reader_.error();
  } else if (loader->last_outcome_ == runlog::ReadOutcome::kEnd) {
    loader->indexed_ = IndexedLoad::Start(log, *fd, loader->file_size(), options);
  }
  return loader;
}

RunLoader::RunLoader(std::filesystem::path path, int fd)
    : path_(std::move(path)), fd_(fd), reader_(runlog::FileSource(fd)) {}

RunLoader::~RunLoader() {
  ::close(fd_);
}

uint64_t RunLoader::file_size() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) return 0;
  return static_cast<uint64_t>(info.st_size);
}

bool RunLoader::Read(RunModel& model, std::chrono::steady_clock::duration budget) {
  if (!error_.empty()) return false;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  // Noted before reading: growth during the read shows as a different size at the next poll.
  size_at_last_read_ = file_size();
  if (indexed_ && !indexed_->done()) {
    if (!indexed_->Step(model, deadline)) return false;
    if (indexed_->tail_start() > 0) reader_.SeekToBlock(indexed_->tail_start());
  }
  for (uint32_t count = 1;; ++count) {
    last_outcome_ = reader_.Next();
    switch (last_outcome_) {
      case runlog::ReadOutcome::kRecord:
        incomplete_ = false;
        model.Ingest(reader_.record());
        break;
      case runlog::ReadOutcome::kEnd:
        incomplete_ = false;
        return true;
      case runlog::ReadOutcome::kIncomplete:
        incomplete_ = true;
        incomplete_bytes_ = reader_.log().incomplete_bytes();
        return true;
      case runlog::ReadOutcome::kFailed:
        error_ = reader_.error().empty() ? "cannot be read" : reader_.error();
        return false;
    }
    // The clock is read every 64 records: a record takes microseconds, a clock read a few dozen ns.
    if (count % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

bool RunLoader::HasNewData() const {
  if (!error_.empty()) return false;
  return (indexed_ && !indexed_->done()) || file_size() != size_at_last_read_;
}

bool RunLoader::indexing() const {
  return indexed_ && !indexed_->done();
}

double RunLoader::loaded_fraction() const {
  if (indexed_ && !indexed_->done()) return indexed_->fraction();
  const uint64_t size = file_size();
  return size == 0 ? 1 : std::min(1.0, static_cast<double>(position()) / static_cast<double>(size));
}

bool RunLoader::WriterLockHeld() const {
  return runlog::WriterHoldsLock(fd_);
}

runlog::RunVerdict RunLoader::Verdict(const RunModel& model, double now_seconds) const {
  runlog::LogEvidence evidence = runlog::GatherEvidence(reader_.log(), last_outcome_, fd_);
  if (indexed_ && indexed_->damaged_bytes() > 0) evidence.damaged = true;
  return runlog::JudgeRun(evidence, model.progress(), now_seconds);
}

std::vector<std::string> RunLoader::Warnings() const {
  std::vector<std::string> warnings;
  if (!error_.empty()) warnings.push_back(error_);
  if (indexed_) {
    for (std::string& warning : indexed_->Warnings()) warnings.push_back(std::move(warning));
  }
  uint64_t skipped = 0;
  for (const auto& range : reader_.damage()) skipped += range.length;
  if (!reader_.damage().empty()) {
    const auto& first = reader_.damage().front();
    warnings.push_back(fmt::format("damaged log: {} bytes skipped in {} place{} (first at offset {}: {})",
                                   skipped, reader_.damage().size(), reader_.damage().size() == 1 ? "" : "s",
                                   first.offset, first.reason));
  }
  if (incomplete_ && incomplete_bytes_ > 0) {
    warnings.push_back(
        fmt::format("the log ends inside a record ({} bytes at offset {}): still being written, or "
                    "cut short",
                    incomplete_bytes_, position()));
  }
  return warnings;
}

}  // namespace runmon::runview
