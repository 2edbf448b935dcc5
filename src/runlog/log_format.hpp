// The framing of W&B's run log (docs/run-log.md): LevelDB's log format with a 7-byte file header
// (":W&B", magic 0xBEE1, version 0), 32 KiB blocks counted from offset 0 (so block 0 holds 32761 bytes of
// chunks), 7-byte chunk headers (CRC-32, length, type) and a plain IEEE CRC-32 over the type byte and the
// payload. Pure functions: the writer and the tests frame records with AppendFramedRecord.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runmon::runlog {

inline constexpr uint64_t kBlockSize = 32768;
inline constexpr uint64_t kChunkHeaderSize = 7;
inline constexpr uint64_t kMaxChunkPayload = kBlockSize - kChunkHeaderSize;
inline constexpr std::array<unsigned char, 7> kFileHeader = {0x3A, 0x57, 0x26, 0x42, 0xE1, 0xBE, 0x00};
inline constexpr uint64_t kFileHeaderSize = kFileHeader.size();

enum class ChunkType : unsigned char { kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4 };

// CRC-32 (IEEE, as zlib's crc32(), which it calls for long inputs) of `bytes`, continuing from `crc` (0 to
// start).
uint32_t Crc32(uint32_t crc, std::string_view bytes);
// CRC-32 (IEEE) of the type byte followed by the payload, as stored in a chunk header.
uint32_t ChunkChecksum(ChunkType type, std::string_view payload);

// Appends to `out` the bytes that put `payload` at file offset `offset` (>= 7): a block trailer of zeros
// when fewer than 7 bytes are left in the block, then one FULL chunk, or FIRST, MIDDLE... and LAST chunks
// (a FIRST chunk may be empty when exactly 7 bytes are left). Returns the offset after the record.
uint64_t AppendFramedRecord(uint64_t offset, std::string_view payload, std::string& out);
// Where a record appended at `offset` starts (its first chunk header: past a block trailer when fewer than 7
// bytes are left in the block) and ends, as AppendFramedRecord frames it.
uint64_t FramedRecordStart(uint64_t offset);
uint64_t FramedRecordEnd(uint64_t offset, size_t payload_size);

}  // namespace runmon::runlog
