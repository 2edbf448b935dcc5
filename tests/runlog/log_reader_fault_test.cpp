// Fault injection on a ~5-block log (runlog_test_support's FaultInjectionLog: many small records, a block
// trailer, a zero-length FIRST chunk followed by a MIDDLE chunk, FIRST/LAST across a block end, a FULL
// chunk ending exactly at a block end). What is checked, for every kind of fault:
//   - the reader never crashes or loops (ReadAll bounds its calls; the sanitizers watch memory);
//   - every record it returns is one of the records written, byte for byte, at its offset, in order;
//   - truncation at every byte offset: exactly the records that end before the cut come back, the reader
//     says kEnd at record boundaries and kIncomplete inside a record, and no damage is reported;
//   - bit flips, zeroed blocks and zeroed ranges: the records before the first damaged chunk and the
//     records starting in a block after the last damaged block come back (resync), and the damage is
//     reported, starting at or before the first changed byte, unless only block trailers changed (they are
//     not checked);
//   - garbage after the last record leaves every record before it intact.
// A flip of a chunk's length field in the last block can make the chunk reach past the end of the data:
// the reader cannot tell that from a torn tail and says kIncomplete; that is the one case where no damage
// is required.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog_test_support.hpp"

namespace runmon::runlog {
namespace {

using testing::LogLayout;
using testing::OutcomeName;

const LogLayout& Log() {
  static const LogLayout log = testing::FaultInjectionLog();
  return log;
}

bool InTrailer(const LogLayout& log, uint64_t offset) {
  return std::any_of(log.trailers.begin(), log.trailers.end(),
                     [&](const auto& t) { return offset >= t.offset && offset < t.offset + t.length; });
}

// The chunk holding `offset` (header or payload); nullopt for the file header and trailers.
std::optional<testing::ChunkLayout> ChunkAt(const LogLayout& log, uint64_t offset) {
  auto it = std::upper_bound(log.chunks.begin(), log.chunks.end(), offset,
                             [](uint64_t value, const auto& chunk) { return value < chunk.offset; });
  if (it == log.chunks.begin()) return std::nullopt;
  --it;
  if (offset >= it->end()) return std::nullopt;
  return *it;
}

// Reads `bytes` (the log with some bytes changed at `changed`, all >= 7) and checks the rules in the file
// comment. Returns false (after reporting) on the first violation.
bool CheckDamagedRead(std::string_view bytes, const std::vector<uint64_t>& changed, const std::string& what) {
  const LogLayout& log = Log();
  std::vector<uint64_t> hits;  // changed bytes that are not in a trailer
  for (uint64_t offset : changed) {
    if (!InTrailer(log, offset)) hits.push_back(offset);
  }
  std::sort(hits.begin(), hits.end());

  LogReader reader(MemorySource(bytes));
  RawRecord raw;
  std::vector<size_t> returned;  // indexes into log.records
  ReadOutcome outcome = ReadOutcome::kRecord;
  size_t next = 0;  // records are returned in order: search from here
  for (uint64_t call = 0; call <= bytes.size() / kChunkHeaderSize + 2; ++call) {
    outcome = reader.Next(raw);
    if (outcome != ReadOutcome::kRecord) break;
    while (next < log.records.size() && log.records[next].offset < raw.offset) ++next;
    if (next == log.records.size() || log.records[next].offset != raw.offset ||
        log.records[next].end != raw.end || log.records[next].payload != raw.payload) {
      ADD_FAILURE() << what << ": returned a record that was never written at offset " << raw.offset
                    << " (end " << raw.end << ", " << raw.payload.size() << " bytes)";
      return false;
    }
    returned.push_back(next++);
  }
  if (outcome == ReadOutcome::kRecord) {
    ADD_FAILURE() << what << ": the reader did not stop";
    return false;
  }
  if (outcome == ReadOutcome::kFailed) {
    ADD_FAILURE() << what << ": failed: " << reader.error();
    return false;
  }

  // Damage ranges: inside the data, in order, not overlapping each other or a returned record.
  uint64_t previous_end = 0;
  for (const auto& d : reader.damage()) {
    if (d.length == 0 || d.offset < previous_end || d.offset + d.length > bytes.size()) {
      ADD_FAILURE() << what << ": bad damage range " << d.offset << "+" << d.length << " (" << d.reason
                    << ")";
      return false;
    }
    previous_end = d.offset + d.length;
    for (size_t r : returned) {
      if (log.records[r].offset < d.offset + d.length && d.offset < log.records[r].end) {
        ADD_FAILURE() << what << ": damage " << d.offset << "+" << d.length << " overlaps returned record at "
                      << log.records[r].offset;
        return false;
      }
    }
  }

  if (hits.empty()) {  // only trailers changed
    if (returned.size() != log.records.size() || outcome != ReadOutcome::kEnd || !reader.damage().empty()) {
      ADD_FAILURE() << what << ": a trailer-only change lost records (" << returned.size() << " of "
                    << log.records.size() << ", " << OutcomeName(outcome) << ", " << reader.damage().size()
                    << " damage ranges)";
      return false;
    }
    return true;
  }

  const uint64_t first = hits.front();
  const uint64_t last = hits.back();
  const auto first_chunk = ChunkAt(log, first);
  if (!first_chunk) {
    ADD_FAILURE() << what << ": test bug, no chunk at " << first;
    return false;
  }
  const uint64_t resync = (last / kBlockSize + 1) * kBlockSize;
  for (size_t r = 0; r < log.records.size(); ++r) {
    const bool before = log.records[r].end <= first_chunk->offset;
    const bool after = log.records[r].offset >= resync;
    if ((before || after) && std::find(returned.begin(), returned.end(), r) == returned.end()) {
      ADD_FAILURE() << what << ": lost record " << r << " at " << log.records[r].offset << " ("
                    << (before ? "before the first damaged chunk" : "after the damaged blocks") << ")";
      return false;
    }
  }

  const bool last_block_hit = last / kBlockSize == (bytes.size() - 1) / kBlockSize;
  if (outcome == ReadOutcome::kIncomplete && last_block_hit) return true;
  if (outcome != ReadOutcome::kEnd) {
    ADD_FAILURE() << what << ": outcome " << OutcomeName(outcome);
    return false;
  }
  const auto& damage = reader.damage();
  if (damage.empty() || damage.front().offset > first ||
      damage.front().offset + damage.front().length <= first) {
    ADD_FAILURE() << what << ": damage at " << first << " not reported"
                  << (damage.empty() ? std::string()
                                     : " (first range " + std::to_string(damage.front().offset) + "+" +
                                           std::to_string(damage.front().length) + ")");
    return false;
  }
  return true;
}

// Splitmix, so the trials do not depend on the standard library's distributions.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

TEST(LogReaderFaultLog, HasEveryFramingEdgeCaseAndReadsBackWhole) {
  const LogLayout& log = Log();
  EXPECT_GE(log.bytes.size(), 4 * kBlockSize);
  EXPECT_GE(log.records.size(), 200u);
  EXPECT_FALSE(log.trailers.empty());
  auto has = [&](auto predicate) { return std::any_of(log.chunks.begin(), log.chunks.end(), predicate); };
  EXPECT_TRUE(has([](const auto& c) { return c.type == ChunkType::kFirst && c.length == 0; }));
  EXPECT_TRUE(has([](const auto& c) { return c.type == ChunkType::kFirst && c.length > 0; }));
  EXPECT_TRUE(has([](const auto& c) { return c.type == ChunkType::kMiddle; }));
  EXPECT_TRUE(has([](const auto& c) { return c.type == ChunkType::kFull && c.end() % kBlockSize == 0; }));
  const auto read = testing::ReadAll(log.bytes);
  EXPECT_EQ(read.outcome, ReadOutcome::kEnd);
  EXPECT_TRUE(read.damage.empty());
  ASSERT_EQ(read.records.size(), log.records.size());
  for (size_t i = 0; i < read.records.size(); ++i) {
    EXPECT_EQ(read.records[i].offset, log.records[i].offset);
    EXPECT_EQ(read.records[i].end, log.records[i].end);
    EXPECT_TRUE(read.records[i].payload == log.records[i].payload) << i;
  }
}

// Truncation at every byte offset (a writer killed at any point, or a reader faster than the writer).
TEST(LogReaderTruncation, EveryCutGivesTheRecordsBeforeItAndNoDamage) {
  const LogLayout& log = Log();
  const std::string_view all = log.bytes;
  int failures = 0;
  size_t complete = 0;  // records with end <= cut
  size_t trailer = 0;   // next trailer that may contain the cut
  // From 1: no data at all is LogReaderHeader.EmptyDataIsIncompleteWithoutUndefinedBehaviour's business.
  for (uint64_t cut = 1; cut <= all.size() && failures < 10; ++cut) {
    while (complete < log.records.size() && log.records[complete].end <= cut) ++complete;
    while (trailer < log.trailers.size() &&
           log.trailers[trailer].offset + log.trailers[trailer].length < cut) {
      ++trailer;
    }
    const bool inside_trailer = trailer < log.trailers.size() && cut > log.trailers[trailer].offset &&
                                cut < log.trailers[trailer].offset + log.trailers[trailer].length;
    const bool after_trailer =
        trailer < log.trailers.size() && cut == log.trailers[trailer].offset + log.trailers[trailer].length;
    const bool clean =
        cut == kFileHeaderSize || (complete > 0 && log.records[complete - 1].end == cut) || after_trailer;

    LogReader reader(MemorySource(all.substr(0, static_cast<size_t>(cut))));
    RawRecord raw;
    size_t count = 0;
    ReadOutcome outcome;
    while ((outcome = reader.Next(raw)) == ReadOutcome::kRecord && count <= complete) {
      const auto& want = log.records[std::min(count, log.records.size() - 1)];
      if (count == complete || raw.offset != want.offset || raw.end != want.end ||
          raw.payload != want.payload) {
        ADD_FAILURE() << "cut " << cut << ": record " << count << " at " << raw.offset
                      << " is not the one written";
        ++failures;
        break;
      }
      ++count;
    }
    if (count != complete) {
      ADD_FAILURE() << "cut " << cut << ": " << count << " records, want " << complete;
      ++failures;
      continue;
    }
    if (!reader.damage().empty() || !reader.error().empty()) {
      ADD_FAILURE() << "cut " << cut << ": damage at " << reader.damage().front().offset << " ("
                    << reader.damage().front().reason << ") " << reader.error();
      ++failures;
      continue;
    }
    if (inside_trailer) {
      // The outcome here is LogReaderTrailer.FileEndingInsideATrailerIsATornTailNotACleanEnd's business.
      if (outcome != ReadOutcome::kEnd && outcome != ReadOutcome::kIncomplete) {
        ADD_FAILURE() << "cut " << cut << " inside a trailer: " << OutcomeName(outcome);
        ++failures;
      }
      continue;
    }
    const ReadOutcome want = clean ? ReadOutcome::kEnd : ReadOutcome::kIncomplete;
    if (outcome != want) {
      ADD_FAILURE() << "cut " << cut << ": " << OutcomeName(outcome) << ", want " << OutcomeName(want);
      ++failures;
      continue;
    }
    if (outcome == ReadOutcome::kIncomplete) {
      const uint64_t resume = cut < kFileHeaderSize ? 0 : log.records[complete].offset;
      if (reader.position() != resume || reader.incomplete_bytes() != cut - resume) {
        ADD_FAILURE() << "cut " << cut << ": position " << reader.position() << " (want " << resume
                      << "), incomplete bytes " << reader.incomplete_bytes();
        ++failures;
        continue;
      }
    } else if (reader.position() != cut) {
      // At a clean end the next read starts at the cut (a trailer there is read with the chunk after it).
      ADD_FAILURE() << "cut " << cut << ": clean end but position " << reader.position();
      ++failures;
      continue;
    }
    if (reader.Next(raw) != outcome) {  // asking again without new data changes nothing
      ADD_FAILURE() << "cut " << cut << ": second call disagrees";
      ++failures;
    }
  }
}

TEST(LogReaderBitFlips, SingleBitFlipsLoseOnlyTheDamagedRecordsAndAreReported) {
  std::string bytes = Log().bytes;
  Random random(1);
  int failures = 0;
  for (int trial = 0; trial < 2500 && failures < 5; ++trial) {
    const uint64_t offset = kFileHeaderSize + random.Below(bytes.size() - kFileHeaderSize);
    const auto bit = static_cast<char>(1 << random.Below(8));
    bytes[offset] = static_cast<char>(bytes[offset] ^ bit);
    if (!CheckDamagedRead(bytes, {offset}, "flip at " + std::to_string(offset))) ++failures;
    bytes[offset] = static_cast<char>(bytes[offset] ^ bit);
  }
}

TEST(LogReaderBitFlips, FlipsInEveryChunkHeaderFieldOfTheEdgeChunksAreReported) {
  // Each header byte of the chunks next to block ends (trailer, zero-length FIRST, MIDDLE, LAST).
  const LogLayout& log = Log();
  std::string bytes = log.bytes;
  int failures = 0;
  for (const auto& chunk : log.chunks) {
    if (chunk.type == ChunkType::kFull && chunk.end() % kBlockSize != 0 && chunk.offset % kBlockSize != 0)
      continue;
    for (uint64_t at = chunk.offset; at < chunk.offset + kChunkHeaderSize && failures < 5; ++at) {
      for (int bit = 0; bit < 8; ++bit) {
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
        if (!CheckDamagedRead(bytes, {at},
                              "flip of bit " + std::to_string(bit) + " at " + std::to_string(at))) {
          ++failures;
        }
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      }
    }
  }
}

TEST(LogReaderBitFlips, MultiBitFlipsNearTogetherOrFarApartLoseOnlyTheDamagedRecords) {
  std::string bytes = Log().bytes;
  Random random(2);
  int failures = 0;
  for (int trial = 0; trial < 1000 && failures < 5; ++trial) {
    const auto flips = 2 + random.Below(6);
    const bool clustered = trial % 2 == 0;
    const uint64_t base = kFileHeaderSize + random.Below(bytes.size() - kFileHeaderSize);
    std::vector<std::pair<uint64_t, char>> applied;
    std::vector<uint64_t> changed;
    std::string what = "flips at";
    for (uint64_t i = 0; i < flips; ++i) {
      const uint64_t offset = clustered ? std::min<uint64_t>(bytes.size() - 1, base + random.Below(64))
                                        : kFileHeaderSize + random.Below(bytes.size() - kFileHeaderSize);
      const auto bit = static_cast<char>(1 << random.Below(8));
      bytes[offset] = static_cast<char>(bytes[offset] ^ bit);
      applied.push_back({offset, bit});
      what += " " + std::to_string(offset);
    }
    for (const auto& [offset, bit] : applied) {
      if (bytes[offset] != Log().bytes[offset]) changed.push_back(offset);  // two flips may cancel
    }
    if (!CheckDamagedRead(bytes, changed, what)) ++failures;
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
      bytes[it->first] = static_cast<char>(bytes[it->first] ^ it->second);
    }
  }
  EXPECT_TRUE(bytes == Log().bytes);
}

std::vector<uint64_t> ZeroRange(std::string& bytes, uint64_t begin, uint64_t end) {
  std::vector<uint64_t> changed;
  for (uint64_t i = begin; i < end; ++i) {
    if (bytes[i] != '\0') changed.push_back(i);
    bytes[i] = '\0';
  }
  return changed;
}

TEST(LogReaderZeroed, ZeroedWholeBlocksLoseOnlyTheirOwnRecordsAndAreReportedInsideTheBlock) {
  const LogLayout& log = Log();
  for (uint64_t block = 0; block * kBlockSize < log.bytes.size(); ++block) {
    std::string bytes = log.bytes;
    const uint64_t begin = std::max(block * kBlockSize, kFileHeaderSize);
    const uint64_t end = std::min<uint64_t>((block + 1) * kBlockSize, bytes.size());
    const auto changed = ZeroRange(bytes, begin, end);
    EXPECT_TRUE(CheckDamagedRead(bytes, changed, "block " + std::to_string(block) + " zeroed"));
    const auto read = testing::ReadAll(bytes);
    ASSERT_FALSE(read.damage.empty()) << block;
    // The first range covers the first zeroed byte (it may start earlier, at the start of a record that
    // continues into the block).
    EXPECT_LE(read.damage.front().offset, begin) << block;
    EXPECT_GT(read.damage.front().offset + read.damage.front().length, begin) << block;
  }
}

TEST(LogReaderZeroed, ZeroedRangesLoseOnlyTheDamagedRecords) {
  const LogLayout& log = Log();
  Random random(3);
  std::string bytes = log.bytes;
  int failures = 0;
  for (int trial = 0; trial < 400 && failures < 5; ++trial) {
    const uint64_t begin = kFileHeaderSize + random.Below(bytes.size() - kFileHeaderSize);
    const uint64_t length = 1 + random.Below(trial % 4 == 0 ? 40000 : 300);
    const uint64_t end = std::min<uint64_t>(bytes.size(), begin + length);
    const auto changed = ZeroRange(bytes, begin, end);
    if (!CheckDamagedRead(bytes, changed, "zeroed " + std::to_string(begin) + ".." + std::to_string(end)))
      ++failures;
    std::copy(log.bytes.begin() + static_cast<std::ptrdiff_t>(begin),
              log.bytes.begin() + static_cast<std::ptrdiff_t>(end),
              bytes.begin() + static_cast<std::ptrdiff_t>(begin));
  }
}

TEST(LogReaderGarbage, GarbageAfterTheLastRecordLeavesEveryRecordIntact) {
  const LogLayout& log = Log();
  Random random(4);
  std::vector<std::string> tails = {std::string(1, '\0'),
                                    std::string(7, '\0'),
                                    std::string(300, '\0'),
                                    std::string(5000, '\xFF'),
                                    "\x01",
                                    std::string("\x00\x00\x00\x00\x05\x00\x01", 7)};
  for (int i = 0; i < 200; ++i) {
    std::string tail(static_cast<size_t>(1 + random.Below(i % 10 == 0 ? 40000 : 500)), '\0');
    for (auto& c : tail) c = static_cast<char>(random.Next());
    tails.push_back(std::move(tail));
  }
  for (const auto& tail : tails) {
    const std::string bytes = log.bytes + tail;
    const auto read = testing::ReadAll(bytes);
    EXPECT_NE(read.outcome, ReadOutcome::kFailed);
    EXPECT_NE(read.outcome, ReadOutcome::kRecord) << "the reader did not stop";
    ASSERT_GE(read.records.size(), log.records.size()) << tail.size() << " bytes of garbage";
    for (size_t r = 0; r < log.records.size(); ++r) {
      ASSERT_EQ(read.records[r].offset, log.records[r].offset);
      ASSERT_TRUE(read.records[r].payload == log.records[r].payload) << r;
    }
    for (const auto& d : read.damage) {
      EXPECT_GE(d.offset, log.bytes.size());
      EXPECT_LE(d.offset + d.length, bytes.size());
    }
  }
}

}  // namespace
}  // namespace runmon::runlog
