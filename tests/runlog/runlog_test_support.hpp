// Shared helpers of the run-log tests: a reference model of W&B's framing (spec 2.4, written again here
// with a bitwise CRC so that the library's framing is checked against something it does not share), the
// records of W&B's two reference fixtures rebuilt with the protobuf API, a multi-block log laid out to hit
// every framing edge case for the fault-injection tests, and small file helpers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/wandb_record.pb.h"
#include "support/temp_dir.hpp"

namespace runmon::runlog::testing {

// Plain bitwise CRC-32 (IEEE, reflected 0xEDB88320), independent of zlib.
uint32_t ReferenceCrc32(std::string_view bytes);

struct ChunkLayout {
  uint64_t offset = 0;  // chunk header
  uint64_t length = 0;  // payload bytes
  ChunkType type = ChunkType::kFull;
  size_t record = 0;  // index of the record it belongs to
  uint64_t end() const { return offset + kChunkHeaderSize + length; }
};

struct RecordLayout {
  uint64_t offset = 0;  // first chunk header
  uint64_t end = 0;     // after the last chunk
  std::string payload;
};

struct TrailerLayout {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// A whole log (file header + records) and where every record, chunk and block trailer lies.
struct LogLayout {
  std::string bytes;
  std::vector<RecordLayout> records;
  std::vector<ChunkLayout> chunks;
  std::vector<TrailerLayout> trailers;
};

// Frames `payloads` after the file header with the reference model of spec 2.4.
LogLayout ReferenceLog(const std::vector<std::string>& payloads);

// A ~4-block log for fault injection: many small records, a 3-byte block trailer at the end of block 0, a
// zero-length FIRST chunk at the end of block 1 whose record continues as a MIDDLE (all of block 2) and a
// LAST chunk, a FIRST/LAST record crossing from block 3 to 4 and a FULL chunk ending exactly at the end
// of block 4 (so block 5 starts without a trailer). Payload bytes are never zero, so zeroing a payload
// byte always changes it.
LogLayout FaultInjectionLog();

// The records of /work/shared/fixtures/wandb-log/sample-stats.wandb and sample-multiblock.wandb, rebuilt
// field by field from their README and expected.jsonl.
std::vector<wandb::Record> SampleStatsRecords();
std::vector<wandb::Record> SampleMultiblockRecords();
std::vector<std::string> SerializeAll(const std::vector<wandb::Record>& records);

// Everything a LogReader returns from `source` until it stops (bounded).
struct ReadResult {
  std::vector<RecordLayout> records;
  ReadOutcome outcome = ReadOutcome::kFailed;
  std::vector<LogDamage> damage;
  std::string error;
  uint64_t position = 0;
  uint64_t incomplete_bytes = 0;
};
ReadResult ReadAll(std::string_view bytes);

const char* OutcomeName(ReadOutcome outcome);

// W&B's sample-stats expected JSONL has a decoded "value" next to each "value_json"; it is not a Record
// field. Removes every "value" key from objects that also have a "value_json".
void StripDecodedValues(nlohmann::json& json);

// Files.
using runmon::test::TempDir;

std::string ReadFileBytes(const std::filesystem::path& path);
void WriteFileBytes(const std::filesystem::path& path, std::string_view bytes);

}  // namespace runmon::runlog::testing

namespace runmon::runlog {
// GoogleTest prints outcomes by name (found by argument-dependent lookup).
inline void PrintTo(ReadOutcome outcome, std::ostream* os) {
  *os << testing::OutcomeName(outcome);
}
}  // namespace runmon::runlog
