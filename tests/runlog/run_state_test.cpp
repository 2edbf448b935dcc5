// The one verdict on a file and its run (runlog/run_state.hpp): JudgeRun over every combination that
// matters, RunProgress over records, and evidence gathered from real files: logs a writer holds and has
// let go, and files that are not run logs (bad magic, a 2 GB sparse file of zeros, a cut-off header, an
// empty file), the zeros refused after reading its first bytes only.
#include "runlog/run_state.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runlog/record_reader.hpp"
#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;
using test::RunLogBuilder;
using test::TempDir;
constexpr double kStart = test::kTestRunStart;

RunProgress ProgressOf(const RunLogBuilder& builder) {
  RunProgress progress;
  for (const auto& record : builder.records()) progress.Note(record);
  return progress;
}

LogEvidence ReadHeader(bool lock_held = false) {
  LogEvidence evidence;
  evidence.header_read = true;
  evidence.file_bytes = 1000;
  evidence.writer_lock_held = lock_held;
  return evidence;
}

// ParseJsonNumber's own path for short decimals must give from_chars's double, bit for bit, and take and
// refuse exactly what the JSON check over from_chars takes and refuses.
std::optional<double> ThroughFromChars(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() != '-' && (text.front() < '0' || text.front() > '9')) return std::nullopt;
  if (text.size() > 1 && text.front() == '-' && (text[1] < '0' || text[1] > '9')) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

void ExpectSameAsFromChars(const std::string& text) {
  const auto expected = ThroughFromChars(text);
  const auto parsed = ParseJsonNumber(text);
  ASSERT_EQ(parsed.has_value(), expected.has_value()) << "'" << text << "'";
  if (!expected) return;
  uint64_t a = 0;
  uint64_t b = 0;
  std::memcpy(&a, &*parsed, sizeof a);
  std::memcpy(&b, &*expected, sizeof b);
  EXPECT_EQ(a, b) << "'" << text << "'";
}

TEST(ParseJsonNumber, ShortDecimalsGiveFromCharsDoubleBitForBit) {
  const char* const kEdgeCases[] = {"0",
                                    "-0",
                                    "0.",
                                    "-0.",
                                    "5.",
                                    "00",
                                    "01.50",
                                    "1",
                                    "-1",
                                    "45.3",
                                    "0.1",
                                    "0.3",
                                    "-0.25",
                                    "123456789012345",
                                    "1234567890123456",
                                    "0.000000000000001",
                                    "0.0000000000000001",
                                    "999999999999999",
                                    "9007199254740993",
                                    "1.5e3",
                                    "1e400",
                                    "-",
                                    "--1",
                                    "-.5",
                                    ".5",
                                    "1..2",
                                    "1.2.3",
                                    "+1",
                                    "1 ",
                                    " 1",
                                    "0x10",
                                    "inf",
                                    "nan",
                                    "1e",
                                    "18446744073709551616",
                                    "4.35",
                                    "2.675",
                                    "0.1000000000000000055511151231257827"};
  for (const char* text : kEdgeCases) ExpectSameAsFromChars(text);
  std::mt19937_64 rng(20261206);
  const std::string alphabet = "0123456789012345678901234567890123456789.-e+";
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    const size_t length = 1 + rng() % 19;
    for (size_t j = 0; j < length; ++j) text += alphabet[rng() % alphabet.size()];
    ExpectSameAsFromChars(text);
    // Decimals as a writer prints them: fixed digits of a random double.
    const double value = std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 64));
    ExpectSameAsFromChars(fmt::format("{}{:.{}f}", rng() % 3 == 0 ? "-" : "", value, rng() % 14));
    ExpectSameAsFromChars(fmt::format("{}", value));
  }
}

TEST(JudgeRun, ExitRecordLockAndQuietTime) {
  const auto finished = ProgressOf(RunLogBuilder().Header().Run("r", "n", kStart).Exit(0, 5));
  const auto failed = ProgressOf(RunLogBuilder().Header().Run("r", "n", kStart).Exit(3, 5));
  const auto runmon_open = ProgressOf(RunLogBuilder().Header().Run("r", "n", kStart).Stats(kStart + 5, {}));
  const auto wandb_open =
      ProgressOf(RunLogBuilder().Header("0.21.0").Run("r", "n", kStart).Stats(kStart + 5, {}));
  EXPECT_EQ(JudgeRun(ReadHeader(), finished, kStart + 10).state, RunState::kFinished);
  const auto failed_verdict = JudgeRun(ReadHeader(true), failed, kStart + 10);
  EXPECT_EQ(failed_verdict.state, RunState::kFailed);
  EXPECT_EQ(failed_verdict.exit_code, 3);
  EXPECT_EQ(JudgeRun(ReadHeader(true), runmon_open, kStart + 1e6).state, RunState::kRunning);
  EXPECT_EQ(JudgeRun(ReadHeader(false), runmon_open, kStart + 10).state, RunState::kCrashed);  // writer gone
  EXPECT_EQ(JudgeRun(ReadHeader(false), wandb_open, kStart + 60).state, RunState::kRunning);
  EXPECT_EQ(JudgeRun(ReadHeader(false), wandb_open, kStart + 5 + 601).state, RunState::kCrashed);
}

