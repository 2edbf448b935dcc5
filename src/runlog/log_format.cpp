// Chunking exactly as W&B's writers do it (run-log-format.md 2.4); zlib provides the CRC-32.
#include "runlog/log_format.hpp"

#include <zlib.h>

namespace runmon::runlog {
namespace {

void AppendChunk(ChunkType type, std::string_view payload, std::string& out) {
  const uint32_t crc = ChunkChecksum(type, payload);
  const auto length = static_cast<uint16_t>(payload.size());
  const char header[7] = {static_cast<char>(crc & 0xFF),
                          static_cast<char>((crc >> 8) & 0xFF),
                          static_cast<char>((crc >> 16) & 0xFF),
                          static_cast<char>((crc >> 24) & 0xFF),
                          static_cast<char>(length & 0xFF),
                          static_cast<char>(length >> 8),
                          static_cast<char>(type)};
  out.append(header, sizeof(header));
  out.append(payload);
}

}  // namespace

uint32_t ChunkChecksum(ChunkType type, std::string_view payload) {
  const auto type_byte = static_cast<Bytef>(type);
  uLong crc = crc32(0L, &type_byte, 1);
  // zlib treats a null buffer as "start over" and returns 0, so an empty view must not reach it.
  if (!payload.empty()) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
  }
  return static_cast<uint32_t>(crc);
}

uint64_t AppendFramedRecord(uint64_t offset, std::string_view payload, std::string& out) {
  uint64_t room = kBlockSize - offset % kBlockSize;
  if (room < kChunkHeaderSize) {
    out.append(room, '\0');
    offset += room;
    room = kBlockSize;
  }
  if (payload.size() + kChunkHeaderSize <= room) {
    AppendChunk(ChunkType::kFull, payload, out);
    return offset + kChunkHeaderSize + payload.size();
  }
  const uint64_t first = room - kChunkHeaderSize;
  AppendChunk(ChunkType::kFirst, payload.substr(0, first), out);
  offset += room;
  payload.remove_prefix(first);
  while (payload.size() > kMaxChunkPayload) {
    AppendChunk(ChunkType::kMiddle, payload.substr(0, kMaxChunkPayload), out);
    offset += kBlockSize;
    payload.remove_prefix(kMaxChunkPayload);
  }
  AppendChunk(ChunkType::kLast, payload, out);
  return offset + kChunkHeaderSize + payload.size();
}

}  // namespace runmon::runlog
