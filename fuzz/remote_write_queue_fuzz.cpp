// Fuzzes the remote-write queue's recovery: the input becomes the files of a queue directory, which is
// opened and read to the end, appended to and opened again. Layout of the input:
//   byte 0: bit 0: the next 32 bytes are the cursor file (else there is none); bit 1: the rest is split in
//     two segment files (else one); bits 2-4: the first segment's sequence - 1; bits 5-7: how far the
//     second one's sequence is after it, in 3s. Everything after is segment bytes.
// Checks, on the bytes alone: ScanSegment's records lie inside the bytes, in order, each one checking out
// (header and CRC), with sequences rising; good_end is inside the bytes and after every good record; a
// decoded cursor encodes back to the same bytes. On the queue: Open does not fail (only a newer format
// version may refuse it); Read returns records that rise in sequence, at least one whenever one is
// pending; the pending count is what Read finds after the cursor; an append then works and comes back and
// is acknowledged with everything before it; a second Open finds no new damage and the cursor, and then
// nothing pending (or, when the append could not be made, the same records as the first).
// Seeds: one segment (with and without a cursor, torn, with a flipped payload byte or segment header, only
// a header), two segments (with a damaged cursor), and two whose sequences overlap.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "remote_write/disk_queue.hpp"
#include "remote_write/queue_format.hpp"

