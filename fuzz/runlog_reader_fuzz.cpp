// Fuzzes the run-log reader. The first input byte picks the mode:
//   even (a real log starts with ':' = 0x3A): the whole input is a log. RecordReader reads it to the end
//     (bounded: every record takes at least a 7-byte chunk header) and renders each record as JSON. Checks:
//     record offsets strictly increase, each record lies inside the input after the file header, damage
//     ranges are non-empty, inside the input, in order and overlap neither each other nor a returned record,
//     kIncomplete accounts exactly for the bytes after position(), asking again without new data changes
//     nothing, and each decoded record equals a fresh parse of its payload (the reader reuses its stats
//     message). LogReader alone must return at least as many records (it does not decode).
//   odd: a round trip. The rest of the input describes payloads, each as 3 bytes (length: 17 bits, the
//     low 16 in the first two bytes and one in bit 0 of the third; the third byte's upper 7 bits: how many
//     content bytes follow) and the content bytes, repeated to the length (a pattern when there are none).
//     Lengths up to 131071 let a short input reach FIRST/MIDDLE/LAST chunks, trailers and zero-length FIRST
//     chunks. They are framed with AppendFramedRecord after the file header; LogReader must return exactly
//     those payloads at the offsets the framing gave, then kEnd, with no damage. The framed log is then cut
//     at an input-derived point: exactly the records ending before the cut come back, and no damage.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

#include "fuzz_check.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/record_reader.hpp"

