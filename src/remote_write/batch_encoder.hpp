// A batch of queued records as one remote-write request body: the ticks decoded, their values mapped to
// series (series_mapper.hpp) and converted to base units, one TimeSeries per series holding all of its
// samples in timestamp order (so its labels go once per request), serialized as a prompb WriteRequest
// (remote_write.proto) and compressed with snappy's block format, as remote write 1.0 wants.
//
// The request is written straight in protobuf's wire format, with the field numbers protoc generates from
// remote_write.proto and the bytes its serializer would write (fields in number order, proto3 defaults
// left out): building one generated message per sample cost several times the encoding itself (a test
// checks the bytes against SerializeToString of the same message). The labels' bytes are made once per
// series and kept.
//
// The body depends on the records alone (and the mapper's constant labels): series go in the order the
// batch first names them, not in the mapper's numbering, which differs after a restart. A batch resent
// after a restart is then byte for byte the one sent before it. A record whose payload does not decode
// (damage the queue's CRC missed, another version's format) is left out and counted; so are values without
// a Prometheus name (a queue an older runmon wrote) and values that are not finite. A series' samples are
// in order already when the writer queued them (remote_writer.cpp); if not (a wall clock that went back
// between two runs on one queue), they are sorted, and of two at one timestamp the later in the queue wins,
// since Prometheus refuses a request with two samples of one series at one timestamp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "remote_write/disk_queue.hpp"
#include "remote_write/sample_codec.hpp"
#include "remote_write/series_mapper.hpp"

namespace runmon::remote_write {

struct EncodedBatch {
  std::string body;  // snappy-compressed WriteRequest
  uint64_t samples = 0;
  uint64_t series = 0;
  uint64_t unmapped = 0;    // values whose key has no Prometheus name
  uint64_t non_finite = 0;  // NaN and infinities
  uint64_t duplicates = 0;  // values at a timestamp their series has later in the batch
  uint64_t undecodable_records = 0;
  std::string first_decode_error;  // of the first record that did not decode
};

class BatchEncoder {
 public:
  explicit BatchEncoder(SeriesMapper& mapper) : mapper_(mapper) {}
  BatchEncoder(const BatchEncoder&) = delete;
  BatchEncoder& operator=(const BatchEncoder&) = delete;

  EncodedBatch Encode(std::span<const QueueRecord> records);

 private:
  struct SeriesPoints {
    const Series* series = nullptr;
    std::vector<std::pair<int64_t, double>> points;  // timestamp in ms, value in base units
  };

  // The records' series and samples gathered in points_[0, used_) (and counted in `out`).
  void Gather(std::span<const QueueRecord> records, EncodedBatch* out);
  void Serialize(EncodedBatch* out);
  const std::string& WireLabels(const Series& series);

  SeriesMapper& mapper_;
  DecodedTick tick_;
  std::vector<std::string> wire_labels_;  // by Series::id: its labels as TimeSeries fields; empty until used
  std::vector<int32_t> slot_of_series_;   // by Series::id: index into points_, -1 when not in this batch
  std::vector<SeriesPoints> points_;      // entries past used_ keep their capacity for the next batch
  size_t used_ = 0;
  std::vector<size_t> series_sizes_;
  std::string serialized_;
};

}  // namespace runmon::remote_write
