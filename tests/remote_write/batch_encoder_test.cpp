// Batches decoded back (snappy, then protobuf) to the series and samples expected: one TimeSeries per
// series with its labels once and its samples in time order and in base units, series in the order the
// batch names them; values without a name, not finite or at a timestamp given twice left out and counted;
// an undecodable record skipped; the same records giving the same bytes from a mapper that saw other keys
// first (a restart); and an empty batch.
#include "remote_write/batch_encoder.hpp"

#include <snappy.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "remote_write/remote_write.pb.h"

namespace runmon::remote_write {
namespace {

QueueRecord Record(uint64_t sequence, int64_t timestamp_ms, const std::vector<TickValue>& values) {
  QueueRecord record;
  record.sequence = sequence;
  record.samples = static_cast<uint32_t>(values.size());
  record.timestamp_ms = timestamp_ms;
  EncodeTick(timestamp_ms, values, &record.payload);
  return record;
}

prometheus::WriteRequest Decode(const std::string& body) {
  std::string serialized;
  EXPECT_TRUE(snappy::Uncompress(body.data(), body.size(), &serialized));
  prometheus::WriteRequest request;
  EXPECT_TRUE(request.ParseFromString(serialized));
  return request;
}

std::string Name(const prometheus::TimeSeries& series) {
  for (const prometheus::Label& label : series.labels()) {
    if (label.name() == "__name__") return label.value();
  }
  return "";
}

std::string Label(const prometheus::TimeSeries& series, const std::string& name) {
  for (const prometheus::Label& label : series.labels()) {
    if (label.name() == name) return label.value();
  }
  return "<none>";
}

std::vector<std::pair<int64_t, double>> Points(const prometheus::TimeSeries& series) {
  std::vector<std::pair<int64_t, double>> out;
  for (const prometheus::Sample& sample : series.samples())
    out.emplace_back(sample.timestamp(), sample.value());
  return out;
}

TEST(BatchEncoder, OneSeriesPerKeyWithAllItsSamplesInOrderAndInBaseUnits) {
  SeriesMapper mapper({"node-1", "run-7", "", "0"});
  BatchEncoder encoder(mapper);
  const std::vector<QueueRecord> records = {
      Record(1, 1000, {{"cpu", 50}, {"proc.memory.rssMB", 1}, {"gpu.0.temp", 60}}),
      Record(2, 1100, {{"cpu", 25}, {"gpu.0.temp", 61}, {"gpu.1.temp", 40}}),
      Record(3, 1200, {{"proc.memory.rssMB", 2}, {"cpu", 12.5}}),
  };
  const EncodedBatch batch = encoder.Encode(records);
  EXPECT_EQ(batch.samples, 8u);
  EXPECT_EQ(batch.series, 4u);
  EXPECT_EQ(batch.unmapped + batch.non_finite + batch.duplicates + batch.undecodable_records, 0u);

  const prometheus::WriteRequest request = Decode(batch.body);
  ASSERT_EQ(request.timeseries_size(), 4);
  EXPECT_EQ(Name(request.timeseries(0)), "runmon_process_cpu_ratio");
  EXPECT_EQ(Points(request.timeseries(0)),
            (std::vector<std::pair<int64_t, double>>{{1000, 0.5}, {1100, 0.25}, {1200, 0.125}}));
  EXPECT_EQ(Name(request.timeseries(1)), "runmon_process_resident_memory_bytes");
  EXPECT_EQ(Points(request.timeseries(1)),
            (std::vector<std::pair<int64_t, double>>{{1000, 1048576.0}, {1200, 2097152.0}}));
  EXPECT_EQ(Name(request.timeseries(2)), "runmon_gpu_temperature_celsius");
  EXPECT_EQ(Label(request.timeseries(2), "gpu"), "0");
  EXPECT_EQ(Points(request.timeseries(2)), (std::vector<std::pair<int64_t, double>>{{1000, 60}, {1100, 61}}));
  EXPECT_EQ(Label(request.timeseries(3), "gpu"), "1");
  for (const prometheus::TimeSeries& series : request.timeseries()) {
    ASSERT_GE(series.labels_size(), 1);
    EXPECT_EQ(series.labels(0).name(), "__name__");
    for (int i = 1; i < series.labels_size(); ++i)
      EXPECT_LT(series.labels(i - 1).name(), series.labels(i).name());
    EXPECT_EQ(Label(series, "host"), "node-1");
    EXPECT_EQ(Label(series, "run_id"), "run-7");
    EXPECT_EQ(Label(series, "node_rank"), "0");
    EXPECT_EQ(Label(series, "job_id"), "<none>");
  }
}

TEST(BatchEncoder, LeavesOutAndCountsWhatCannotBeSent) {
  SeriesMapper mapper({});
  BatchEncoder encoder(mapper);
  std::vector<QueueRecord> records = {
      Record(1, 1000,
             {{"cpu", std::numeric_limits<double>::quiet_NaN()}, {"openmetrics.x", 1}, {"gpu.0.temp", 1}}),
      Record(2, 1100, {{"cpu", std::numeric_limits<double>::infinity()}, {"gpu.0.temp", 2}}),
      Record(3, 1200, {}),
  };
  records[2].payload = "\x07garbage";
  const EncodedBatch batch = encoder.Encode(records);
  EXPECT_EQ(batch.samples, 2u);
  EXPECT_EQ(batch.non_finite, 2u);
  EXPECT_EQ(batch.unmapped, 1u);
  EXPECT_EQ(batch.undecodable_records, 1u);
  EXPECT_NE(batch.first_decode_error.find("record 3: queued tick: format version 7"), std::string::npos)
      << batch.first_decode_error;
  const prometheus::WriteRequest request = Decode(batch.body);
  ASSERT_EQ(request.timeseries_size(), 1);
  EXPECT_EQ(Points(request.timeseries(0)), (std::vector<std::pair<int64_t, double>>{{1000, 1}, {1100, 2}}));
}

TEST(BatchEncoder, SortsASeriesAndKeepsTheLaterOfTwoSamplesAtOneTimestamp) {
  SeriesMapper mapper({});
  BatchEncoder encoder(mapper);
  // A queue that two runs wrote with a wall clock that went back between them; and a key beside the
  // spelling the catalog also accepts, in one tick.
  const EncodedBatch batch = encoder.Encode(std::vector<QueueRecord>{
      Record(1, 2000, {{"gpu.0.temp", 1}}),
      Record(2, 3000, {{"gpu.0.temp", 2}}),
      Record(3, 1000, {{"gpu.0.temp", 3}}),
      Record(4, 2000,
             {{"gpu.0.temp", 4}, {"ipu.0.average board temp (C)", 5}, {"ipu.0.average board temp", 6}}),
  });
  EXPECT_EQ(batch.duplicates, 2u);
  const prometheus::WriteRequest request = Decode(batch.body);
  ASSERT_EQ(request.timeseries_size(), 2);
  EXPECT_EQ(Points(request.timeseries(0)),
            (std::vector<std::pair<int64_t, double>>{{1000, 3}, {2000, 4}, {3000, 2}}));
  EXPECT_EQ(Points(request.timeseries(1)), (std::vector<std::pair<int64_t, double>>{{2000, 6}}));
}

TEST(BatchEncoder, TheSameRecordsGiveTheSameBytesWhateverTheMapperSawBefore) {
  const std::vector<QueueRecord> records = {
      Record(7, 1000, {{"cpu", 1}, {"gpu.0.temp", 2}, {"disk./.usageGB", 3}}),
      Record(8, 1100, {{"disk./.usageGB", 4}, {"cpu", 5}}),
  };
  SeriesMapper fresh({"h", "r", "j", "1"});
  BatchEncoder first(fresh);
  const std::string body = first.Encode(records).body;

  SeriesMapper used({"h", "r", "j", "1"});
  for (const char* key : {"disk./.usageGB", "gpu.3.temp", "network.recv", "gpu.0.temp"}) used.Map(key);
  BatchEncoder second(used);
  EXPECT_EQ(second.Encode(std::vector<QueueRecord>{Record(1, 5, {{"network.recv", 1}})}).samples, 1u);
  EXPECT_EQ(second.Encode(records).body, body);
  EXPECT_EQ(second.Encode(records).body, body);  // and again, with the encoder's buffers reused
}

TEST(BatchEncoder, TheBytesAreThoseProtobufWrites) {
  // Defaults proto3 leaves out (a value of +0.0, a timestamp of 0) beside -0.0, a negative timestamp and
  // labels with non-ASCII values.
  SeriesMapper mapper({"h\xc3\xa9te", "", "j", ""});
  BatchEncoder encoder(mapper);
  const EncodedBatch batch = encoder.Encode(std::vector<QueueRecord>{
      Record(1, 0, {{"cpu", 0.0}, {"gpu.0.temp", -0.0}, {"disk./d\xc3\xa9.usageGB", 1e300}}),
      Record(2, -1, {{"memory_percent", 5e-324}}),
      Record(3, 1780000000123, {{"cpu", 100}, {"network.sent", 1}}),
  });
  std::string serialized;
  ASSERT_TRUE(snappy::Uncompress(batch.body.data(), batch.body.size(), &serialized));
  prometheus::WriteRequest request;
  ASSERT_TRUE(request.ParseFromString(serialized));
  EXPECT_EQ(request.timeseries_size(), 5);
  EXPECT_EQ(request.SerializeAsString(), serialized);
}

TEST(BatchEncoder, AnEmptyBatchIsAnEmptyRequest) {
  SeriesMapper mapper({});
  BatchEncoder encoder(mapper);
  const EncodedBatch batch = encoder.Encode({});
  EXPECT_EQ(batch.samples, 0u);
  EXPECT_EQ(Decode(batch.body).timeseries_size(), 0);
}

}  // namespace
}  // namespace runmon::remote_write
