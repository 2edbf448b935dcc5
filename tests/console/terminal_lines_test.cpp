// TerminalLines: W&B's terminal emulation (core/internal/terminalemulator) line for line: `\r`
// overwrites, `\n` and cursor up/down, other escapes kept as text, the window of lines that may change,
// the two streams numbered together, the line length limit.
#include "console/terminal_lines.hpp"

#include "console/utf8_decoder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace runmon::console {
namespace {

std::vector<std::string> Texts(TerminalLines& lines) {
  std::vector<std::string> texts;
  for (const auto& line : lines.TakeFinished()) texts.push_back(line.text);
  for (const auto& line : lines.OpenLines()) texts.push_back(line.text);
  return texts;
}

std::vector<std::string> Emulate(std::string_view text, size_t window = 32) {
  TerminalLines lines(window);
  lines.Write(ConsoleStream::kStdout, text, 0);
  return Texts(lines);
}

using Lines = std::vector<std::string>;

TEST(TerminalLines, SplitsLines) {
  EXPECT_EQ(Emulate("one\ntwo\n"), (Lines{"one", "two"}));
  EXPECT_EQ(Emulate("one\n\nthree"), (Lines{"one", "", "three"}));
  EXPECT_EQ(Emulate(""), Lines{});
  EXPECT_EQ(Emulate("\n"), Lines{});  // a line starts with its first character
}

TEST(TerminalLines, CarriageReturnOverwrites) {
  EXPECT_EQ(Emulate(" 10%\r 50%\r100%\n"), (Lines{"100%"}));
  EXPECT_EQ(Emulate("abcdef\rXY"), (Lines{"XYcdef"}));  // the tail stays, as on a terminal
  EXPECT_EQ(Emulate("line\r\n"), (Lines{"line"}));
}

TEST(TerminalLines, CursorUpAndDown) {
  // tqdm's second bar: down a row, draw, back up.
  EXPECT_EQ(Emulate("bar 1\n\x1b[Abar 2"), (Lines{"bar 2"}));
  EXPECT_EQ(Emulate("a\nb\x1b[A\rA"), (Lines{"A", "b"}));
  // Down keeps the column, so the next row is padded up to it.
  EXPECT_EQ(Emulate("ab\x1b[Bc"), (Lines{"ab", "  c"}));
  // Never above the top row.
  EXPECT_EQ(Emulate("x\x1b[A\x1b[A\x1b[Ay"), (Lines{"xy"}));
}

TEST(TerminalLines, OtherEscapesStayInTheText) {
  EXPECT_EQ(Emulate("\x1b[31mred\x1b[0m\n"), (Lines{"\x1b[31mred\x1b[0m"}));
  EXPECT_EQ(Emulate("\x1b"
                    "7x"),
            (Lines{"\x1b"
                   "7x"}));
  EXPECT_EQ(Emulate("\x1b[2Kclear"), (Lines{"\x1b[2Kclear"}));
  // An escape cut by the end of a write is finished by the next one.
  TerminalLines lines(32);
  lines.Write(ConsoleStream::kStdout, "a\n\x1b", 0);
  lines.Write(ConsoleStream::kStdout, "[Ab", 0);
  EXPECT_EQ(Texts(lines), (Lines{"b"}));
}

TEST(TerminalLines, InvalidUtf8IsReplacementCharacters) {
  EXPECT_EQ(Emulate("a\xFF"
                    "b\n"),
            (Lines{"a\xEF\xBF\xBD"
                   "b"}));
}

TEST(TerminalLines, StreamsAreNumberedTogetherWithTheirTimestamps) {
  TerminalLines lines(32);
  lines.Write(ConsoleStream::kStdout, "out 1\n", 10);
  lines.Write(ConsoleStream::kStderr, "err 1\n", 11);
  lines.Write(ConsoleStream::kStdout, "out 2", 12);
  lines.Write(ConsoleStream::kStderr, "\rERR 1", 13);  // stderr's cursor is on its own second row
  const auto open = lines.OpenLines();
  ASSERT_EQ(open.size(), 4u);
  EXPECT_EQ(open[0].text, "out 1");
  EXPECT_EQ(open[1].stream, ConsoleStream::kStderr);
  EXPECT_EQ(open[1].timestamp, 11);
  EXPECT_EQ(open[2].text, "out 2");
  EXPECT_EQ(open[2].number, 2u);
  EXPECT_EQ(open[3].text, "ERR 1");
  EXPECT_EQ(open[3].stream, ConsoleStream::kStderr);
}

TEST(TerminalLines, LinesPastTheWindowAreFinishedAndNoLongerChange) {
  TerminalLines lines(2);
  lines.Write(ConsoleStream::kStdout, "one\ntwo\nthree\n", 0);
  auto finished = lines.TakeFinished();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].text, "one");
  EXPECT_TRUE(lines.TakeFinished().empty());
  // Cursor up reaches back only within the terminal's rows: after the last line feed only "three" (the
  // row above the cursor) is on screen.
  lines.Write(ConsoleStream::kStdout, "\x1b[A\x1b[A\x1b[A\rTWO", 0);
  EXPECT_EQ(Texts(lines), (Lines{"two", "TWOee"}));
  lines.FinishAll();
  EXPECT_EQ(lines.TakeFinished().size(), 2u);
  EXPECT_TRUE(lines.OpenLines().empty());
}

