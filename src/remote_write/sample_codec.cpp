// The queued tick's encoding. See sample_codec.hpp for the format and why it is canonical.
#include "remote_write/sample_codec.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace runmon::remote_write {
namespace {

static_assert(std::endian::native == std::endian::little, "the payload stores doubles as the CPU does");

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

uint64_t ZigZag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

int64_t UnZigZag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size() - position_; }
  size_t position() const { return position_; }

  // A minimal varint of at most 10 bytes whose value fits 64 bits.
  bool Varint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (position_ == bytes_.size()) return false;
      const auto byte = static_cast<uint8_t>(bytes_[position_++]);
      if (shift == 63 && byte > 1) return false;  // past 64 bits
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        if (byte == 0 && shift > 0) return false;  // a longer form than the value needs
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool Bytes(size_t size, std::string_view* out) {
    if (size > remaining()) return false;
    *out = bytes_.substr(position_, size);
    position_ += size;
    return true;
  }

  bool Double(double* out) {
    if (remaining() < sizeof(double)) return false;
    std::memcpy(out, bytes_.data() + position_, sizeof(double));
    position_ += sizeof(double);
    return true;
  }

 private:
  std::string_view bytes_;
  size_t position_ = 0;
};

Status Broken(const Reader& reader, std::string_view what) {
  return Error{fmt::format("queued tick: {} at byte {}", what, reader.position())};
}

}  // namespace

void EncodeTick(int64_t timestamp_ms, std::span<const TickValue> values, std::string* out) {
  out->clear();
  size_t size = 1 + 10 + 10;
  for (const TickValue& value : values) size += 2 + value.key.size() + sizeof(double);
  out->reserve(size);
  *out += static_cast<char>(kTickFormatVersion);
  AppendVarint(*out, ZigZag(timestamp_ms));
  AppendVarint(*out, values.size());
  for (const TickValue& value : values) {
    AppendVarint(*out, value.key.size());
    *out += value.key;
    char bytes[sizeof(double)];
    std::memcpy(bytes, &value.value, sizeof(double));
    out->append(bytes, sizeof(double));
  }
}

Status DecodeTick(std::string_view payload, DecodedTick* out) {
  out->values.clear();
  Reader reader(payload);
  std::string_view version;
  if (!reader.Bytes(1, &version)) return Broken(reader, "empty payload");
  if (static_cast<uint8_t>(version[0]) != kTickFormatVersion) {
    return Error{fmt::format("queued tick: format version {} (this runmon reads {})",
                             static_cast<uint8_t>(version[0]), kTickFormatVersion)};
  }
  uint64_t timestamp = 0;
  if (!reader.Varint(&timestamp)) return Broken(reader, "bad timestamp varint");
  out->timestamp_ms = UnZigZag(timestamp);
  uint64_t count = 0;
  if (!reader.Varint(&count)) return Broken(reader, "bad value count varint");
  // Each value takes at least 9 bytes: a count the payload cannot hold is refused before any allocation.
  if (count > reader.remaining() / (1 + sizeof(double))) {
    return Broken(reader, fmt::format("{} values cannot fit in {} bytes", count, reader.remaining()));
  }
  out->values.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t key_size = 0;
    if (!reader.Varint(&key_size)) return Broken(reader, "bad key length varint");
    if (key_size > kMaxTickKeyBytes) return Broken(reader, fmt::format("key of {} bytes", key_size));
    TickValue value;
    if (!reader.Bytes(static_cast<size_t>(key_size), &value.key)) return Broken(reader, "truncated key");
    if (!reader.Double(&value.value)) return Broken(reader, "truncated value");
    out->values.push_back(value);
  }
  if (reader.remaining() != 0)
    return Broken(reader, fmt::format("{} bytes after the last value", reader.remaining()));
  return OkStatus();
}

}  // namespace runmon::remote_write
