// The run-log reader's state machine (see log_reader.hpp for the rules it follows).
#include "runlog/log_reader.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "runlog/log_format.hpp"

namespace runmon::runlog {
namespace {

class MemoryLogSource final : public LogSource {
 public:
  explicit MemoryLogSource(std::string_view bytes) : bytes_(bytes) {}
  Result<std::string_view> View(uint64_t offset, size_t length) override {
    if (offset >= bytes_.size()) return std::string_view();
    return bytes_.substr(static_cast<size_t>(offset), length);
  }

 private:
  std::string_view bytes_;
};

// Keeps a window of whole blocks; chunks never cross a block, so a chunk is always inside one window.
class FileLogSource final : public LogSource {
 public:
  explicit FileLogSource(int fd) : fd_(fd) {}
  void Forget() override { size_ = 0; }

  Result<std::string_view> View(uint64_t offset, size_t length) override {
    if (size_ == 0 || offset < start_ || offset + length > start_ + size_) {
      if (auto status = Load(offset, length); !status) return Error{status.error()};
    }
    if (offset >= start_ + size_) return std::string_view();
    const auto at = static_cast<size_t>(offset - start_);
    return std::string_view(buffer_).substr(at, std::min(length, size_ - at));
  }

 private:
  static constexpr size_t kWindowBytes = 8 * kBlockSize;

  Status Load(uint64_t offset, size_t length) {
    const uint64_t aligned = offset - offset % kBlockSize;
    const size_t want = std::max(kWindowBytes, static_cast<size_t>(offset - aligned) + length);
    if (buffer_.size() < want) buffer_.resize(want);
    size_t got = 0;
    while (got < want) {
      const ssize_t n = ::pread(fd_, buffer_.data() + got, want - got, static_cast<off_t>(aligned + got));
      if (n > 0) {
        got += static_cast<size_t>(n);
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        size_ = 0;
        return Error{fmt::format("read failed at offset {}: {}", aligned + got, std::strerror(errno))};
      }
    }
    start_ = aligned;
    size_ = got;
    return OkStatus();
  }

