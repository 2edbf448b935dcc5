// Writes the committed run-log fixtures and the fuzz seed corpus (run by hand, not a test):
//   make_runlog_fixtures <repo>/tests/fixtures/runlog <repo>/fuzz/corpus/runlog_reader
// The fixtures are W&B's two reference files rebuilt with LogWriter from Records built with the protobuf API
// (log_writer_test checks them byte for byte against W&B's originals). The corpus holds small valid logs
// whose payloads are real Records (sized with a padding item so they land on block-edge cases: a trailer,
// a zero-length FIRST chunk, FIRST/LAST across a block end), damaged copies, and inputs for the fuzzer's
// round-trip mode (first byte odd; see fuzz/runlog_reader_fuzz.cpp for their layout).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runlog/log_format.hpp"
#include "runlog/log_writer.hpp"
#include "runlog_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace runmon::runlog;
namespace wandb = runmon::wandb;

// A stats record whose serialized size is exactly `size` (>= 60), padded with an item like W&B's fixtures.
std::string SizedStatsPayload(int64_t num, size_t size) {
  for (size_t pad = size; pad > 0; --pad) {
    wandb::Record record;
    record.set_num(num);
    auto* stats = record.mutable_stats();
    stats->mutable_timestamp()->set_seconds(1735689600 + num);
    auto* cpu = stats->add_item();
    cpu->set_key("cpu");
    cpu->set_value_json("12.5");
    auto* padding = stats->add_item();
    padding->set_key("x_fixture_padding");
    padding->set_value_json("\"" + std::string(pad, 'p') + "\"");
    std::string payload = record.SerializeAsString();
    if (payload.size() == size) return payload;
  }
  std::fprintf(stderr, "no padding gives a %zu-byte record\n", size);
  std::exit(1);
}

std::string SmallStatsPayload(int64_t num) {
  wandb::Record record;
  record.set_num(num);
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(1735689600 + num);
  stats->mutable_timestamp()->set_nanos(250000000);
  for (const char* key : {"cpu", "memory_percent", "proc.cpu.threads"}) {
    auto* item = stats->add_item();
    item->set_key(key);
    item->set_value_json(std::to_string(num * 3 % 100));
  }
  record.mutable__info()->set_stream_id("fuzz0001");
  return record.SerializeAsString();
}

std::string Frame(const std::vector<std::string>& payloads) {
  std::string log(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  uint64_t end = kFileHeaderSize;
  for (const auto& payload : payloads) end = AppendFramedRecord(end, payload, log);
  return log;
}

// Small records, then one sized so that exactly `leave` bytes remain in block 0, then `after`.
std::vector<std::string> FillBlockZero(size_t leave, const std::vector<std::string>& after) {
  std::vector<std::string> payloads = {SmallStatsPayload(1), SmallStatsPayload(2), SmallStatsPayload(3)};
  uint64_t end = kFileHeaderSize;
  std::string ignored;
  for (const auto& payload : payloads) end = AppendFramedRecord(end, payload, ignored);
  payloads.push_back(SizedStatsPayload(4, static_cast<size_t>(kBlockSize - end - kChunkHeaderSize - leave)));
  payloads.insert(payloads.end(), after.begin(), after.end());
  return payloads;
}

void Put(const fs::path& path, const std::string& bytes) {
  runmon::runlog::testing::WriteFileBytes(path, bytes);
  std::printf("%8zu %s\n", bytes.size(), path.string().c_str());
}

void WriteFixture(const fs::path& path, const std::vector<wandb::Record>& records) {
  fs::remove(path);
  auto writer = LogWriter::Create(path);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.error().c_str());
    std::exit(1);
  }
  for (const auto& record : records) {
    if (auto status = writer->Append(record.SerializeAsString()); !status.ok()) {
      std::fprintf(stderr, "%s\n", status.error().c_str());
      std::exit(1);
    }
  }
  std::printf("%8llu %s\n", static_cast<unsigned long long>(writer->size()), path.string().c_str());
}

