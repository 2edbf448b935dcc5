// ConsoleLog: OutputRawRecords read into lines (W&B's emulation), stdout and stderr apart with their
// times, open lines that change until pushed out, the cap on lines held (older ones dropped, numbers kept),
// and RunModel feeding it from records.
#include "runview/console_log.hpp"

#include <gtest/gtest.h>

#include <string>

#include "runlog/records.hpp"
#include "runview/run_model.hpp"

namespace runmon::runview {
namespace {

TEST(ConsoleLog, AssemblesLinesOfBothStreams) {
  ConsoleLog log;
  log.Add(ConsoleStream::kStdout, "epoch 1\n 10%", 100);
  log.Add(ConsoleStream::kStderr, "warning: slow\n", 101);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log.at(0).text, "epoch 1");
  EXPECT_EQ(log.at(1).text, " 10%");
  EXPECT_EQ(log.at(2).text, "warning: slow");
  EXPECT_EQ(log.at(2).stream, ConsoleStream::kStderr);
  EXPECT_EQ(log.at(2).timestamp, 101);
  const uint64_t version = log.version();
  log.Add(ConsoleStream::kStdout, "\r100%\n", 102);  // the bar's line changes in place
  EXPECT_NE(log.version(), version);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log.at(1).text, "100%");
  EXPECT_EQ(log.at(1).timestamp, 100);  // the time of the output that started it
}

TEST(ConsoleLog, KeepsTheNewestLinesAndCountsTheRest) {
  ConsoleLog log(100);
  for (int i = 0; i < 1000; ++i) log.Add(ConsoleStream::kStdout, "line " + std::to_string(i) + "\n", i);
  EXPECT_LE(log.size(), 100u);
  EXPECT_EQ(log.first_number() + log.size(), 1000u);
  EXPECT_EQ(log.dropped(), log.first_number());
  EXPECT_EQ(log.at(log.size() - 1).text, "line 999");
  EXPECT_EQ(log.at(0).number, log.first_number());
  EXPECT_EQ(log.at(0).text, "line " + std::to_string(log.first_number()));
  EXPECT_LT(log.MemoryBytes(), 100u * 200);
}

TEST(ConsoleLog, RunModelReadsOutputRecords) {
  RunModel model;
  model.Ingest(runlog::MakeOutputRawRecord(false, "hello\n", 1735689600.5));
  model.Ingest(runlog::MakeOutputRawRecord(true, "oops\n", 1735689601));
  ASSERT_EQ(model.console().size(), 2u);
  EXPECT_EQ(model.console().at(0).text, "hello");
  EXPECT_DOUBLE_EQ(model.console().at(0).timestamp, 1735689600.5);
  EXPECT_EQ(model.console().at(1).stream, ConsoleStream::kStderr);
}

}  // namespace
}  // namespace runmon::runview
