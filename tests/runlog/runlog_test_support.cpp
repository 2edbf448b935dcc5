// Helpers of the run-log tests (see runlog_test_support.hpp). The reference framing below follows the
// spec's wording (2.4) step by step rather than the library's code.
#include "runlog_test_support.hpp"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace runmon::runlog::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStreamId = "smpl0001";
constexpr int64_t kStartSeconds = 1735689600;  // 2025-01-01T00:00:00Z

void AppendReferenceChunk(LogLayout& log, ChunkType type, std::string_view payload, size_t record) {
  std::string crc_input(1, static_cast<char>(type));
  crc_input.append(payload);
  const uint32_t crc = ReferenceCrc32(crc_input);
  log.chunks.push_back({log.bytes.size(), payload.size(), type, record});
  for (int shift = 0; shift < 32; shift += 8) log.bytes.push_back(static_cast<char>((crc >> shift) & 0xFF));
  log.bytes.push_back(static_cast<char>(payload.size() & 0xFF));
  log.bytes.push_back(static_cast<char>(payload.size() >> 8));
  log.bytes.push_back(static_cast<char>(type));
  log.bytes.append(payload);
}

wandb::Record Numbered(wandb::Record record, int64_t num) {
  record.set_num(num);
  record.mutable__info()->set_stream_id(kStreamId);
  return record;
}

wandb::Record HeaderRecord() {
  wandb::Record record;
  record.mutable_header()->mutable_version_info()->set_producer("wandb-verify-fixture");
  return Numbered(record, 1);
}

wandb::Record RunRecord() {
  wandb::Record record;
  auto* run = record.mutable_run();
  run->set_run_id(kStreamId);
  run->set_project("wandb-verify");
  auto* item = run->mutable_config()->add_update();
  item->set_key("source");
  item->set_value_json("\"wandb-verify write_sample.py\"");
  run->set_display_name("sample-stats");
  run->set_host("fixture-host");
  run->mutable_start_time()->set_seconds(kStartSeconds);
  return Numbered(record, 2);
}

// A stats record `seconds_after_start` + 0.25 s after the run start with the six process/system keys the
// fixtures use (value_json exactly as written there) and an optional padding item.
wandb::Record StatsRecord(int64_t num, int64_t seconds_after_start, const std::vector<std::string>& values,
                          size_t padding_json_size = 0) {
  static const char* const kKeys[] = {"cpu",
                                      "memory_percent",
                                      "proc.memory.rssMB",
                                      "proc.memory.percent",
                                      "proc.memory.availableMB",
                                      "proc.cpu.threads"};
  wandb::Record record;
  auto* stats = record.mutable_stats();
  stats->mutable_timestamp()->set_seconds(kStartSeconds + seconds_after_start);
  stats->mutable_timestamp()->set_nanos(250000000);
  for (size_t i = 0; i < values.size(); ++i) {
    auto* item = stats->add_item();
    item->set_key(kKeys[i]);
    item->set_value_json(values[i]);
  }
  if (padding_json_size > 0) {
    auto* item = stats->add_item();
    item->set_key("x_fixture_padding");
    item->set_value_json("\"" + std::string(padding_json_size - 2, 'p') + "\"");
  }
  return Numbered(record, num);
}

wandb::Record ExitRecord(int64_t num, int32_t runtime) {
  wandb::Record record;
  record.mutable_exit()->set_runtime(runtime);
  return Numbered(record, num);
}

wandb::Record EnvironmentRecord() {
  wandb::Record record;
  auto* env = record.mutable_environment();
  env->set_os("Linux-6.1.0-x86_64-with-glibc2.36");
  env->mutable_started_at()->set_seconds(kStartSeconds);
  env->set_program("fixture");
  env->set_host("fixture-host");
  env->set_cpu_count(8);
  env->set_cpu_count_logical(16);
  env->set_gpu_type("NVIDIA H200");
  env->set_gpu_count(1);
  auto& disk = (*env->mutable_disk())["/"];
  disk.set_total(68719476736ULL);
  disk.set_used(1073741824ULL);
  env->mutable_memory()->set_total(137438953472ULL);
  auto* gpu = env->add_gpu_nvidia();
  gpu->set_name("NVIDIA H200");
  gpu->set_memory_total(150754820096ULL);
  gpu->set_architecture("Hopper");
  env->set_cuda_version("12.4");
  env->set_writer_id("fixture-writer");
  return Numbered(record, 3);
}

// Deterministic sizes and bytes that do not depend on the standard library's distributions.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t Between(uint64_t low, uint64_t high) { return low + Next() % (high - low + 1); }

 private:
  uint64_t state_;
};

std::string FaultPayload(size_t index, uint64_t size) {
  std::string payload(static_cast<size_t>(size), '\0');
  for (size_t j = 0; j < payload.size(); ++j) {
    payload[j] = static_cast<char>(1 + (index * 131 + j * 7 + (j >> 8)) % 255);  // never 0
  }
  if (payload.size() >= 2) {  // the index up front: two records never look alike
    payload[0] = static_cast<char>(1 + index % 255);
    payload[1] = static_cast<char>(1 + (index / 255) % 255);
  }
  return payload;
}

}  // namespace