TEST(JudgeRun, WhatIsNotARunLog) {
  const RunProgress nothing;
  LogEvidence refused;
  refused.refusal = "not a W&B run log (...)";
  refused.writer_lock_held = true;  // a lock does not make a file a run log
  const auto verdict = JudgeRun(refused, nothing, kStart);
  EXPECT_EQ(verdict.state, RunState::kNotARunLog);
  EXPECT_EQ(verdict.reason, refused.refusal);
  // Shorter than the header: a log being created while its writer holds the lock, else not a run log.
  LogEvidence short_file;
  short_file.file_bytes = 3;
  EXPECT_EQ(JudgeRun(short_file, nothing, kStart).state, RunState::kNotARunLog);
  EXPECT_NE(JudgeRun(short_file, nothing, kStart).reason.find("3 bytes: too short"), std::string::npos);
  short_file.writer_lock_held = true;
  EXPECT_EQ(JudgeRun(short_file, nothing, kStart).state, RunState::kRunning);
  EXPECT_EQ(RunStateName(RunState::kNotARunLog), "not a run log");
}

TEST(RunProgress, WriterExitAndNewestTime) {
  RunLogBuilder builder;
  builder.Header().Run("r", "n", kStart).Stats(kStart + 7, {}).History(1, {{"_timestamp", "1780000009.5"}});
  builder.Stats(kStart + 8, {});
  auto progress = ProgressOf(builder);
  EXPECT_TRUE(progress.runmon_writer());
  EXPECT_EQ(progress.start_time(), kStart);
  EXPECT_EQ(progress.last_time(), kStart + 9.5);
  EXPECT_FALSE(progress.exit_code());
  builder.Exit(2, 9.9);
  progress = ProgressOf(builder);
  EXPECT_EQ(progress.exit_code(), 2);
  EXPECT_EQ(progress.exit_runtime(), 9);  // whole seconds in W&B's format
  EXPECT_FALSE(ProgressOf(RunLogBuilder().Header("0.21.0")).runmon_writer());
}

// Reads a file the way every reader does: the header, then records, judged at the end.
RunVerdict JudgeFile(const fs::path& path, double now) {
  auto fd = OpenLogForReading(path);
  EXPECT_TRUE(fd.ok()) << fd.error();
  RecordReader reader(FileSource(*fd));
  RunProgress progress;
  ReadOutcome outcome;
  while ((outcome = reader.Next()) == ReadOutcome::kRecord) progress.Note(reader.record());
  const auto verdict = JudgeRun(GatherEvidence(reader.log(), outcome, *fd), progress, now);
  ::close(*fd);
  return verdict;
}

TEST(GatherEvidence, LogsAndFilesThatAreNot) {
  TempDir dir("run-state");
  const fs::path gone = dir.path() / "gone.wandb";
  RunLogBuilder().Header().Run("g", "gone", kStart).Stats(kStart + 1, {}).WriteTo(gone);
  EXPECT_EQ(JudgeFile(gone, kStart + 2).state, RunState::kCrashed);  // the writer let go of its lock

  const fs::path live = dir.path() / "live.wandb";
  auto writer = LogWriter::Create(live);
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ(JudgeFile(live, kStart).state, RunState::kRunning);  // the header alone, the lock held
  ASSERT_TRUE(writer->Append(RunLogBuilder().Header().records()[0].SerializeAsString()).ok());
  EXPECT_EQ(JudgeFile(live, kStart + 1e6).state, RunState::kRunning);

  const fs::path bad = dir.path() / "bad.wandb";
  std::ofstream(bad) << std::string(100000, 'x');
  const fs::path truncated = dir.path() / "truncated.wandb";
  std::ofstream(truncated) << ":W&";
  const fs::path empty = dir.path() / "empty.wandb";
  std::ofstream(empty).close();
  for (const auto& path : {bad, truncated, empty}) {
    const auto verdict = JudgeFile(path, kStart);
    EXPECT_EQ(verdict.state, RunState::kNotARunLog) << path;
    EXPECT_FALSE(verdict.reason.empty()) << path;
  }
  EXPECT_NE(JudgeFile(bad, kStart).reason.find("not a W&B run log"), std::string::npos);
  EXPECT_NE(JudgeFile(truncated, kStart).reason.find("too short"), std::string::npos);
}

// A source that counts the bytes asked of it.
class CountingSource final : public LogSource {
 public:
  explicit CountingSource(int fd) : inner_(FileSource(fd)) {}
  Result<std::string_view> View(uint64_t offset, size_t length) override {
    auto view = inner_->View(offset, length);
    if (view) viewed_ += view->size();
    return view;
  }
  uint64_t* viewed() { return &viewed_; }

 private:
  std::unique_ptr<LogSource> inner_;
  uint64_t viewed_ = 0;
};

TEST(GatherEvidence, TwoGigabytesOfZerosAreRefusedAtTheirFirstBytes) {
  TempDir dir("run-state");
  const fs::path zeros = dir.path() / "zeros.wandb";
  std::ofstream(zeros).close();
  fs::resize_file(zeros, 2ull << 30);  // sparse: nothing is written
  auto fd = OpenLogForReading(zeros);
  ASSERT_TRUE(fd.ok());
  auto source = std::make_unique<CountingSource>(*fd);
  uint64_t* viewed = source->viewed();
  LogReader reader(std::move(source));
  RawRecord record;
  const ReadOutcome outcome = reader.Next(record);
  EXPECT_EQ(outcome, ReadOutcome::kFailed);
  EXPECT_LE(*viewed, 7u);
  const auto verdict = JudgeRun(GatherEvidence(reader, outcome, *fd), RunProgress(), kStart);
  ::close(*fd);
  EXPECT_EQ(verdict.state, RunState::kNotARunLog);
  EXPECT_NE(verdict.reason.find("not a W&B run log"), std::string::npos);
}

}  // namespace
}  // namespace runmon::runlog