namespace {

using namespace runmon::runlog;
namespace wandb = runmon::wandb;
using google::protobuf::util::MessageDifferencer;

constexpr size_t kMaxPayloads = 48;
constexpr size_t kMaxTotalPayload = 400000;

void ReadAsLog(std::string_view input) {
  const uint64_t max_calls = input.size() / kChunkHeaderSize + 2;
  struct Range {
    uint64_t offset, end;
  };
  std::vector<Range> records;
  RecordReader reader(MemorySource(input));
  wandb::Record fresh;
  ReadOutcome outcome = ReadOutcome::kRecord;
  for (uint64_t call = 0; call <= max_calls; ++call) {
    outcome = reader.Next();
    if (outcome != ReadOutcome::kRecord) break;
    FUZZ_CHECK(records.empty() || reader.offset() > records.back().offset);
    FUZZ_CHECK(records.empty() || reader.offset() >= records.back().end);
    FUZZ_CHECK(reader.offset() >= kFileHeaderSize);
    FUZZ_CHECK(reader.end() <= input.size());
    FUZZ_CHECK(reader.offset() + kChunkHeaderSize + reader.length() <= reader.end());
    FUZZ_CHECK(reader.index() == records.size());
    // The reader reuses its stats message between records: the result must equal a fresh parse.
    FUZZ_CHECK(fresh.ParseFromArray(reader.payload().data(), static_cast<int>(reader.payload().size())));
    FUZZ_CHECK(MessageDifferencer::Equals(fresh, reader.record()));
    const std::string json = RecordToJson(reader.record());
    FUZZ_CHECK(!json.empty() && json.front() == '{');
    FUZZ_CHECK(!RecordTypeName(reader.record()).empty());
    records.push_back({reader.offset(), reader.end()});
  }
  FUZZ_CHECK(outcome != ReadOutcome::kRecord);  // the bound was never reached
  if (outcome == ReadOutcome::kFailed) {
    FUZZ_CHECK(!reader.error().empty());
    FUZZ_CHECK(records.empty());  // memory never fails: only the file header can
  } else {
    FUZZ_CHECK(reader.error().empty());
  }
  if (outcome == ReadOutcome::kIncomplete) {
    FUZZ_CHECK(reader.log().position() + reader.log().incomplete_bytes() == input.size());
  }

  uint64_t previous_end = 0;
  for (const auto& damage : reader.damage()) {
    FUZZ_CHECK(damage.length > 0);
    FUZZ_CHECK(!damage.reason.empty());
    FUZZ_CHECK(damage.offset >= previous_end);
    FUZZ_CHECK(damage.offset + damage.length <= input.size());
    previous_end = damage.offset + damage.length;
    for (const auto& record : records) {
      FUZZ_CHECK(record.end <= damage.offset || record.offset >= damage.offset + damage.length);
    }
  }

  const size_t damage_ranges = reader.damage().size();
  FUZZ_CHECK(reader.Next() == outcome);
  FUZZ_CHECK(reader.damage().size() == damage_ranges);

  // The framing alone returns every record the decoder saw, including those that do not decode.
  LogReader framing(MemorySource(input));
  RawRecord raw;
  size_t raw_records = 0;
  for (uint64_t call = 0; call <= max_calls && framing.Next(raw) == ReadOutcome::kRecord; ++call)
    ++raw_records;
  FUZZ_CHECK(raw_records >= records.size());
}

void RoundTrip(std::string_view spec) {
  std::vector<std::string> payloads;
  size_t total = 0;
  size_t at = 0;
  while (at + 3 <= spec.size() && payloads.size() < kMaxPayloads) {
    const auto b0 = static_cast<unsigned char>(spec[at]);
    const auto b1 = static_cast<unsigned char>(spec[at + 1]);
    const auto b2 = static_cast<unsigned char>(spec[at + 2]);
    at += 3;
    const size_t length = b0 | static_cast<size_t>(b1) << 8 | static_cast<size_t>(b2 & 1) << 16;
    const std::string_view content = spec.substr(at, b2 >> 1);
    at += content.size();
    if (total + length > kMaxTotalPayload) break;
    std::string payload(length, '\0');
    for (size_t i = 0; i < length; ++i) {
      payload[i] = content.empty() ? static_cast<char>(i * 131 + payloads.size() * 7 + (i >> 9))
                                   : content[i % content.size()];
    }
    total += length;
    payloads.push_back(std::move(payload));
  }

  std::string log(reinterpret_cast<const char*>(kFileHeader.data()), kFileHeader.size());
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> ends;
  uint64_t end = kFileHeaderSize;
  for (const auto& payload : payloads) {
    const uint64_t room = kBlockSize - end % kBlockSize;
    offsets.push_back(room < kChunkHeaderSize ? end + room : end);
    end = AppendFramedRecord(end, payload, log);
    FUZZ_CHECK(end == log.size());
    ends.push_back(end);
  }

  {
    LogReader reader(MemorySource(log));
    RawRecord raw;
    for (size_t i = 0; i < payloads.size(); ++i) {
      FUZZ_CHECK(reader.Next(raw) == ReadOutcome::kRecord);
      FUZZ_CHECK(raw.offset == offsets[i]);
      FUZZ_CHECK(raw.end == ends[i]);
      FUZZ_CHECK(raw.payload == payloads[i]);
    }
    FUZZ_CHECK(reader.Next(raw) == ReadOutcome::kEnd);
    FUZZ_CHECK(reader.damage().empty());
    // The next read starts at the end (a trailer, when one comes, is read with the chunk after it).
    FUZZ_CHECK(reader.position() == log.size());
  }

  // A torn tail: cut somewhere derived from the input.
  uint64_t hash = 1469598103934665603ULL;
  for (char c : spec) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  const uint64_t cut = hash % (log.size() + 1);
  LogReader reader(MemorySource(std::string_view(log).substr(0, static_cast<size_t>(cut))));
  RawRecord raw;
  size_t count = 0;
  ReadOutcome outcome;
  while ((outcome = reader.Next(raw)) == ReadOutcome::kRecord) {
    FUZZ_CHECK(count < payloads.size());
    FUZZ_CHECK(ends[count] <= cut);
    FUZZ_CHECK(raw.payload == payloads[count]);
    ++count;
  }
  FUZZ_CHECK(count == payloads.size() || ends[count] > cut);
  FUZZ_CHECK(outcome == ReadOutcome::kEnd || outcome == ReadOutcome::kIncomplete);
  FUZZ_CHECK(reader.damage().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);
  if (!input.empty() && (data[0] & 1) != 0) {
    RoundTrip(input.substr(1));
  } else {
    ReadAsLog(input);
  }
  return 0;
}
