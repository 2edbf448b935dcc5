// The queue's byte formats (layout in queue_format.hpp). Every appended payload and every record Open scans
// or Read returns passes the CRC-32C, so it uses the CPU's CRC32 instruction where there is one (x86-64
// with SSE 4.2, checked at run time: several GB/s); elsewhere tables, eight bytes a step (slicing-by-8).
#include "remote_write/queue_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include <fmt/format.h>

namespace runmon::remote_write {
namespace {

using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr CrcTables MakeCrcTables() {
  CrcTables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) != 0 ? 0x82F63B78u : 0u);
    tables[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte) {
    for (size_t slice = 1; slice < 8; ++slice) {
      const uint32_t previous = tables[slice - 1][byte];
      tables[slice][byte] = (previous >> 8) ^ tables[0][previous & 0xFF];
    }
  }
  return tables;
}

constexpr CrcTables kCrcTables = MakeCrcTables();

void PutU32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}
void PutU64(char* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}
uint32_t GetU32(const char* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(in[i]);
  return value;
}
uint64_t GetU64(const char* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(in[i]);
  return value;
}

constexpr size_t kRecordCheckedBytes = 28;  // the header fields both CRCs cover
constexpr size_t kSegmentCheckedBytes = 20;
constexpr size_t kCursorCheckedBytes = 28;
constexpr std::string_view kSegmentSuffix = ".seg";
constexpr size_t kSegmentNameDigits = 20;

// The record header at `offset` when it checks out and its payload lies inside `bytes` and matches.
struct Candidate {
  std::optional<RecordHeader> header;
  bool whole = false;  // the payload is inside `bytes`
  bool matches = false;
};

Candidate LookAt(std::string_view bytes, size_t offset) {
  Candidate candidate;
  candidate.header = DecodeRecordHeader(bytes.substr(offset));
  if (!candidate.header) return candidate;
  candidate.whole = bytes.size() - offset - kRecordHeaderSize >= candidate.header->payload_bytes;
  candidate.matches = candidate.whole &&
                      RecordPayloadMatches(*candidate.header, bytes.substr(offset + kRecordHeaderSize,
                                                                           candidate.header->payload_bytes));
  return candidate;
}

}  // namespace

