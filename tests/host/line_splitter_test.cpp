// LineSplitter: lines handed out whole however the stream is cut, over-long lines skipped to their
// newline and reported with their length, never more than the limit held, an unfinished line dropped on
// Reset.
#include "host/line_splitter.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace runmon {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<size_t> overlong;
};

// Feeds `pieces` in order and collects what comes out.
Collected Split(LineSplitter& splitter, const std::vector<std::string>& pieces) {
  Collected out;
  for (const auto& piece : pieces) {
    splitter.Append(
        piece, [&](std::string_view line) { out.lines.emplace_back(line); },
        [&](size_t bytes) { out.overlong.push_back(bytes); });
  }
  return out;
}

TEST(LineSplitter, HandsOutEachCompleteLineWithoutItsNewline) {
  LineSplitter splitter(100);
  const auto out = Split(splitter, {"{\"a\":1}\n{\"b\":2}\n\n{\"c\""});
  EXPECT_EQ(out.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", ""}));
  EXPECT_TRUE(out.overlong.empty());
  EXPECT_EQ(splitter.pending_bytes(), 4u);
}

TEST(LineSplitter, ReassemblesALineCutAtEveryByte) {
  const std::string stream = "{\"first\":[1,2,3]}\n{\"second\":\"x\"}\n";
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  LineSplitter splitter(100);
  const auto out = Split(splitter, bytes);
  EXPECT_EQ(out.lines, (std::vector<std::string>{"{\"first\":[1,2,3]}", "{\"second\":\"x\"}"}));
  EXPECT_EQ(splitter.pending_bytes(), 0u);
}

TEST(LineSplitter, ALineOfExactlyTheLimitIsKept) {
  LineSplitter splitter(5);
  const auto out = Split(splitter, {"ab", "cde", "\n"});
  EXPECT_EQ(out.lines, (std::vector<std::string>{"abcde"}));
  EXPECT_TRUE(out.overlong.empty());
}

TEST(LineSplitter, SkipsAnOverlongLineToItsNewlineHoldingNoMoreThanTheLimit) {
  LineSplitter splitter(8);
  Collected out;
  const auto on_line = [&](std::string_view line) { out.lines.emplace_back(line); };
  const auto on_overlong = [&](size_t bytes) { out.overlong.push_back(bytes); };
  splitter.Append("ok\n0123", on_line, on_overlong);
  for (int i = 0; i < 1000; ++i) {
    splitter.Append("456789abcdef", on_line, on_overlong);
    EXPECT_LE(splitter.pending_bytes(), 8u);
  }
  splitter.Append("tail\nnext\n", on_line, on_overlong);
  EXPECT_EQ(out.lines, (std::vector<std::string>{"ok", "next"}));
  EXPECT_EQ(out.overlong, (std::vector<size_t>{4 + 12 * 1000 + 4}));
}

TEST(LineSplitter, AnOverlongLineInsideOnePieceIsReportedAndTheRestKept) {
  LineSplitter splitter(3);
  const auto out = Split(splitter, {"a\nlong line\nb\n"});
  EXPECT_EQ(out.lines, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(out.overlong, (std::vector<size_t>{9}));
}

TEST(LineSplitter, ResetDropsTheUnfinishedLineAndSaysHowLongItWas) {
  LineSplitter splitter(100);
  auto out = Split(splitter, {"{\"partial\":"});
  EXPECT_EQ(splitter.Reset(), 11u);
  out = Split(splitter, {"{\"whole\":1}\n"});
  EXPECT_EQ(out.lines, (std::vector<std::string>{"{\"whole\":1}"}));
  EXPECT_EQ(splitter.Reset(), 0u);
}

TEST(LineSplitter, ResetInsideAnOverlongLineCountsWhatWasSkipped) {
  LineSplitter splitter(2);
  auto out = Split(splitter, {"abcdef"});
  EXPECT_EQ(splitter.Reset(), 6u);
  out = Split(splitter, {"xy\n"});
  EXPECT_EQ(out.lines, (std::vector<std::string>{"xy"}));
  EXPECT_TRUE(out.overlong.empty());
}

}  // namespace
}  // namespace runmon
