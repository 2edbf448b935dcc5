// Encoding a batch. See batch_encoder.hpp.
#include "remote_write/batch_encoder.hpp"

#include <snappy.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "remote_write/remote_write.pb.h"

namespace runmon::remote_write {
namespace {

constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kVarint = 0;

constexpr char Tag(int field, uint32_t wire_type) {
  return static_cast<char>((static_cast<uint32_t>(field) << 3) | wire_type);
}
constexpr char kTimeSeriesTag = Tag(prometheus::WriteRequest::kTimeseriesFieldNumber, kLengthDelimited);
constexpr char kLabelTag = Tag(prometheus::TimeSeries::kLabelsFieldNumber, kLengthDelimited);
constexpr char kSampleTag = Tag(prometheus::TimeSeries::kSamplesFieldNumber, kLengthDelimited);
constexpr char kLabelNameTag = Tag(prometheus::Label::kNameFieldNumber, kLengthDelimited);
constexpr char kLabelValueTag = Tag(prometheus::Label::kValueFieldNumber, kLengthDelimited);
constexpr char kSampleValueTag = Tag(prometheus::Sample::kValueFieldNumber, kFixed64);
constexpr char kSampleTimestampTag = Tag(prometheus::Sample::kTimestampFieldNumber, kVarint);
static_assert(std::endian::native == std::endian::little, "doubles are written as the CPU holds them");

size_t VarintSize(uint64_t value) {
  return static_cast<size_t>(std::bit_width(value | 1) + 6) / 7;
}

char* WriteVarint(char* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

void AppendVarint(std::string& out, uint64_t value) {
  char bytes[10];
  out.append(bytes, static_cast<size_t>(WriteVarint(bytes, value) - bytes));
}

// proto3 leaves out a field at its default: a double whose bits are all 0 (not -0.0), a timestamp of 0.
size_t SampleSize(int64_t timestamp_ms, double value) {
  size_t size = 0;
  if (std::bit_cast<uint64_t>(value) != 0) size += 1 + sizeof(double);
  if (timestamp_ms != 0) size += 1 + VarintSize(static_cast<uint64_t>(timestamp_ms));
  return size;
}

size_t SeriesSize(const std::string& labels, const std::vector<std::pair<int64_t, double>>& points) {
  size_t size = labels.size();
  for (const auto& [timestamp_ms, value] : points) {
    const size_t sample = SampleSize(timestamp_ms, value);
    size += 1 + VarintSize(sample) + sample;
  }
  return size;
}

char* WriteSample(char* out, int64_t timestamp_ms, double value) {
  *out++ = kSampleTag;
  out = WriteVarint(out, SampleSize(timestamp_ms, value));
  if (std::bit_cast<uint64_t>(value) != 0) {
    *out++ = kSampleValueTag;
    std::memcpy(out, &value, sizeof(double));
    out += sizeof(double);
  }
  if (timestamp_ms != 0) {
    *out++ = kSampleTimestampTag;
    out = WriteVarint(out, static_cast<uint64_t>(timestamp_ms));
  }
  return out;
}

void AppendString(std::string& out, char tag, std::string_view text) {
  if (text.empty()) return;
  out += tag;
  AppendVarint(out, text.size());
  out += text;
}

bool EarlierTimestamp(const std::pair<int64_t, double>& a, const std::pair<int64_t, double>& b) {
  return a.first < b.first;
}

// Sorted by timestamp; of equal timestamps the last given is kept. Returns how many were left out.
uint64_t SortAndDeduplicate(std::vector<std::pair<int64_t, double>>& points) {
  if (!std::is_sorted(points.begin(), points.end(), EarlierTimestamp)) {
    std::stable_sort(points.begin(), points.end(), EarlierTimestamp);
  }
  size_t kept = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (kept > 0 && points[kept - 1].first == points[i].first) {
      points[kept - 1] = points[i];
    } else {
      points[kept++] = points[i];
    }
  }
  const uint64_t left_out = points.size() - kept;
  points.resize(kept);
  return left_out;
}

}  // namespace

void BatchEncoder::Gather(std::span<const QueueRecord> records, EncodedBatch* out) {
  for (const QueueRecord& record : records) {
    if (const Status decoded = DecodeTick(record.payload, &tick_); !decoded.ok()) {
      if (out->undecodable_records++ == 0) {
        out->first_decode_error = "record " + std::to_string(record.sequence) + ": " + decoded.error();
      }
      continue;
    }
    for (size_t position = 0; position < tick_.values.size(); ++position) {
      const TickValue& value = tick_.values[position];
      const Series* series = mapper_.Map(value.key, position);
      if (series == nullptr) {
        ++out->unmapped;
        continue;
      }
      if (!std::isfinite(value.value)) {
        ++out->non_finite;
        continue;
      }
      if (slot_of_series_.size() <= series->id) slot_of_series_.resize(series->id + 1, -1);
      int32_t& slot = slot_of_series_[series->id];
      if (slot < 0) {
        if (used_ == points_.size()) points_.emplace_back();
        slot = static_cast<int32_t>(used_++);
        points_[static_cast<size_t>(slot)].series = series;
      }
      points_[static_cast<size_t>(slot)].points.emplace_back(tick_.timestamp_ms,
                                                             ToBaseUnits(*series->metric, value.value));
    }
  }
}

const std::string& BatchEncoder::WireLabels(const Series& series) {
  if (wire_labels_.size() <= series.id) wire_labels_.resize(series.id + 1);
  std::string& wire = wire_labels_[series.id];
  if (wire.empty()) {
    std::string label;
    for (const SeriesLabel& entry : series.labels) {
      label.clear();
      AppendString(label, kLabelNameTag, entry.name);
      AppendString(label, kLabelValueTag, entry.value);
      wire += kLabelTag;
      AppendVarint(wire, label.size());
      wire += label;
    }
  }
  return wire;
}

void BatchEncoder::Serialize(EncodedBatch* out) {
  // Sizes first, then one buffer of the request's size written through.
  size_t total = 0;
  series_sizes_.clear();
  for (size_t i = 0; i < used_; ++i) {
    SeriesPoints& entry = points_[i];
    out->duplicates += SortAndDeduplicate(entry.points);
    const size_t size = SeriesSize(WireLabels(*entry.series), entry.points);
    series_sizes_.push_back(size);
    total += 1 + VarintSize(size) + size;
  }
  serialized_.resize(total);
  char* cursor = serialized_.data();
  for (size_t i = 0; i < used_; ++i) {
    SeriesPoints& entry = points_[i];
    const std::string& labels = wire_labels_[entry.series->id];
    *cursor++ = kTimeSeriesTag;
    cursor = WriteVarint(cursor, series_sizes_[i]);
    std::memcpy(cursor, labels.data(), labels.size());
    cursor += labels.size();
    for (const auto& [timestamp_ms, value] : entry.points) cursor = WriteSample(cursor, timestamp_ms, value);
    out->samples += entry.points.size();
    slot_of_series_[entry.series->id] = -1;
    entry.points.clear();
  }
  out->series = used_;
  used_ = 0;
}

EncodedBatch BatchEncoder::Encode(std::span<const QueueRecord> records) {
  EncodedBatch out;
  Gather(records, &out);
  Serialize(&out);
  snappy::Compress(serialized_.data(), serialized_.size(), &out.body);
  return out;
}

}  // namespace runmon::remote_write