uint32_t Crc32cPortable(uint32_t crc, std::string_view data) {
  crc = ~crc;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t left = data.size();
  while (left >= 8) {
    const uint32_t low = crc ^ (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                                static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
    crc = kCrcTables[7][low & 0xFF] ^ kCrcTables[6][(low >> 8) & 0xFF] ^ kCrcTables[5][(low >> 16) & 0xFF] ^
          kCrcTables[4][low >> 24] ^ kCrcTables[3][p[4]] ^ kCrcTables[2][p[5]] ^ kCrcTables[1][p[6]] ^
          kCrcTables[0][p[7]];
    p += 8;
    left -= 8;
  }
  while (left-- > 0) crc = (crc >> 8) ^ kCrcTables[0][(crc ^ *p++) & 0xFF];
  return ~crc;
}

#if defined(__x86_64__)
namespace {

__attribute__((target("sse4.2"))) uint32_t Crc32cInstruction(uint32_t crc, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  uint64_t state = ~crc;
  for (; left >= 8; p += 8, left -= 8) {
    uint64_t word = 0;
    std::memcpy(&word, p, sizeof word);
    state = _mm_crc32_u64(state, word);
  }
  auto state32 = static_cast<uint32_t>(state);
  for (; left > 0; ++p, --left) state32 = _mm_crc32_u8(state32, static_cast<unsigned char>(*p));
  return ~state32;
}

}  // namespace

uint32_t Crc32c(uint32_t crc, std::string_view data) {
  static const bool instruction = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return instruction ? Crc32cInstruction(crc, data) : Crc32cPortable(crc, data);
}
#else
uint32_t Crc32c(uint32_t crc, std::string_view data) {
  return Crc32cPortable(crc, data);
}
#endif

std::string EncodeSegmentHeader(uint64_t first_sequence) {
  std::string header(kSegmentHeaderSize, '\0');
  std::memcpy(header.data(), kSegmentMagic.data(), kSegmentMagic.size());
  PutU32(header.data() + 8, kFormatVersion);
  PutU64(header.data() + 12, first_sequence);
  PutU32(header.data() + 20, Crc32c(0, std::string_view(header).substr(0, kSegmentCheckedBytes)));
  return header;
}

void AppendRecord(uint64_t sequence, uint32_t samples, int64_t timestamp_ms, std::string_view payload,
                  std::string& out) {
  char header[kRecordHeaderSize];
  PutU32(header, kRecordMagic);
  PutU32(header + 4, static_cast<uint32_t>(payload.size()));
  PutU64(header + 8, sequence);
  PutU64(header + 16, static_cast<uint64_t>(timestamp_ms));
  PutU32(header + 24, samples);
  const uint32_t header_crc = Crc32c(0, std::string_view(header, kRecordCheckedBytes));
  PutU32(header + 28, header_crc);
  PutU32(header + 32, Crc32c(header_crc, payload));
  out.append(header, kRecordHeaderSize);
  out.append(payload);
}

std::optional<RecordHeader> DecodeRecordHeader(std::string_view bytes) {
  if (bytes.size() < kRecordHeaderSize) return std::nullopt;
  const char* p = bytes.data();
  if (GetU32(p) != kRecordMagic) return std::nullopt;
  if (Crc32c(0, bytes.substr(0, kRecordCheckedBytes)) != GetU32(p + 28)) return std::nullopt;
  RecordHeader header;
  header.payload_bytes = GetU32(p + 4);
  header.sequence = GetU64(p + 8);
  header.timestamp_ms = static_cast<int64_t>(GetU64(p + 16));
  header.samples = GetU32(p + 24);
  header.header_crc = GetU32(p + 28);
  header.record_crc = GetU32(p + 32);
  return header;
}

bool RecordPayloadMatches(const RecordHeader& header, std::string_view payload) {
  return payload.size() == header.payload_bytes && Crc32c(header.header_crc, payload) == header.record_crc;
}

Result<SegmentScan> ScanSegment(std::string_view bytes, uint64_t first_sequence, uint64_t after) {
  SegmentScan scan;
  size_t position = 0;
  if (bytes.size() < kSegmentHeaderSize) {
    // Created but killed before its header was written whole: it never held a record.
    scan.problem = fmt::format("{} bytes, shorter than a segment header", bytes.size());
    return scan;
  }
  if (bytes.substr(0, kSegmentMagic.size()) != kSegmentMagic ||
      Crc32c(0, bytes.substr(0, kSegmentCheckedBytes)) != GetU32(bytes.data() + 20)) {
    scan.problem = "the segment header does not check out";
  } else if (const uint32_t version = GetU32(bytes.data() + 8); version != kFormatVersion) {
    return Error{
        fmt::format("segment format version {} (this runmon reads version {})", version, kFormatVersion)};
  } else if (const uint64_t named = GetU64(bytes.data() + 12); named != first_sequence) {
    scan.problem = fmt::format("the segment header names sequence {}", named);
  } else {
    scan.header_ok = true;
    position = kSegmentHeaderSize;
    scan.good_end = kSegmentHeaderSize;
  }

  // Between two good records: whether bytes were skipped, and the highest sequence a record header there
  // gave (a header that checks out is trusted for its sequence even when its payload does not). Without a
  // good segment header the search starts at 0, and the header's own bytes are no damaged record.
  bool skipped = false;
  const auto skip = [&skipped](size_t at) { skipped = skipped || at >= kSegmentHeaderSize; };
  uint64_t skipped_up_to = 0;
  uint64_t expected = first_sequence;  // the next record's sequence when nothing is missing
  uint64_t last = after;
  const auto note = [&scan](std::string text) {
    if (scan.problem.empty()) scan.problem = std::move(text);
  };
  const char magic[4] = {
      static_cast<char>(kRecordMagic & 0xFF), static_cast<char>((kRecordMagic >> 8) & 0xFF),
      static_cast<char>((kRecordMagic >> 16) & 0xFF), static_cast<char>(kRecordMagic >> 24)};
  const std::string_view magic_bytes(magic, sizeof magic);

  while (position < bytes.size()) {
    const Candidate candidate = LookAt(bytes, position);
    if (!candidate.header) {
      if (!skipped && position >= kSegmentHeaderSize)
        note(fmt::format("no record header at offset {}", position));
      skip(position);
      const size_t next = bytes.find(magic_bytes, position + 1);
      position = next == std::string_view::npos ? bytes.size() : next;
      continue;
    }
    const RecordHeader& header = *candidate.header;
    const uint64_t sequence = header.sequence;
    const bool in_order = sequence > last && sequence >= first_sequence && sequence <= kMaxSequence;
    if (!candidate.matches) {
      // A header that checks out: its length is right, so a damaged payload is stepped over whole; one
      // that reaches past the end is a torn write (or a damaged length), and the search goes on from the
      // next byte.
      note(candidate.whole ? fmt::format("record {} at offset {} is damaged", sequence, position)
                           : fmt::format("record {} at offset {} is cut short", sequence, position));
      skip(position);
      if (in_order) skipped_up_to = std::max(skipped_up_to, sequence);
      position = candidate.whole ? position + kRecordHeaderSize + header.payload_bytes : position + 1;
      continue;
    }
    const size_t end = position + kRecordHeaderSize + header.payload_bytes;
    if (!in_order) {
      note(fmt::format("record {} at offset {} is out of order (after {})", sequence, position, last));
      skip(position);
      position = end;
      continue;
    }
    if (sequence > expected) {
      scan.damaged_records += sequence - expected;
      note(fmt::format("records {} to {} are missing before offset {}", expected, sequence - 1, position));
    } else if (skipped) {
      scan.damaged_records += 1;
    }
    scan.records.push_back({.sequence = sequence,
                            .offset = position,
                            .payload_bytes = header.payload_bytes,
                            .samples = header.samples,
                            .timestamp_ms = header.timestamp_ms});
    last = sequence;
    expected = sequence + 1;
    skipped = false;
    skipped_up_to = 0;
    position = end;
    scan.good_end = end;
  }
  if (skipped) {
    scan.torn_tail = true;
    scan.damaged_records += skipped_up_to >= expected ? skipped_up_to - expected + 1 : 1;
  }
  return scan;
}

std::string SegmentFileName(uint64_t first_sequence) {
  return fmt::format("{:0{}}{}", first_sequence, kSegmentNameDigits, kSegmentSuffix);
}

std::optional<uint64_t> ParseSegmentFileName(std::string_view name) {
  if (name.size() != kSegmentNameDigits + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) {
    return std::nullopt;
  }
  uint64_t sequence = 0;
  const char* end = name.data() + kSegmentNameDigits;
  const auto [stop, error] = std::from_chars(name.data(), end, sequence);
  if (error != std::errc() || stop != end || sequence == 0 || sequence > kMaxSequence) return std::nullopt;
  return sequence;
}

std::string EncodeCursor(const CursorFields& cursor) {
  std::string bytes(kCursorSize, '\0');
  std::memcpy(bytes.data(), kCursorMagic.data(), kCursorMagic.size());
  PutU32(bytes.data() + 8, kFormatVersion);
  PutU64(bytes.data() + 12, cursor.acked);
  PutU64(bytes.data() + 20, cursor.inflight_end);
  PutU32(bytes.data() + 28, Crc32c(0, std::string_view(bytes).substr(0, kCursorCheckedBytes)));
  return bytes;
}

Result<CursorFields> DecodeCursor(std::string_view bytes) {
  if (bytes.size() != kCursorSize) {
    return Error{fmt::format("{} bytes where a cursor has {}", bytes.size(), kCursorSize)};
  }
  if (bytes.substr(0, kCursorMagic.size()) != kCursorMagic) return Error{"not a cursor file (magic)"};
  if (Crc32c(0, bytes.substr(0, kCursorCheckedBytes)) != GetU32(bytes.data() + 28)) {
    return Error{"the cursor's checksum does not match"};
  }
  if (const uint32_t version = GetU32(bytes.data() + 8); version != kFormatVersion) {
    return Error{
        fmt::format("cursor format version {} (this runmon reads version {})", version, kFormatVersion)};
  }
  CursorFields cursor{.acked = GetU64(bytes.data() + 12), .inflight_end = GetU64(bytes.data() + 20)};
  if (cursor.acked > cursor.inflight_end || cursor.inflight_end > kMaxSequence) {
    return Error{fmt::format("the cursor's acked {} and in-flight end {} are out of range", cursor.acked,
                             cursor.inflight_end)};
  }
  return cursor;
}

}  // namespace runmon::remote_write
