// Fuzzes the stats-wire reader (ReadStatsWire and PeekRecordKind, stats_wire.hpp) and StatsValueReader on
// top of it (stats_values.hpp): on the input as a Record's bytes, and on the input wrapped as a Record's
// stats field (field 7), so mutations reach a StatsRecord's fields directly. Checks: every item's key and
// value view lies inside the input; reading twice gives the same kind, time and items; PeekRecordKind agrees
// on the kind (kStats or kMalformed where the stats record inside is malformed); kOther passes no items and
// leaves time 0, and so does a top level that is malformed; the time is finite. Against protobuf's own parse
// of the same bytes (wandb::Record), when that succeeds and the reader does not say kMalformed: the kind is
// kStats exactly when protobuf has the stats field (the last oneof field present; a oneof number with
// another wire type is an unknown field), and then the items and the time are protobuf's (a stats field
// given more than once in a row is merged: every one's items, each timestamp field the last given). When
// protobuf parses the bytes but the reader says kMalformed, a level the reader walks holds a group (which it
// refuses, as documented) or is not protobuf's own encoding (a tag past 32 bits protobuf cuts short).
// StatsValueReader keeps exactly the items with a key and a JSON number, clamped to a float's range, each
// with its key's id, also when its cache of keys by position comes from another record. ParseJsonNumber
// (its own path for short decimals included) takes, refuses and gives exactly what from_chars behind the
// JSON check does, bit for bit.
#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include "fuzz_check.hpp"
#include "runlog/run_state.hpp"
#include "runlog/stats_values.hpp"
#include "runlog/stats_wire.hpp"
#include "runlog/summary_index.hpp"
#include "runlog/wandb_record.pb.h"

namespace {

using namespace runmon::runlog;
namespace wandb = runmon::wandb;

// ParseJsonNumber's result as the plain JSON check over from_chars gives it.
bool SameAsFromChars(std::string_view text, const std::optional<double>& parsed) {
  std::optional<double> expected;
  const bool json_start = !text.empty() &&
                          (text.front() == '-' || (text.front() >= '0' && text.front() <= '9')) &&
                          !(text.size() > 1 && text.front() == '-' && (text[1] < '0' || text[1] > '9'));
  double value = 0;
  if (json_start) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && std::isfinite(value)) expected = value;
  }
  if (expected.has_value() != parsed.has_value()) return false;
  return !expected || std::memcmp(&*expected, &*parsed, sizeof value) == 0;
}
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

using Items = std::vector<std::pair<std::string, std::string>>;

constexpr int kStatsField = 7;

struct WireRead {
  WireRecordKind kind = WireRecordKind::kMalformed;
  double time = -1;
  Items items;
};

bool Inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

WireRead Read(std::string_view bytes) {
  WireRead read;
  read.kind = ReadStatsWire(bytes, read.time, [&](const StatsItemView& item) {
    FUZZ_CHECK(Inside(item.key, bytes));
    FUZZ_CHECK(Inside(item.value_json, bytes));
    read.items.emplace_back(std::string(item.key), std::string(item.value_json));
  });
  return read;
}

