// History rows and the summary from metrics lines (history_rows.hpp): W&B's step rules (explicit steps
// join an open row, larger ones close it, smaller ones are refused, lines without a step continue from the
// last and commit), idle and final closing, last values within a row, the summary's order and explicit
// values, and the key limit.
#include "user_metrics/history_rows.hpp"

#include <string>

#include <gtest/gtest.h>

namespace runmon::user_metrics {
namespace {

MetricLine Line(std::vector<MetricItem> items, std::optional<int64_t> step = std::nullopt,
                std::optional<double> timestamp = std::nullopt) {
  MetricLine line;
  line.items = std::move(items);
  line.step = step;
  line.timestamp = timestamp;
  return line;
}

std::vector<int64_t> Steps(const std::vector<HistoryRow>& rows) {
  std::vector<int64_t> steps;
  for (const HistoryRow& row : rows) steps.push_back(row.step);
  return steps;
}

TEST(HistoryRows, LinesWithoutAStepAreRowsOfTheirOwnFromZero) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(history.Add(Line({{"loss", std::to_string(i)}}), 100 + i, closed).ok());
  EXPECT_EQ(Steps(closed), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(closed[2].timestamp, 102);
  EXPECT_EQ(closed[2].items, (std::vector<MetricItem>{{"loss", "2"}}));
  EXPECT_EQ(history.rows(), 3u);
}

TEST(HistoryRows, ExplicitStepsJoinUntilALargerOneAndTheLastKeyWins) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  ASSERT_TRUE(history.Add(Line({{"loss", "1"}}, 5, 50.5), 60, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"acc", "0.1"}, {"loss", "0.9"}}, 5), 61, closed).ok());  // another rank
  EXPECT_TRUE(closed.empty());
  ASSERT_TRUE(history.Add(Line({{"loss", "0.8"}}, 7), 62, closed).ok());
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].step, 5);
  EXPECT_EQ(closed[0].timestamp, 50.5);  // the first line's own time
  EXPECT_EQ(closed[0].items, (std::vector<MetricItem>{{"loss", "0.9"}, {"acc", "0.1"}}));
  // A step that goes back is refused and changes nothing.
  const Status behind = history.Add(Line({{"loss", "5"}}, 6), 63, closed);
  EXPECT_FALSE(behind.ok());
  EXPECT_EQ(behind.error(), "_step 6 is behind step 7");
  // A line without a step joins the open row and commits it; the next one continues.
  ASSERT_TRUE(history.Add(Line({{"lr", "0.01"}}), 64, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"lr", "0.02"}}), 65, closed).ok());
  EXPECT_EQ(Steps(closed), (std::vector<int64_t>{5, 7, 8}));
  EXPECT_EQ(closed[1].items, (std::vector<MetricItem>{{"loss", "0.8"}, {"lr", "0.01"}}));
}

TEST(HistoryRows, AWideRowKeepsEachKeysLastValueInItsPlace) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  std::vector<MetricItem> items;
  for (int i = 0; i < 20; ++i) items.push_back({"k" + std::to_string(i), "0"});
  ASSERT_TRUE(history.Add(Line(items, 1), 1, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"k3", "3"}, {"new", "9"}, {"k19", "19"}}, 1), 2, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"new", "10"}, {"k0", "1"}}, 1), 3, closed).ok());
  history.Finish(closed);
  ASSERT_EQ(closed.size(), 1u);
  const auto& row = closed[0].items;
  ASSERT_EQ(row.size(), 21u);
  EXPECT_EQ(row[0], (MetricItem{"k0", "1"}));
  EXPECT_EQ(row[3], (MetricItem{"k3", "3"}));
  EXPECT_EQ(row[19], (MetricItem{"k19", "19"}));
  EXPECT_EQ(row[20], (MetricItem{"new", "10"}));
}

TEST(HistoryRows, AnIdleRowClosesAndALateLineAtItsStepIsARowOfItsOwn) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  ASSERT_TRUE(history.Add(Line({{"loss", "1"}}, 3), 10, closed).ok());
  history.FlushIdle(11, 2, closed);
  EXPECT_TRUE(closed.empty());
  history.FlushIdle(12, 2, closed);
  ASSERT_EQ(Steps(closed), (std::vector<int64_t>{3}));
  ASSERT_TRUE(history.Add(Line({{"acc", "1"}}, 3), 13, closed).ok());  // no value is lost
  history.Finish(closed);
  EXPECT_EQ(Steps(closed), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(closed[1].items, (std::vector<MetricItem>{{"acc", "1"}}));
  history.Finish(closed);  // nothing open: nothing more
  EXPECT_EQ(closed.size(), 2u);
}

TEST(HistoryRows, TheSummaryIsEachKeysLastValueThenWhatWasSet) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  ASSERT_TRUE(history.Add(Line({{"loss", "2"}, {"acc", "0.1"}}), 1, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"loss", "1"}}), 2, closed).ok());
  MetricLine set = Line({{"acc", "0.99"}, {"best", "\"epoch 3\""}});
  set.summary = true;
  ASSERT_TRUE(history.Add(set, 3, closed).ok());
  ASSERT_TRUE(history.Add(Line({{"acc", "0.5"}}), 4, closed).ok());  // set values win over history's
  EXPECT_EQ(history.Summary(),
            (std::vector<MetricItem>{{"loss", "1"}, {"acc", "0.99"}, {"best", "\"epoch 3\""}}));
  EXPECT_EQ(closed.size(), 3u);  // a summary line is no row
}

TEST(HistoryRows, MadeUpKeysStopAtTheLimit) {
  HistoryAssembler history;
  std::vector<HistoryRow> closed;
  std::vector<MetricItem> items;
  for (size_t i = 0; i < HistoryAssembler::kMaxKeys + 10; ++i)
    items.push_back({"k" + std::to_string(i), "1"});
  ASSERT_TRUE(history.Add(Line(items), 1, closed).ok());
  EXPECT_EQ(closed.at(0).items.size(), HistoryAssembler::kMaxKeys);
  EXPECT_EQ(history.values_dropped(), 10u);
  // Known keys still take values.
  ASSERT_TRUE(history.Add(Line({{"k0", "2"}, {"new", "1"}}), 2, closed).ok());
  EXPECT_EQ(closed.at(1).items, (std::vector<MetricItem>{{"k0", "2"}}));
  EXPECT_EQ(history.values_dropped(), 11u);
  EXPECT_EQ(history.Summary().size(), HistoryAssembler::kMaxKeys);
}

}  // namespace
}  // namespace runmon::user_metrics