  int fd_;
  std::string buffer_;
  uint64_t start_ = 0;
  size_t size_ = 0;
};

uint32_t LittleEndian32(std::string_view bytes) {
  return static_cast<uint32_t>(static_cast<unsigned char>(bytes[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(bytes[3])) << 24;
}

}  // namespace

std::unique_ptr<LogSource> MemorySource(std::string_view bytes) {
  return std::make_unique<MemoryLogSource>(bytes);
}

std::unique_ptr<LogSource> FileSource(int fd) {
  return std::make_unique<FileLogSource>(fd);
}

Result<int> OpenLogForReading(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", path.string(), std::strerror(errno))};
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Error{fmt::format("{}: not a regular file", path.string())};
  }
  return fd;
}

bool WriterHoldsLock(int fd) {
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) return true;
  ::flock(fd, LOCK_UN);
  return false;
}

LogReader::LogReader(std::unique_ptr<LogSource> source) : source_(std::move(source)) {}

ReadOutcome LogReader::Fail(std::string message) {
  error_ = std::move(message);
  return ReadOutcome::kFailed;
}

void LogReader::ReportDamage(uint64_t offset, uint64_t length, std::string_view reason) {
  if (length == 0) return;
  if (!damage_.empty() && damage_.back().offset + damage_.back().length == offset) {
    damage_.back().length += length;
    return;
  }
  damage_.push_back({offset, length, std::string(reason)});
}

ReadOutcome LogReader::Incomplete(uint64_t data_end) {
  // Resume at the record's first chunk: a writer may cut a torn record off and write another there.
  if (in_record_) {
    position_ = record_start_;
    in_record_ = false;
    fragments_.clear();
  }
  incomplete_bytes_ = data_end - position_;
  source_->Forget();
  return ReadOutcome::kIncomplete;
}

void LogReader::SkipToNextBlock(uint64_t damage_start, std::string_view reason) {
  const uint64_t start = in_record_ ? record_start_ : damage_start;
  in_record_ = false;
  continuing_ = false;
  fragments_.clear();
  const uint64_t next_block = (position_ / kBlockSize + 1) * kBlockSize;
  // Report only the bytes that exist: the damage may sit in the short last block.
  uint64_t end = next_block;
  if (auto rest = source_->View(position_, static_cast<size_t>(next_block - position_))) {
    end = position_ + rest->size();
  }
  ReportDamage(start, end - start, reason);
  position_ = next_block;
  resyncing_ = true;
}

ReadOutcome LogReader::ReadHeader() {
  if (!error_.empty()) return ReadOutcome::kFailed;
  if (header_read_) return ReadOutcome::kEnd;
  incomplete_bytes_ = 0;
  // Only the first 7 bytes decide: a file of anything else (2 GB of zeros) is refused without reading on.
  auto view = source_->View(0, kFileHeaderSize);
  if (!view) return Fail(view.error());
  const size_t compared = std::min<size_t>(view->size(), kFileHeaderSize - 1);
  if (compared > 0 && std::memcmp(view->data(), kFileHeader.data(), compared) != 0) {
    return Fail("not a W&B run log (the file does not start with \":W&B\" and magic 0xBEE1)");
  }
  if (view->size() < kFileHeaderSize) return Incomplete(view->size());
  if (const auto version = static_cast<unsigned char>((*view)[6]); version != 0) {
    return Fail(fmt::format("unsupported run log version {} (only version 0 exists)", version));
  }
  header_read_ = true;
  position_ = kFileHeaderSize;
  return ReadOutcome::kEnd;
}

void LogReader::SeekToBlock(uint64_t block_offset) {
  position_ = std::max(block_offset - block_offset % kBlockSize, kFileHeaderSize);
  in_record_ = false;
  fragments_.clear();
  resyncing_ = false;
  continuing_ = position_ > kFileHeaderSize;
  source_->Forget();
}

ReadOutcome LogReader::Next(RawRecord& record) {
  if (!error_.empty()) return ReadOutcome::kFailed;
  incomplete_bytes_ = 0;
  if (!header_read_) {
    if (const ReadOutcome header = ReadHeader(); !header_read_) return header;
  }
  for (;;) {
    const uint64_t room = kBlockSize - position_ % kBlockSize;
    if (room < kChunkHeaderSize) {
      // A block trailer: never checked. Writers write it only together with the next chunk, so data that
      // ends exactly before it is a clean end, and data that ends inside it is a torn tail.
      auto trailer = source_->View(position_, static_cast<size_t>(room));
      if (!trailer) return Fail(trailer.error());
      if (trailer->empty() && !in_record_) return ReadOutcome::kEnd;
      if (trailer->size() < room) return Incomplete(position_ + trailer->size());
      position_ += room;
      continue;
    }
    auto header = source_->View(position_, kChunkHeaderSize);
    if (!header) return Fail(header.error());
    if (header->size() < kChunkHeaderSize) {
      if (header->empty() && !in_record_) return ReadOutcome::kEnd;
      return Incomplete(position_ + header->size());
    }
    const uint32_t checksum = LittleEndian32(*header);
    const uint64_t length = static_cast<unsigned char>((*header)[4]) |
                            static_cast<uint64_t>(static_cast<unsigned char>((*header)[5])) << 8;
    const auto type_byte = static_cast<unsigned char>((*header)[6]);
    if (checksum == 0 && length == 0 && type_byte == 0) {
      SkipToNextBlock(position_, "zeroed bytes");
      continue;
    }
    if (type_byte < 1 || type_byte > 4) {
      SkipToNextBlock(position_, fmt::format("unknown chunk type {}", type_byte));
      continue;
    }
    if (length > room - kChunkHeaderSize) {
      SkipToNextBlock(position_, "chunk longer than its block");
      continue;
    }
    auto chunk = source_->View(position_, static_cast<size_t>(kChunkHeaderSize + length));
    if (!chunk) return Fail(chunk.error());
    if (chunk->size() < kChunkHeaderSize + length) return Incomplete(position_ + chunk->size());
    const auto type = static_cast<ChunkType>(type_byte);
    const std::string_view payload = chunk->substr(kChunkHeaderSize);
    if (ChunkChecksum(type, payload) != checksum) {
      SkipToNextBlock(position_, "checksum mismatch");
      continue;
    }
    const uint64_t chunk_start = position_;
    position_ += kChunkHeaderSize + length;
    switch (type) {
      case ChunkType::kFull:
        if (in_record_)
          ReportDamage(record_start_, chunk_start - record_start_, "record without its last chunk");
        in_record_ = false;
        resyncing_ = false;
        continuing_ = false;
        record = {chunk_start, position_, payload};
        return ReadOutcome::kRecord;
      case ChunkType::kFirst:
        if (in_record_)
          ReportDamage(record_start_, chunk_start - record_start_, "record without its last chunk");
        in_record_ = true;
        resyncing_ = false;
        continuing_ = false;
        record_start_ = chunk_start;
        fragments_.assign(payload);
        continue;
      case ChunkType::kMiddle:
      case ChunkType::kLast:
        if (!in_record_ && continuing_) continue;
        if (!in_record_) {
          ReportDamage(chunk_start, kChunkHeaderSize + length,
                       resyncing_ ? "rest of a damaged record" : "record without its first chunk");
          continue;
        }
        if (fragments_.size() + payload.size() > kMaxRecordBytes) {
          ReportDamage(record_start_, position_ - record_start_,
                       fmt::format("record longer than {} MiB", kMaxRecordBytes >> 20));
          in_record_ = false;
          fragments_.clear();
          fragments_.shrink_to_fit();
          resyncing_ = true;
          continue;
        }
        fragments_.append(payload);
        if (type == ChunkType::kLast) {
          in_record_ = false;
          record = {record_start_, position_, fragments_};
          return ReadOutcome::kRecord;
        }
        continue;
    }
  }
}

}  // namespace runmon::runlog