// A round-trip spec entry: payload length (17 bits) and how many content bytes follow (7 bits).
void Spec(std::string& out, uint32_t length, const std::string& content) {
  out.push_back(static_cast<char>(length & 0xFF));
  out.push_back(static_cast<char>((length >> 8) & 0xFF));
  out.push_back(static_cast<char>(((length >> 16) & 1) | (content.size() << 1)));
  out += content;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <fixtures dir> <corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path fixtures = argv[1];
  const fs::path corpus = argv[2];
  fs::create_directories(fixtures);
  fs::create_directories(corpus);

  WriteFixture(fixtures / "sample-stats.wandb", testing::SampleStatsRecords());
  WriteFixture(fixtures / "sample-multiblock.wandb", testing::SampleMultiblockRecords());

  const std::string sample = Frame(testing::SerializeAll(testing::SampleStatsRecords()));
  Put(corpus / "valid_empty_log", Frame({}));
  Put(corpus / "valid_sample_stats", sample);
  Put(corpus / "valid_trailer_then_block_1",
      Frame(FillBlockZero(3, {SmallStatsPayload(5), SmallStatsPayload(6)})));
  Put(corpus / "valid_zero_length_first",
      Frame(FillBlockZero(7, {SmallStatsPayload(5), SmallStatsPayload(6)})));
  Put(corpus / "valid_first_last_across_blocks",
      Frame(FillBlockZero(600, {SizedStatsPayload(5, 2000), SmallStatsPayload(6)})));
  Put(corpus / "valid_full_chunk_ends_at_block_end", Frame(FillBlockZero(0, {SmallStatsPayload(5)})));

  std::string damaged = sample;
  damaged[300] = static_cast<char>(damaged[300] ^ 0x10);  // a payload byte of the second stats record
  Put(corpus / "damaged_checksum", damaged);
  Put(corpus / "damaged_truncated_mid_record", sample.substr(0, 450));
  damaged = sample;
  damaged.replace(386, 7, 7, '\0');  // the chunk header of the second stats record
  Put(corpus / "damaged_zeroed_chunk_header", damaged);
  damaged = Frame(testing::SerializeAll(testing::SampleStatsRecords()));
  damaged[386 + 6] = 4;  // FULL -> LAST, and a CRC that fits LAST: a LAST chunk without its FIRST
  {
    const uint32_t crc = ChunkChecksum(ChunkType::kLast, std::string_view(damaged).substr(386 + 7, 193));
    for (int i = 0; i < 4; ++i)
      damaged[static_cast<size_t>(386 + i)] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  }
  Put(corpus / "damaged_last_without_first", damaged);
  Put(corpus / "damaged_undecodable_payload",
      Frame({SmallStatsPayload(1), "\x12\x7f\x01\x02", SmallStatsPayload(3)}));
  damaged = sample;
  damaged[6] = 1;
  Put(corpus / "damaged_version_1", damaged);
  Put(corpus / "damaged_garbage_after_end",
      sample + "\x01\x02garbage after the last record\xff\xff\xff\xff\xff\xff");

  std::string spec = "\x01";
  Spec(spec, 5, "hello");
  Spec(spec, 0, "");
  Spec(spec, 300, "ab");
  Put(corpus / "roundtrip_small", spec);
  spec = "\x03";
  Spec(spec, 32751, "x");   // 7 + 7 + 32751 = 32765: 3 bytes left, a trailer
  Spec(spec, 32754, "");    // 32768 + 7 + 32754 = 65529: 7 bytes left, a zero-length FIRST chunk
  Spec(spec, 70000, "yz");  // FIRST (empty), MIDDLE, MIDDLE, LAST
  Spec(spec, 1, "!");
  Put(corpus / "roundtrip_block_edges", spec);
  return 0;
}