// Null when `bytes` are not a valid message at the wire level.
std::unique_ptr<UnknownFieldSet> Fields(std::string_view bytes) {
  auto set = std::make_unique<UnknownFieldSet>();
  if (!set->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return nullptr;
  return set;
}

bool HasGroup(const UnknownFieldSet& set) {
  for (int i = 0; i < set.field_count(); ++i) {
    if (set.field(i).type() == UnknownField::TYPE_GROUP) return true;
  }
  return false;
}

// A level the reader walks, parsed by protobuf; `refusable` set when it holds what the reader may refuse in a
// message protobuf accepts: a group, or an encoding that is not protobuf's own (protobuf accepts a five-byte
// tag whose bits past 32 it drops, the reader refuses it).
std::unique_ptr<UnknownFieldSet> Level(std::string_view bytes, bool& refusable) {
  auto set = Fields(bytes);
  FUZZ_CHECK(set != nullptr);
  std::string canonical;
  FUZZ_CHECK(set->SerializeToString(&canonical));
  refusable = refusable || HasGroup(*set) || canonical != bytes;
  return set;
}

// Whether a level the reader may walk (the record, each of its stats fields, the timestamps and items inside
// them) holds what it may refuse. The bytes parse as a Record, so every one of those levels is a message.
bool RefusableWhereTheReaderWalks(std::string_view bytes) {
  bool refusable = false;
  const auto top = Level(bytes, refusable);
  for (int i = 0; i < top->field_count(); ++i) {
    const UnknownField& stats_field = top->field(i);
    if (stats_field.number() != kStatsField || stats_field.type() != UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    const auto stats = Level(stats_field.length_delimited(), refusable);
    for (int j = 0; j < stats->field_count(); ++j) {
      const UnknownField& field = stats->field(j);
      if ((field.number() == 2 || field.number() == 3) && field.type() == UnknownField::TYPE_LENGTH_DELIMITED)
        Level(field.length_delimited(), refusable);
    }
  }
  return refusable;
}

void CrossCheckWithProtobuf(std::string_view bytes, const WireRead& read) {
  wandb::Record record;
  if (!record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  if (read.kind == WireRecordKind::kMalformed) {
    FUZZ_CHECK(RefusableWhereTheReaderWalks(bytes));
    return;
  }
  FUZZ_CHECK((read.kind == WireRecordKind::kStats) == record.has_stats());
  if (read.kind != WireRecordKind::kStats) return;
  Items items;
  for (const auto& item : record.stats().item()) items.emplace_back(item.key(), item.value_json());
  FUZZ_CHECK(read.items == items);
  const auto& timestamp = record.stats().timestamp();
  FUZZ_CHECK(read.time ==
             static_cast<double>(timestamp.seconds()) + static_cast<double>(timestamp.nanos()) * 1e-9);
}

void CheckValues(StatsValueReader& reader, KeyTable& table, std::string_view bytes, const WireRead& read) {
  double time = -1;
  const WireRecordKind kind = reader.Read(bytes, time, [&](std::string_view name) { return table.Id(name); });
  FUZZ_CHECK(kind == read.kind);
  FUZZ_CHECK(time == read.time || (std::isnan(time) && std::isnan(read.time)));
  std::vector<SegmentAccumulator::Value> expected;
  if (kind != WireRecordKind::kMalformed) {
    for (const auto& [key, value_json] : read.items) {
      if (key.empty()) continue;
      const std::optional<double> value = ParseJsonNumber(value_json);
      FUZZ_CHECK(SameAsFromChars(value_json, value));
      if (!value) continue;
      expected.push_back(
          {table.Id(key), static_cast<float>(std::clamp(*value, -double{FLT_MAX}, double{FLT_MAX}))});
    }
  }
  if (kind == WireRecordKind::kMalformed) {
    // Some items may have been kept before the reader found the damage.
    FUZZ_CHECK(reader.values().size() <= read.items.size());
    return;
  }
  FUZZ_CHECK(reader.values().size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& value = reader.values()[i];
    FUZZ_CHECK(value.key == expected[i].key);
    FUZZ_CHECK(value.key < table.size());
    FUZZ_CHECK(value.value == expected[i].value ||
               (std::isnan(value.value) && std::isnan(expected[i].value)));
  }
}

WireRead Check(std::string_view bytes) {
  const WireRead read = Read(bytes);
  const WireRead again = Read(bytes);
  FUZZ_CHECK(again.kind == read.kind);
  FUZZ_CHECK(again.time == read.time || (std::isnan(again.time) && std::isnan(read.time)));
  FUZZ_CHECK(again.items == read.items);
  FUZZ_CHECK(std::isfinite(read.time));

  const WireRecordKind peeked = PeekRecordKind(bytes);
  if (read.kind == WireRecordKind::kMalformed) {
    // The top level may be fine while the stats record inside is not.
    FUZZ_CHECK(peeked == WireRecordKind::kMalformed || peeked == WireRecordKind::kStats);
  } else {
    FUZZ_CHECK(peeked == read.kind);
  }
  if (read.kind == WireRecordKind::kOther || peeked == WireRecordKind::kMalformed) {
    FUZZ_CHECK(read.items.empty());
    FUZZ_CHECK(read.time == 0);
  }
  CrossCheckWithProtobuf(bytes, read);
  return read;
}

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Protobuf logs every string field that is not UTF-8 it refuses: millions of lines from a fuzz run.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);
  // Exactly sized: a read past the wrapped bytes is a sanitizer error too.
  const std::string wrapped_string =
      std::string(1, static_cast<char>(kStatsField << 3 | 2)) + Varint(size) + std::string(input);
  const std::vector<char> wrapped(wrapped_string.begin(), wrapped_string.end());
  const std::string_view wrapped_view(wrapped.data(), wrapped.size());

  const WireRead as_record = Check(input);
  const WireRead as_stats = Check(wrapped_view);
  FUZZ_CHECK(as_stats.kind != WireRecordKind::kOther);

  // One reader over both: the second read finds the first one's keys cached by position.
  StatsValueReader reader;
  KeyTable table;
  CheckValues(reader, table, input, as_record);
  CheckValues(reader, table, wrapped_view, as_stats);
  CheckValues(reader, table, input, as_record);
  return 0;
}
