// Finding runs and summarising them cheaply. See workspace.hpp.
#include "runview/workspace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "runlog/log_format.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/run_directory.hpp"

namespace runmon::runview {
namespace fs = std::filesystem;
namespace {

// "run-20261129_194500-abc123" -> stamp and id; false when the name does not follow W&B's pattern.
bool ParseRunDirectoryName(std::string_view name, std::string& stamp, std::string& id) {
  if (name.starts_with("offline-")) name.remove_prefix(8);
  if (!name.starts_with("run-")) return false;
  name.remove_prefix(4);
  // YYYYMMDD_HHMMSS-<id>
  if (name.size() < 17 || name[8] != '_' || name[15] != '-') return false;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && (name[i] < '0' || name[i] > '9')) return false;
  }
  stamp = std::string(name.substr(0, 15));
  id = std::string(name.substr(16));
  return !id.empty();
}

}  // namespace

fs::path SingleRunLogIn(const fs::path& directory) {
  std::error_code error;
  fs::path found;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    std::error_code type_error;
    if (name.starts_with("run-") && name.ends_with(".wandb") && entry.is_regular_file(type_error)) {
      found = entry.path();
      ++count;
    }
  }
  return count == 1 ? found : fs::path();
}

Result<fs::path> LatestRunLog(const fs::path& wandb_dir) {
  return runlog::FindRunLog(wandb_dir);
}

Status WriteWorkspaceFile(const fs::path& wandb_dir, std::string_view name, std::string_view content) {
  return runlog::WriteFileAtomically(wandb_dir / name, content);
}

Result<std::vector<RunEntry>> ScanRuns(const fs::path& wandb_dir) {
  std::error_code error;
  fs::directory_iterator it(wandb_dir, error);
  if (error) return Error{fmt::format("{}: {}", wandb_dir.string(), error.message())};
  std::vector<RunEntry> runs;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) return Error{fmt::format("{}: {}", wandb_dir.string(), error.message())};
    RunEntry entry;
    entry.directory_name = it->path().filename().string();
    std::error_code type_error;
    if (it->is_symlink(type_error) || !it->is_directory(type_error)) continue;
    if (!ParseRunDirectoryName(entry.directory_name, entry.stamp, entry.id)) continue;
    entry.directory = it->path();
    entry.log = SingleRunLogIn(entry.directory);
    runs.push_back(std::move(entry));
  }
  std::sort(runs.begin(), runs.end(), [](const RunEntry& a, const RunEntry& b) {
    return a.stamp != b.stamp ? a.stamp > b.stamp : a.directory_name > b.directory_name;
  });
  return runs;
}

namespace {

// Appends up to `length` bytes of `fd` from `offset` to `bytes` (fewer at the end of the file).
void AppendRange(int fd, uint64_t offset, uint64_t length, std::string& bytes) {
  const size_t start = bytes.size();
  bytes.resize(start + length);
  size_t got = 0;
  while (got < length) {
    const ssize_t n = ::pread(fd, bytes.data() + start + got, length - got, static_cast<off_t>(offset + got));
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  bytes.resize(start + got);
}

// Reads the head into `bytes`: block 0, grown (x4 at a time, in whole blocks) until every record that
// starts in block 0 is whole or kMaxHeadBytes is reached.
void ReadHead(int fd, uint64_t size, std::string& bytes) {
  constexpr uint64_t kBlock = runlog::kBlockSize;
  uint64_t head = std::min(size, kBlock);
  for (;;) {
    bytes.clear();
    AppendRange(fd, 0, head, bytes);
    if (head >= size || head >= kMaxHeadBytes) return;
    runlog::LogReader reader(runlog::MemorySource(bytes));
    runlog::RawRecord record;
    runlog::ReadOutcome outcome;
    do {
      outcome = reader.Next(record);
    } while (outcome == runlog::ReadOutcome::kRecord && record.offset < kBlock);
    // Incomplete at the head's end, in a record that started in block 0: read further.
    if (outcome != runlog::ReadOutcome::kIncomplete || reader.position() >= kBlock) return;
    head = std::min({size, kMaxHeadBytes, head * 4});
  }
}

}  // namespace

RunSummary SummarizeRun(const fs::path& log, double now_seconds) {
  RunSummary summary;
  auto opened = runlog::OpenLogForReading(log);
  if (!opened) {
    summary.verdict.reason = opened.error();
    return summary;
  }
  const int fd = *opened;
  struct stat info {};
  ::fstat(fd, &info);
  summary.size = static_cast<uint64_t>(info.st_size);
  // The head, then the last two whole blocks: block boundaries keep their offsets modulo the block size,
  // so the reader's framing stays aligned and it resyncs at the junction.
  constexpr uint64_t kBlock = runlog::kBlockSize;
  std::string bytes;
  ReadHead(fd, summary.size, bytes);
  const uint64_t head_end = bytes.size();
  const uint64_t last_blocks = summary.size / kBlock >= 2 ? (summary.size / kBlock - 2) * kBlock : 0;
  const uint64_t tail_start = std::max(head_end, last_blocks);
  if (summary.size > tail_start) AppendRange(fd, tail_start, summary.size - tail_start, bytes);
  const bool has_junction = tail_start > head_end && summary.size > tail_start;

  runlog::RecordReader reader(runlog::MemorySource(bytes));
  RunModel model;
  runlog::ReadOutcome outcome;
  while ((outcome = reader.Next()) == runlog::ReadOutcome::kRecord) model.Ingest(reader.record());
  runlog::LogEvidence evidence = runlog::GatherEvidence(reader.log(), outcome, fd);
  ::close(fd);
  // The junction between the head and the tail cuts records in two: the reader reports their halves (a
  // record without its last or first chunk, one that does not decode) as damage touching it. Checksum
  // mismatches, zeroed or impossible chunks are the log's own damage wherever they are.
  evidence.damaged = false;
  for (const auto& range : reader.damage()) {
    const bool touches_junction = range.offset <= head_end && head_end <= range.offset + range.length;
    const bool cut_record =
        range.reason.find("record") != std::string::npos || range.reason.find("decode") != std::string::npos;
    if (has_junction && touches_junction && cut_record) continue;
    const uint64_t file_offset =
        range.offset < head_end ? range.offset : range.offset - head_end + tail_start;
    summary.warning = fmt::format("damaged log: {} bytes skipped at offset {} ({})", range.length,
                                  file_offset, range.reason);
    evidence.damaged = true;
    break;
  }
  summary.overview = model.overview();
  summary.verdict = runlog::JudgeRun(evidence, model.progress(), now_seconds);
  return summary;
}

}  // namespace runmon::runview
