// OutputCoalescer: progress bars stored as their state, and its promise: W&B's terminal emulation of the
// taken texts gives the lines of the raw output, however the output is chunked and whenever it is taken
// (random output of `\r`, `\n`, cursor moves, escapes, multi-byte and invalid UTF-8, several windows).
#include "console/output_coalescer.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "console/terminal_lines.hpp"
#include "core/utf8.hpp"

namespace runmon::console {
namespace {

std::vector<std::string> Lines(const std::vector<std::string>& writes, size_t window, size_t limit) {
  TerminalLines lines(window, limit);
  for (const auto& text : writes) lines.Write(ConsoleStream::kStdout, text, 0);
  lines.FinishAll();
  std::vector<std::string> texts;
  for (const auto& line : lines.TakeFinished()) texts.push_back(line.text);
  return texts;
}

// Appends the chunks, taking after those `take_after` marks; returns every taken text.
std::vector<std::string> Coalesce(const std::vector<std::string>& chunks, const std::vector<bool>& take_after,
                                  size_t limit = TerminalLines::kDefaultMaxLineRunes) {
  OutputCoalescer coalescer(limit);
  std::vector<std::string> taken;
  for (size_t i = 0; i < chunks.size(); ++i) {
    coalescer.Append(chunks[i]);
    if (i < take_after.size() && take_after[i]) taken.push_back(coalescer.Take());
  }
  coalescer.Finish();
  taken.push_back(coalescer.Take());
  return taken;
}

std::string Joined(const std::vector<std::string>& texts) {
  std::string all;
  for (const auto& text : texts) all += text;
  return all;
}

TEST(OutputCoalescer, PlainLinesPassAsTheyAre) {
  EXPECT_EQ(Joined(Coalesce({"epoch 1\nepoch 2\n"}, {})), "epoch 1\nepoch 2\n");
  EXPECT_EQ(Coalesce({"par", "tial\n"}, {true}), (std::vector<std::string>{"par", "tial\n"}));
}

TEST(OutputCoalescer, AProgressBarIsStoredAsItsState) {
  std::string bar;
  for (int percent = 0; percent <= 100; ++percent) bar += "\r" + std::to_string(percent) + "%";
  bar += "\n";
  EXPECT_EQ(Joined(Coalesce({bar}, {})), "100%\n");
  // Taken mid-way: the state then, and later the line again after a `\r`.
  EXPECT_EQ(Coalesce({"\r 10%", "\r 20%", "\r100%\n"}, {true, false}),
            (std::vector<std::string>{" 10%", "\r100%\n"}));
}

TEST(OutputCoalescer, TheCursorIsPutBackWhereItWas) {
  // "abcdef" then `\r` and "XY": the line reads XYcdef with the cursor after XY, so what follows lands
  // there in every reader.
  const auto taken = Coalesce({"abcdef\rXY", "Z\n"}, {true});
  EXPECT_EQ(taken[0], "XYcdef\rXY");
  EXPECT_EQ(Lines(taken, 32, 100), (std::vector<std::string>{"XYZdef"}));
}

TEST(OutputCoalescer, CursorMovesArePassedOnUntilAFreshLine) {
  const std::string bars = "bar 1\n\x1b[Abar 2\r\nnext\n";
  // Passed on from the cursor move to the line feed that reaches a row never visited ("next" is fresh).
  EXPECT_EQ(Joined(Coalesce({bars}, {})), bars);
  // "y" goes over "x" a row up; the first line feed comes back to the row the move started on (visited:
  // still passed on), the second reaches a fresh row, where coalescing starts again.
  const std::string after = "x\n\x1b[A\ry\n\n" + std::string("a\rb\n");
  EXPECT_EQ(Joined(Coalesce({after}, {})), "x\n\x1b[A\ry\n\nb\n");
  EXPECT_EQ(Lines({Joined(Coalesce({after}, {}))}, 32, 100), (std::vector<std::string>{"y", "", "b"}));
}

TEST(OutputCoalescer, TextIsValidUtf8AndCutSequencesWait) {
  const auto taken = Coalesce({"\xE2\x82", "\xAC ok\xFF\n"}, {true});
  for (const auto& text : taken) EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(Joined(taken), "\xE2\x82\xAC ok\xEF\xBF\xBD\n");
}

TEST(OutputCoalescer, LinesCutAnywhereAndProgressBarsGiveTheRawOutputsLines) {
  // Plain lines (taken whole at once) cut in the middle of a line, of a `\r` redraw and of a multi-byte
  // character, as a pseudo-terminal's reads cut a flood, and taken after some of the cuts.
  std::string raw;
  for (int i = 0; i < 200; ++i) {
    raw += "step " + std::to_string(i) + " loss 0." + std::to_string(1000 - i) + "\n";
    if (i % 17 == 0) raw += "\r 10%\r 50%\r100% \xE2\x82\xAC\n";
  }
  for (const size_t cut : {1u, 7u, 64u, 4095u}) {
    std::vector<std::string> chunks;
    std::vector<bool> take_after;
    for (size_t at = 0; at < raw.size(); at += cut) {
      chunks.push_back(raw.substr(at, cut));
      take_after.push_back(chunks.size() % 3 == 0);
    }
    const auto taken = Coalesce(chunks, take_after);
    for (const auto& text : taken) EXPECT_TRUE(IsValidUtf8(text));
    EXPECT_EQ(Lines(taken, 32, TerminalLines::kDefaultMaxLineRunes),
              Lines({raw}, 32, TerminalLines::kDefaultMaxLineRunes))
        << "cut " << cut;
  }
}

TEST(OutputCoalescer, TakeGivesOnlyWhatCameSinceTheLastTake) {
  OutputCoalescer coalescer;
  coalescer.Append("first\n");
  EXPECT_EQ(coalescer.Take(), "first\n");
  EXPECT_EQ(coalescer.Take(), "");
  coalescer.Append("second\n");
  EXPECT_EQ(coalescer.Take(), "second\n");
}

TEST(OutputCoalescer, GivesTheSameLinesAsTheRawOutput) {
  std::mt19937 random(20261203);
  const std::vector<std::string> alphabet = {
      "a", "b",        "xyz",      "\r",       "\n",   "\n",   "\x1b[A", "\x1b[B", "\x1b",    "[",
      "A", "\x1b[31m", "\xC3\xA9", "\xE2\x82", "\xAC", "\xFF", "\t",     " ",      "\x1b[2K", "0123456789"};
  for (int round = 0; round < 4000; ++round) {
    std::string raw;
    const int parts = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < parts; ++i) raw += alphabet[random() % alphabet.size()];
    std::vector<std::string> chunks;
    std::vector<bool> take_after;
    for (size_t at = 0; at < raw.size();) {
      const size_t length = 1 + random() % 6;
      chunks.push_back(raw.substr(at, length));
      take_after.push_back(random() % 2 == 0);
      at += length;
    }
    const size_t limit = round % 3 == 0 ? 4 : TerminalLines::kDefaultMaxLineRunes;
    const auto taken = Coalesce(chunks, take_after, limit);
    for (const size_t window : {1u, 2u, 3u, 32u}) {
      ASSERT_EQ(Lines(taken, window, limit), Lines({raw}, window, limit))
          << "round " << round << ", window " << window << ", raw " << ::testing::PrintToString(raw)
          << ", taken " << ::testing::PrintToString(taken);
    }
  }
}

}  // namespace
}  // namespace runmon::console
