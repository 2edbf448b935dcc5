// What the remote-write queue tests share: payloads that say which record they belong to (so a record read
// back can be checked byte for byte against its sequence), the segment files of a queue directory, whole-file
// reads and writes for damaging them, and reading a queue to its end in batches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "remote_write/disk_queue.hpp"
#include "remote_write/queue_format.hpp"

namespace runmon::remote_write::testing {

// `size` bytes that only record `sequence` has: its number, then a pattern seeded by it (4 KB of it,
// repeated: large payloads are quick to make and compare even in the unoptimized test build).
inline std::string PayloadFor(uint64_t sequence, size_t size) {
  constexpr size_t kPatternBytes = 4096;
  std::string payload = "record " + std::to_string(sequence) + ":";
  const size_t prefix = payload.size();
  uint64_t state = sequence * 0x9E3779B97F4A7C15ULL + 1;
  while (payload.size() < std::min(size, prefix + kPatternBytes)) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    payload.push_back(static_cast<char>(state >> 56));
  }
  while (payload.size() < size) {
    payload.append(payload, prefix, std::min(payload.size() - prefix, size - payload.size()));
  }
  return payload;
}

// The sizes, samples and timestamps the tests give record `sequence`.
inline size_t SizeFor(uint64_t sequence) {
  return 100 + (sequence * 37) % 400;
}
inline uint32_t SamplesFor(uint64_t sequence) {
  return static_cast<uint32_t>(1 + sequence % 5);
}
inline int64_t TimestampFor(uint64_t sequence) {
  return 1700000000000 + static_cast<int64_t>(sequence) * 100;
}

// Appends the next record as the tests number it (the queue's next sequence decides its content).
inline void AppendNext(DiskQueue& queue, size_t size = 0) {
  const uint64_t sequence = queue.last_sequence() + 1;
  const Status status = queue.Append(SamplesFor(sequence), TimestampFor(sequence),
                                     PayloadFor(sequence, size != 0 ? size : SizeFor(sequence)));
  ASSERT_TRUE(status) << status.error();
}

// Whether `record` is the one the tests wrote as its sequence (payload of the default size unless given).
inline ::testing::AssertionResult IsIntact(const QueueRecord& record, size_t size = 0) {
  const uint64_t s = record.sequence;
  if (record.payload != PayloadFor(s, size != 0 ? size : SizeFor(s))) {
    return ::testing::AssertionFailure() << "record " << s << ": payload differs";
  }
  if (record.samples != SamplesFor(s) || record.timestamp_ms != TimestampFor(s)) {
    return ::testing::AssertionFailure() << "record " << s << ": samples or timestamp differ";
  }
  return ::testing::AssertionSuccess();
}

// Every record after `after`, read in batches of at most `max_samples` samples.
inline std::vector<QueueRecord> ReadAll(const DiskQueue& queue, uint64_t after = 0, size_t max_samples = 50) {
  std::vector<QueueRecord> all;
  for (;;) {
    auto batch = queue.Read(after, max_samples);
    EXPECT_TRUE(batch) << batch.error();
    if (!batch || batch->empty()) return all;
    after = batch->back().sequence;
    std::move(batch->begin(), batch->end(), std::back_inserter(all));
  }
}

inline std::vector<uint64_t> Sequences(const std::vector<QueueRecord>& records) {
  std::vector<uint64_t> sequences;
  for (const auto& record : records) sequences.push_back(record.sequence);
  return sequences;
}

inline std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> sequences;
  for (uint64_t s = first; s <= last; ++s) sequences.push_back(s);
  return sequences;
}

inline std::vector<std::filesystem::path> SegmentFiles(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (ParseSegmentFileName(entry.path().filename().string())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string FileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Where record `sequence` starts in a segment file (found with the queue's own scan).
inline uint64_t OffsetOf(const std::filesystem::path& segment, uint64_t sequence) {
  const std::string bytes = FileBytes(segment);
  auto scan = ScanSegment(bytes, *ParseSegmentFileName(segment.filename().string()), 0);
  EXPECT_TRUE(scan) << scan.error();
  for (const auto& record : scan->records) {
    if (record.sequence == sequence) return record.offset;
  }
  ADD_FAILURE() << "record " << sequence << " is not in " << segment;
  return 0;
}

}  // namespace runmon::remote_write::testing