TEST(TerminalLines, ALineKeepsAtMostTheLimit) {
  TerminalLines lines(4, 5);
  lines.Write(ConsoleStream::kStdout, "0123456789\n", 0);
  lines.Write(ConsoleStream::kStdout,
              "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC", 0);
  EXPECT_EQ(Texts(lines), (Lines{"01234", "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC"}));
}

TEST(TerminalLines, WritingRunsOfTextEqualsPuttingEachCharacter) {
  const std::string text =
      "ab\rXY\x1b[31mred\x1b[Aup\n\xC3\xA9t\xE2\x82"
      "e\x1b[Bdown\x1b"
      "7x\n" +
      std::string(40, 'z') + "\r\n";
  for (const size_t limit : {3u, 8u, 100u}) {
    TerminalLines written(4, limit);
    written.Write(ConsoleStream::kStdout, text, 0);
    TerminalLines put(4, limit);
    Utf8Decoder decoder;
    decoder.Decode(text, [&](char32_t rune) { put.Put(ConsoleStream::kStdout, rune); });
    decoder.Finish([&](char32_t rune) { put.Put(ConsoleStream::kStdout, rune); });
    EXPECT_EQ(Texts(written), Texts(put)) << "limit " << limit;
  }
}

TEST(TerminalLines, ProgressBarsWithoutNewlinesAndLongTextsAreWrittenAsCharacterByCharacter) {
  // A long text of `\r` redraws with no `\n` (the run of printable ASCII ends at each `\r`, the line's end
  // is the text's), then lines whose printable runs end at a `\n`, an escape or a multi-byte character.
  std::string text;
  for (int i = 0; i <= 100; ++i) text += "\r" + std::to_string(i) + "% |" + std::string(i / 4, '#');
  text += "\n";
  for (int i = 0; i < 50; ++i) text += "line " + std::to_string(i) + " \xC3\xA9 \x1b[1mbold\x1b[0m end\n";
  text += std::string(300, 'q');
  for (const size_t limit : {20u, 1000u}) {
    TerminalLines written(4, limit);
    written.Write(ConsoleStream::kStdout, text, 0);
    TerminalLines put(4, limit);
    Utf8Decoder decoder;
    decoder.Decode(text, [&](char32_t rune) { put.Put(ConsoleStream::kStdout, rune); });
    decoder.Finish([&](char32_t rune) { put.Put(ConsoleStream::kStdout, rune); });
    EXPECT_EQ(Texts(written), Texts(put)) << "limit " << limit;
  }
}

TEST(TerminalLines, FinishedBytesCountTheFinishedTextUntilTaken) {
  TerminalLines lines(2);
  lines.Write(ConsoleStream::kStdout, "one\ntwo\n\xC3\xA9\n", 0);  // "one" scrolls out of the window
  EXPECT_EQ(lines.finished_bytes(), 3u);
  lines.Write(ConsoleStream::kStdout, "x\n", 0);
  EXPECT_EQ(lines.finished_bytes(), 6u);
  EXPECT_EQ(lines.TakeFinished().size(), 2u);
  EXPECT_EQ(lines.finished_bytes(), 0u);
  lines.FinishAll();
  EXPECT_EQ(lines.finished_bytes(), 3u);  // "\xC3\xA9" and "x"
}

TEST(TerminalLines, VersionMovesWithEveryChange) {
  TerminalLines lines(4);
  const uint64_t start = lines.version();
  lines.Write(ConsoleStream::kStdout, "a", 0);
  const uint64_t after_a = lines.version();
  EXPECT_NE(after_a, start);
  lines.Write(ConsoleStream::kStdout, "\ra", 0);  // the same character: nothing changed
  EXPECT_EQ(lines.version(), after_a);
  lines.Write(ConsoleStream::kStdout, "\rb", 0);
  EXPECT_NE(lines.version(), after_a);
}

}  // namespace
}  // namespace runmon::console