uint32_t ReferenceCrc32(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

LogLayout ReferenceLog(const std::vector<std::string>& payloads) {
  LogLayout log;
  log.bytes.assign(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  for (size_t i = 0; i < payloads.size(); ++i) {
    std::string_view rest = payloads[i];
    // 1./2.: fewer than 7 bytes left in the block: a zero trailer, then the next block.
    uint64_t room = kBlockSize - log.bytes.size() % kBlockSize;
    if (room < kChunkHeaderSize) {
      log.trailers.push_back({log.bytes.size(), room});
      log.bytes.append(static_cast<size_t>(room), '\0');
      room = kBlockSize;
    }
    RecordLayout record{log.bytes.size(), 0, payloads[i]};
    if (rest.size() + kChunkHeaderSize <= room) {  // 3.
      AppendReferenceChunk(log, ChunkType::kFull, rest, i);
    } else {  // 4.
      const auto first = static_cast<size_t>(room - kChunkHeaderSize);
      AppendReferenceChunk(log, ChunkType::kFirst, rest.substr(0, first), i);
      rest.remove_prefix(first);
      while (rest.size() > kMaxChunkPayload) {
        AppendReferenceChunk(log, ChunkType::kMiddle, rest.substr(0, kMaxChunkPayload), i);
        rest.remove_prefix(kMaxChunkPayload);
      }
      AppendReferenceChunk(log, ChunkType::kLast, rest, i);
    }
    record.end = log.bytes.size();
    log.records.push_back(std::move(record));
  }
  return log;
}

LogLayout FaultInjectionLog() {
  SplitMix random(20250101);
  std::vector<std::string> payloads;
  uint64_t position = kFileHeaderSize;
  auto add = [&](uint64_t size) {
    payloads.push_back(FaultPayload(payloads.size(), size));
    std::string ignored;
    position = AppendFramedRecord(position, payloads.back(), ignored);
  };
  // Room for the next record's chunks: after a record leaving fewer than 7 bytes, the next block.
  auto room = [&] {
    const uint64_t left = kBlockSize - position % kBlockSize;
    return left < kChunkHeaderSize ? kBlockSize : left;
  };
  auto add_small_until_room_below = [&](uint64_t limit) {
    while (room() > limit) add(random.Between(40, 900));
  };
  // Block 0: small records, then one leaving exactly 3 bytes: a 3-byte trailer.
  add_small_until_room_below(2000);
  add(room() - kChunkHeaderSize - 3);
  // Block 1: small records, then one leaving exactly 7 bytes: the next record starts with a zero-length
  // FIRST chunk at the end of block 1, fills block 2 with a MIDDLE chunk and ends with a LAST chunk.
  add_small_until_room_below(2000);
  add(room() - kChunkHeaderSize - kChunkHeaderSize);
  add(kMaxChunkPayload + 300);
  // Block 3: small records, then a record crossing into block 4 (FIRST + LAST).
  add_small_until_room_below(3000);
  add(room() - kChunkHeaderSize + 1500);
  // Block 4: small records, then one FULL chunk ending exactly at the block end, then two small records
  // in block 5 without a trailer before them.
  add_small_until_room_below(2000);
  add(room() - kChunkHeaderSize);
  add(120);
  add(60);
  LogLayout log = ReferenceLog(payloads);
  if (log.bytes.size() != position)
    throw std::logic_error("reference framing and AppendFramedRecord disagree");
  return log;
}

std::vector<wandb::Record> SampleStatsRecords() {
  return {HeaderRecord(),
          RunRecord(),
          StatsRecord(3, 10, {"12.5", "41.25", "512.0", "3.125", "12000.5", "4"}),
          StatsRecord(4, 20, {"87.0", "42.5", "640.75", "3.9108", "12000.5", "4"}),
          StatsRecord(5, 30, {"55.5", "43.0", "700.0", "4.2725", "12000.5", "4"}),
          ExitRecord(6, 30)};
}

std::vector<wandb::Record> SampleMultiblockRecords() {
  const std::vector<std::string> padded = {"1.0", "1.0", "1.0", "0.0061", "12000.5", "4"};
  return {HeaderRecord(),
          RunRecord(),
          EnvironmentRecord(),
          StatsRecord(4, 10, padded, 32153),
          StatsRecord(5, 20, padded, 32537),
          StatsRecord(6, 30, {"20.0", "44.0", "720.0", "4.3945", "12000.5", "4"}),
          StatsRecord(7, 40, padded, 69783),
          StatsRecord(8, 50, {"25.0", "45.0", "730.0", "4.4556", "12000.5", "4"}),
          ExitRecord(9, 50)};
}

std::vector<std::string> SerializeAll(const std::vector<wandb::Record>& records) {
  std::vector<std::string> payloads;
  for (const auto& record : records) payloads.push_back(record.SerializeAsString());
  return payloads;
}

ReadResult ReadAll(std::string_view bytes) {
  ReadResult result;
  LogReader reader(MemorySource(bytes));
  RawRecord raw;
  // Every record takes at least a 7-byte chunk header, so this bound is never what stops a healthy reader.
  const uint64_t max_calls = bytes.size() / kChunkHeaderSize + 2;
  for (uint64_t call = 0; call < max_calls; ++call) {
    result.outcome = reader.Next(raw);
    if (result.outcome != ReadOutcome::kRecord) break;
    result.records.push_back({raw.offset, raw.end, std::string(raw.payload)});
  }
  result.damage = reader.damage();
  result.error = reader.error();
  result.position = reader.position();
  result.incomplete_bytes = reader.incomplete_bytes();
  return result;
}

void StripDecodedValues(nlohmann::json& json) {
  if (json.is_object()) {
    if (json.contains("value_json")) json.erase("value");
    for (auto& item : json.items()) StripDecodedValues(item.value());
  } else if (json.is_array()) {
    for (auto& child : json) StripDecodedValues(child);
  }
}

const char* OutcomeName(ReadOutcome outcome) {
  switch (outcome) {
    case ReadOutcome::kRecord:
      return "kRecord";
    case ReadOutcome::kEnd:
      return "kEnd";
    case ReadOutcome::kIncomplete:
      return "kIncomplete";
    case ReadOutcome::kFailed:
      return "kFailed";
  }
  return "?";
}

std::string ReadFileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteFileBytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace runmon::runlog::testing
