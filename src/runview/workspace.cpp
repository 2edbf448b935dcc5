// Finding runs and summarising them cheaply. See workspace.hpp.
#include "runview/workspace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

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

RunSummary SummarizeRun(const fs::path& log, double now_seconds) {
  RunSummary summary;
  auto opened = runlog::OpenLogForReading(log);
  if (!opened) {
    summary.error = opened.error();
    return summary;
  }
  const int fd = *opened;
  struct stat info {};
  ::fstat(fd, &info);
  summary.size = static_cast<uint64_t>(info.st_size);
  // Block 0, then the last two whole blocks: block boundaries keep their offsets modulo the block size, so
  // the reader's framing stays aligned and it resyncs at the junction.
  constexpr uint64_t kBlock = runlog::kBlockSize;
  const uint64_t tail_start = summary.size > 3 * kBlock ? (summary.size / kBlock - 2) * kBlock : kBlock;
  std::string bytes;
  const auto read_range = [&](uint64_t offset, uint64_t length) {
    const size_t start = bytes.size();
    bytes.resize(start + length);
    const ssize_t n = ::pread(fd, bytes.data() + start, length, static_cast<off_t>(offset));
    bytes.resize(start + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  };
  read_range(0, std::min(summary.size, kBlock));
  if (summary.size > kBlock) read_range(tail_start, summary.size - tail_start);
  const bool lock_held = runlog::WriterHoldsLock(fd);
  ::close(fd);

  runlog::RecordReader reader(runlog::MemorySource(bytes));
  RunModel model;
  for (;;) {
    const auto outcome = reader.Next();
    if (outcome != runlog::ReadOutcome::kRecord) {
      if (outcome == runlog::ReadOutcome::kFailed) summary.error = reader.error();
      break;
    }
    model.Ingest(reader.record());
  }
  // The junction between the head and the tail cuts records in two: the reader reports their halves (a
  // record without its last or first chunk, one that does not decode) as damage touching it. Checksum
  // mismatches, zeroed or impossible chunks are the log's own damage wherever they are.
  const uint64_t junction = std::min<uint64_t>(bytes.size(), kBlock);
  for (const auto& range : reader.damage()) {
    const bool touches_junction = range.offset <= junction && junction <= range.offset + range.length;
    const bool cut_record =
        range.reason.find("record") != std::string::npos || range.reason.find("decode") != std::string::npos;
    if (summary.size > kBlock && touches_junction && cut_record) continue;
    const uint64_t file_offset = range.offset < kBlock ? range.offset : range.offset - kBlock + tail_start;
    summary.warning = fmt::format("damaged log: {} bytes skipped at offset {} ({})", range.length,
                                  file_offset, range.reason);
    break;
  }
  summary.overview = model.overview();
  summary.state = DeriveRunState(model, lock_held, now_seconds);
  return summary;
}

}  // namespace runmon::runview