namespace {

using namespace runmon::remote_write;
namespace fs = std::filesystem;

// A directory of its own for the run, on tmpfs where there is one (an order of magnitude more files
// created, renamed and deleted a second than on a disk's file system), removed at exit (by a handler
// registered after the path is made, so that it runs before the path's destructor).
fs::path MakeDirectory() {
  std::error_code error;
  const fs::path base =
      fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm") : fs::temp_directory_path();
  std::string pattern = (base / "runmon-rwq-fuzz-XXXXXX").string();
  FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

const fs::path& Directory();

void RemoveDirectory() {
  std::error_code ignored;
  fs::remove_all(Directory(), ignored);
}

const fs::path& Directory() {
  static const fs::path directory = MakeDirectory();
  static const bool removed_at_exit = std::atexit(RemoveDirectory) == 0;
  FUZZ_CHECK(removed_at_exit);
  return directory;
}

void WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FUZZ_CHECK(out.good());
}

void CheckScan(std::string_view bytes, uint64_t first_sequence) {
  auto scan = ScanSegment(bytes, first_sequence, 0);
  if (!scan) {
    FUZZ_CHECK(!scan.error().empty());
    return;
  }
  uint64_t end = 0;
  uint64_t last = 0;
  for (const ScannedRecord& record : scan->records) {
    FUZZ_CHECK(record.offset >= end);
    FUZZ_CHECK(record.offset + kRecordHeaderSize + record.payload_bytes <= bytes.size());
    const auto header = DecodeRecordHeader(bytes.substr(record.offset));
    FUZZ_CHECK(header && header->sequence == record.sequence &&
               header->payload_bytes == record.payload_bytes);
    FUZZ_CHECK(
        RecordPayloadMatches(*header, bytes.substr(record.offset + kRecordHeaderSize, record.payload_bytes)));
    FUZZ_CHECK(record.sequence > last && record.sequence >= first_sequence &&
               record.sequence <= kMaxSequence);
    last = record.sequence;
    end = record.offset + kRecordHeaderSize + record.payload_bytes;
  }
  FUZZ_CHECK(scan->good_end <= bytes.size() && scan->good_end >= end);
  FUZZ_CHECK(!scan->torn_tail || scan->damaged_records > 0);
}

// Reads everything after `after`; the records rise in sequence.
std::vector<QueueRecord> ReadAll(const DiskQueue& queue, uint64_t after) {
  std::vector<QueueRecord> all;
  for (size_t calls = 0;; ++calls) {
    FUZZ_CHECK(calls < 100000);
    auto batch = queue.Read(after, 7);
    FUZZ_CHECK(batch);
    if (batch->empty()) return all;
    for (auto& record : *batch) {
      FUZZ_CHECK(record.sequence > after);
      after = record.sequence;
      all.push_back(std::move(record));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = runmon::fuzz::AsText(data, size);
  if (input.empty()) return 0;
  const auto flags = static_cast<unsigned char>(input[0]);
  input.remove_prefix(1);
  std::string_view cursor;
  if ((flags & 1) != 0) {
    cursor = input.substr(0, kCursorSize);
    input.remove_prefix(cursor.size());
    if (auto decoded = DecodeCursor(cursor)) {
      FUZZ_CHECK(EncodeCursor(*decoded) == cursor);
    } else {
      FUZZ_CHECK(!decoded.error().empty());
    }
  }
  const uint64_t first_sequence = 1 + ((flags >> 2) & 7);
  const uint64_t second_sequence = first_sequence + 3 * (flags >> 5);
  std::string_view first = input;
  std::string_view second;
  if ((flags & 2) != 0) {
    first = input.substr(0, input.size() / 2);
    second = input.substr(first.size());
  }
  CheckScan(first, first_sequence);
  if ((flags & 2) != 0) CheckScan(second, second_sequence);

  const fs::path& directory = Directory();
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(directory, ignored)) fs::remove_all(entry.path(), ignored);
  if ((flags & 1) != 0) WriteFile(directory / "cursor", cursor);
  WriteFile(directory / SegmentFileName(first_sequence), first);
  if ((flags & 2) != 0 && second_sequence != first_sequence) {
    WriteFile(directory / SegmentFileName(second_sequence), second);
  }

  const QueueOptions options{.max_bytes = 1 << 16, .segment_bytes = 1 << 12};
  std::vector<QueueRecord> before;
  uint64_t damaged = 0;
  bool acknowledged = false;
  {
    auto opened = DiskQueue::Open(directory, options);
    if (!opened) {
      FUZZ_CHECK(opened.error().find("version") != std::string::npos);
      return 0;
    }
    DiskQueue& queue = **opened;
    const QueueCursor at = queue.cursor();
    FUZZ_CHECK(at.acked <= at.inflight_end && at.inflight_end <= queue.last_sequence());
    const QueueCounts counts = queue.counts();
    damaged = counts.damaged_records;
    const auto pending = ReadAll(queue, at.acked);
    FUZZ_CHECK(pending.size() == counts.pending_records);
    FUZZ_CHECK(pending.empty() ? counts.oldest_pending_ms == 0
                               : counts.oldest_pending_ms == pending[0].timestamp_ms);
    FUZZ_CHECK(queue.counts().damaged_records == counts.damaged_records);  // reading found nothing new
    before = ReadAll(queue, 0);
    FUZZ_CHECK(before.size() >= pending.size());

    const uint64_t next = queue.last_sequence() + 1;
    const auto appended = queue.Append(3, 42, "appended");
    FUZZ_CHECK(appended || next > kMaxSequence);
    if (appended) {
      FUZZ_CHECK(queue.last_sequence() == next);
      auto back = queue.Read(next - 1, 1);
      FUZZ_CHECK(back && back->size() == 1 && back->front().sequence == next &&
                 back->front().payload == "appended");
      FUZZ_CHECK(queue.Ack(next));
      acknowledged = true;
    }
  }
  auto reopened = DiskQueue::Open(directory, options);
  FUZZ_CHECK(reopened);
  const DiskQueue& queue = **reopened;
  // What the first Open cut off is gone; damage inside the records kept is found again.
  FUZZ_CHECK(queue.counts().damaged_records <= damaged);
  FUZZ_CHECK(!queue.counts().cursor_lost);
  if (acknowledged) {
    // Nothing is pending. (Records at or below the cursor that an acknowledged, deleted segment had
    // shadowed, a second copy of a sequence in a later segment, may be read again: they are done.)
    FUZZ_CHECK(queue.counts().pending_records == 0);
    FUZZ_CHECK(ReadAll(queue, queue.cursor().acked).empty());
  } else {
    // Nothing was deleted: the same records come back.
    const auto after = ReadAll(queue, 0);
    FUZZ_CHECK(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      FUZZ_CHECK(after[i].sequence == before[i].sequence && after[i].payload == before[i].payload);
    }
  }
  return 0;
}
