// The remote-write queue's file formats (see disk_queue.hpp for what the queue is), as pure functions over
// bytes: the CRC-32C, the segment header, the record frame, the scan of a whole segment and the cursor.
// disk_queue.cpp does the files; the fuzz target and the tests call these directly too.
//
// All integers are little-endian.
//   segment file `<first sequence, 20 digits>.seg`:
//     header, 24 bytes: magic "runmonRQ", u32 version (1), u64 first sequence, u32 CRC-32C of bytes 0..19
//     records, each a 36-byte header and the payload:
//       u32 magic 0x31525752 ("RWR1"), u32 payload length, u64 sequence, i64 timestamp_ms, u32 samples,
//       u32 header CRC (CRC-32C of bytes 0..27), u32 record CRC (CRC-32C of bytes 0..27 and the payload)
//   cursor file `cursor`, 32 bytes: magic "runmonRC", u32 version (1), u64 acked, u64 inflight_end,
//     u32 CRC-32C of bytes 0..27
//
// Why two CRCs a record: the header CRC makes the length trustworthy on its own, so a record whose payload
// is damaged is stepped over whole and the records after it in the segment are still read, and a damaged
// header is searched past cheaply (the next record magic whose 28 bytes check out) instead of ending the
// segment. A random match needs 64 bits to agree (the magic and the header CRC).
//
// ScanSegment reads one segment the way Open needs it: the records that check out, in sequence order, and
// what did not. Sequences must rise by one inside a segment; a record whose sequence is lower than one
// already read (or than the file's first sequence) is taken as damage, a jump forward counts the missing
// sequences as damaged records (they were in the bytes that did not check out). Bytes after the last good
// record that hold no good record are the torn tail (a write cut short by a kill): one damaged record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::remote_write {

// CRC-32C (Castagnoli, reflected 0x82F63B78, initial and final xor 0xFFFFFFFF), continued from `crc`
// (0 to start): Crc32c(Crc32c(0, a), b) == Crc32c(0, a + b). The CPU's CRC32 instruction where there is
// one (x86-64 with SSE 4.2), else Crc32cPortable.
uint32_t Crc32c(uint32_t crc, std::string_view data);
// The same from tables, on any CPU.
uint32_t Crc32cPortable(uint32_t crc, std::string_view data);

inline constexpr std::string_view kSegmentMagic = "runmonRQ";
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kSegmentHeaderSize = 24;
inline constexpr uint32_t kRecordMagic = 0x31525752;  // "RWR1" as bytes on disk
inline constexpr size_t kRecordHeaderSize = 36;
inline constexpr std::string_view kCursorMagic = "runmonRC";
inline constexpr size_t kCursorSize = 32;
// Sequences stay far from overflow: a file that claims more is damaged.
inline constexpr uint64_t kMaxSequence = uint64_t{1} << 62;
inline constexpr uint64_t kMaxPayloadBytes = UINT32_MAX;

std::string EncodeSegmentHeader(uint64_t first_sequence);

// Appends one framed record (header and payload) to `out`. The payload must be at most kMaxPayloadBytes.
void AppendRecord(uint64_t sequence, uint32_t samples, int64_t timestamp_ms, std::string_view payload,
                  std::string& out);

struct RecordHeader {
  uint64_t sequence = 0;
  int64_t timestamp_ms = 0;
  uint32_t samples = 0;
  uint32_t payload_bytes = 0;
  uint32_t header_crc = 0;
  uint32_t record_crc = 0;  // to check with the payload (RecordPayloadMatches)
};

// The record header at the start of `bytes` when its magic and header CRC check out (the payload is not
// looked at); nullopt otherwise, also when fewer than kRecordHeaderSize bytes are given.
std::optional<RecordHeader> DecodeRecordHeader(std::string_view bytes);
// Whether `payload` is the record's payload: its length and the record CRC match.
bool RecordPayloadMatches(const RecordHeader& header, std::string_view payload);

struct ScannedRecord {
  uint64_t sequence = 0;
  uint64_t offset = 0;  // of the record header in the segment
  uint32_t payload_bytes = 0;
  uint32_t samples = 0;
  int64_t timestamp_ms = 0;
};

struct SegmentScan {
  bool header_ok = false;  // the segment header checked out and names `first_sequence`
  std::vector<ScannedRecord> records;
  uint64_t good_end = 0;         // end of the last good record (or of the header): where appends go on
  uint64_t damaged_records = 0;  // records lost to damage, the torn tail included
  bool torn_tail = false;        // bytes after good_end that hold no good record
  std::string problem;           // the first thing that did not check out, for the open notes; "" if none
};

// Scans a segment file's bytes. `first_sequence` is the one its name gives; `after` is the last sequence
// read from the segments before it (0 for none): records at or below it are damage. A segment header with
// a newer format version is an error (that file is not this runmon's to read or cut); everything else is
// counted in the scan.
Result<SegmentScan> ScanSegment(std::string_view bytes, uint64_t first_sequence, uint64_t after);

// The name of the segment whose first record is `first_sequence`, and the sequence a name gives (nullopt
// for any other file name).
std::string SegmentFileName(uint64_t first_sequence);
std::optional<uint64_t> ParseSegmentFileName(std::string_view name);

struct CursorFields {
  uint64_t acked = 0;
  uint64_t inflight_end = 0;
};
std::string EncodeCursor(const CursorFields& cursor);
// The cursor when `bytes` is exactly a cursor file that checks out (acked <= inflight_end <= kMaxSequence);
// an error saying what is wrong otherwise.
Result<CursorFields> DecodeCursor(std::string_view bytes);

}  // namespace runmon::remote_write
