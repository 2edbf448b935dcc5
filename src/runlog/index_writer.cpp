// The recorder's summary index writer (see index_writer.hpp).
#include "runlog/index_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace runmon::runlog {

Result<IndexWriter> IndexWriter::Create(const std::filesystem::path& index_path,
                                        const std::filesystem::path& log_path) {
  const int log_fd = ::open(log_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (log_fd < 0) return Error{fmt::format("cannot open {}: {}", log_path.string(), std::strerror(errno))};
  auto appender = IndexAppender::Create(index_path);
  if (!appender) {
    ::close(log_fd);
    return Error{appender.error()};
  }
  return IndexWriter(std::move(*appender), log_fd);
}

IndexWriter::IndexWriter(IndexWriter&& other) noexcept
    : appender_(std::move(other.appender_)),
      log_fd_(std::exchange(other.log_fd_, -1)),
      keys_(std::move(other.keys_)),
      open_(std::move(other.open_)),
      pyramid_(std::move(other.pyramid_)),
      stats_(std::move(other.stats_)),
      pending_(std::move(other.pending_)) {}

IndexWriter& IndexWriter::operator=(IndexWriter&& other) noexcept {
  if (this != &other) {
    if (log_fd_ >= 0) ::close(log_fd_);
    appender_ = std::move(other.appender_);
    log_fd_ = std::exchange(other.log_fd_, -1);
    keys_ = std::move(other.keys_);
    open_ = std::move(other.open_);
    pyramid_ = std::move(other.pyramid_);
    stats_ = std::move(other.stats_);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

IndexWriter::~IndexWriter() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

Status IndexWriter::CloseSegment() {
  const uint64_t segment = open_->segment();
  const auto crc = BoundaryCrc(log_fd_, segment);
  if (!crc) return Error{crc.error()};
  const SegmentSummary summary = open_->Finish(*crc);
  open_.reset();
  std::string entries = std::move(pending_);
  pending_.clear();
  AppendSummaryEntry(summary, entries);
  std::vector<SegmentSummary> completed;
  pyramid_.Add(summary, completed);
  for (const SegmentSummary& node : completed) AppendSummaryEntry(node, entries);
  return appender_.Append(entries);
}

Status IndexWriter::Begin(uint64_t start) {
  if (appender_.failed()) return Error{"the index is no longer written"};
  const uint64_t segment = SegmentOf(start);
  if (open_ && open_->segment() != segment) {
    if (auto status = CloseSegment(); !status) return status;
  }
  if (!open_) open_.emplace(segment);
  return OkStatus();
}

uint32_t IndexWriter::KeyId(std::string_view name) {
  bool added = false;
  const uint32_t id = keys_.Id(name, &added);
  if (added) AppendKeyEntry(name, pending_);
  return id;
}

Status IndexWriter::NoteStats(uint64_t start, uint64_t end, std::string_view payload,
                              const EncodedStatsItems& encoded) {
  if (auto status = Begin(start); !status) return status;
  stats_.Take(payload, encoded, [this](std::string_view name) { return KeyId(name); });
  open_->AddStats(end, encoded.time, stats_.values().data(), stats_.values().size());
  return OkStatus();
}

Status IndexWriter::Note(uint64_t start, uint64_t end, std::string_view payload) {
  if (auto status = Begin(start); !status) return status;
  double time = 0;
  const WireRecordKind kind =
      stats_.Read(payload, time, [this](std::string_view name) { return KeyId(name); });
  if (kind == WireRecordKind::kStats) {
    open_->AddStats(end, time, stats_.values().data(), stats_.values().size());
  } else {
    open_->AddOther(end);  // runmon writes no record that does not decode
  }
  return OkStatus();
}

}  // namespace runmon::runlog
