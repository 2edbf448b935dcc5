// The payload of one queued record: one sampler tick as the on-disk queue (disk_queue.hpp) keeps it until it
// is sent, with the tick's time and its values under their runmon keys, in the catalog's units, exactly as
// the Sample held them; the conversion to Prometheus names and base units happens when a batch is sent, so
// a queue left by a crash is sent under the names of the runmon that sends it.
//
// The format (little-endian, varints as protobuf's: 7 bits a byte, low group first):
//   version byte (1)
//   timestamp_ms    zigzag varint (milliseconds since the Unix epoch)
//   count           varint
//   count x { key length varint, key bytes, value as 8 bytes (IEEE 754 binary64, little-endian) }
// It is canonical: the decoder refuses varints longer than they need to be and bytes after the last value,
// so every payload it accepts is the one EncodeTick writes for what it decoded. A payload comes from disk
// and may be damaged past the queue's CRC (or written by another version): decoding is pure, bounded by the
// payload's size, and answers an error for anything else, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::remote_write {

inline constexpr uint8_t kTickFormatVersion = 1;
inline constexpr size_t kMaxTickKeyBytes = 4096;

struct TickValue {
  std::string_view key;
  double value = 0;
};

// Views into the payload it was decoded from: valid while that payload lives.
struct DecodedTick {
  int64_t timestamp_ms = 0;
  std::vector<TickValue> values;
};

// Replaces `out` with the payload. Keys longer than kMaxTickKeyBytes are the caller's to leave out (no
// catalog key comes near it); the encoder writes what it is given.
void EncodeTick(int64_t timestamp_ms, std::span<const TickValue> values, std::string* out);

// Fills `out` (its vector's capacity is reused) or says what is wrong with the payload.
Status DecodeTick(std::string_view payload, DecodedTick* out);

}  // namespace runmon::remote_write
