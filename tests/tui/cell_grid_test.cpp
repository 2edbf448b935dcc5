// Unit tests of the cell grid: the locale-independent width table, UTF-8 decoding with U+FFFD for invalid
// bytes and controls (hostile run names cannot reach the terminal as escape sequences), clipping and "…",
// double-width characters and their continuation cells (never orphaned), boxes, and ToString.
#include "tui/cell_grid.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <string>

namespace runmon::tui {
namespace {

// Every continuation cell follows a double-width character and every double-width character is followed
// by its continuation.
void ExpectNoOrphans(const CellGrid& grid) {
  for (int y = 0; y < grid.height(); ++y) {
    for (int x = 0; x < grid.width(); ++x) {
      const char32_t code_point = grid.at(x, y).code_point;
      if (code_point == 0) {
        ASSERT_GT(x, 0) << "continuation in column 0, row " << y;
        EXPECT_EQ(CodePointWidth(grid.at(x - 1, y).code_point), 2)
            << "orphan continuation at " << x << "," << y;
      } else if (CodePointWidth(code_point) == 2) {
        ASSERT_LT(x + 1, grid.width()) << "wide character in the last column, row " << y;
        EXPECT_EQ(grid.at(x + 1, y).code_point, U'\0') << "wide character without continuation at " << x;
      }
      EXPECT_GT(CodePointWidth(code_point == 0 ? U'x' : code_point), 0) << "zero-width cell at " << x;
    }
  }
}

// No cell holds a control character.
void ExpectNoControls(const CellGrid& grid) {
  for (int y = 0; y < grid.height(); ++y) {
    for (int x = 0; x < grid.width(); ++x) {
      const char32_t code_point = grid.at(x, y).code_point;
      if (code_point == 0) continue;
      EXPECT_FALSE(code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F))
          << "control U+" << std::hex << static_cast<uint32_t>(code_point) << " at " << std::dec << x << ","
          << y;
    }
  }
}

TEST(CodePointWidth, Table) {
  EXPECT_EQ(CodePointWidth(U'a'), 1);
  EXPECT_EQ(CodePointWidth(U'é'), 1);
  EXPECT_EQ(CodePointWidth(U'─'), 1);
  EXPECT_EQ(CodePointWidth(U'⣿'), 1);  // braille
  EXPECT_EQ(CodePointWidth(U'…'), 1);
  EXPECT_EQ(CodePointWidth(0x0301), 0);   // combining acute
  EXPECT_EQ(CodePointWidth(0x1AB0), 0);   // combining extended
  EXPECT_EQ(CodePointWidth(0x1DC0), 0);   // combining supplement
  EXPECT_EQ(CodePointWidth(0x20D7), 0);   // combining for symbols
  EXPECT_EQ(CodePointWidth(0xFE21), 0);   // half marks
  EXPECT_EQ(CodePointWidth(0x200C), 0);   // ZWNJ
  EXPECT_EQ(CodePointWidth(0x200D), 0);   // ZWJ
  EXPECT_EQ(CodePointWidth(0xFE0F), 0);   // variation selector 16
  EXPECT_EQ(CodePointWidth(0xE0100), 0);  // variation selector 17
  EXPECT_EQ(CodePointWidth(0x1100), 2);   // Hangul Jamo
  EXPECT_EQ(CodePointWidth(0x115F), 2);
  EXPECT_EQ(CodePointWidth(0x1160), 1);
  EXPECT_EQ(CodePointWidth(U'中'), 2);
  EXPECT_EQ(CodePointWidth(U'あ'), 2);
  EXPECT_EQ(CodePointWidth(U'한'), 2);
  EXPECT_EQ(CodePointWidth(U'Ａ'), 2);    // fullwidth A
  EXPECT_EQ(CodePointWidth(U'￥'), 2);    // FFE5
  EXPECT_EQ(CodePointWidth(0x303F), 1);   // between the CJK ranges
  EXPECT_EQ(CodePointWidth(0x1F600), 2);  // 😀
  EXPECT_EQ(CodePointWidth(0x1F914), 2);  // 🤔
  EXPECT_EQ(CodePointWidth(0x20000), 2);
  EXPECT_EQ(CodePointWidth(0x3FFFD), 2);
  EXPECT_EQ(CodePointWidth(0x3FFFE), 1);
}

TEST(DisplayWidth, CountsColumns) {
  EXPECT_EQ(DisplayWidth(""), 0);
  EXPECT_EQ(DisplayWidth("GPU 0"), 5);
  EXPECT_EQ(DisplayWidth("°C"), 2);
  EXPECT_EQ(DisplayWidth("中文"), 4);
  EXPECT_EQ(DisplayWidth("e\xCC\x81"), 1);     // e + combining acute
  EXPECT_EQ(DisplayWidth("\x1b[31m"), 5);      // ESC is one U+FFFD
  EXPECT_EQ(DisplayWidth("\xFF\xFE"), 2);      // two invalid bytes
  EXPECT_EQ(DisplayWidth("\xE4\xB8"), 2);      // a truncated sequence: each byte
  EXPECT_EQ(DisplayWidth("\xC0\xAF"), 2);      // overlong '/'
  EXPECT_EQ(DisplayWidth("\xED\xA0\x80"), 3);  // a surrogate
}

TEST(TruncateToWidth, FitsOrEndsInEllipsis) {
  EXPECT_EQ(TruncateToWidth("hello", 5), "hello");
  EXPECT_EQ(TruncateToWidth("hello", 10), "hello");
  EXPECT_EQ(TruncateToWidth("hello world", 5), "hell…");
  EXPECT_EQ(TruncateToWidth("hello", 1), "…");
  EXPECT_EQ(TruncateToWidth("hello", 0), "");
  EXPECT_EQ(TruncateToWidth("hello", -3), "");
  EXPECT_EQ(TruncateToWidth("", 3), "");
  EXPECT_EQ(TruncateToWidth("中文字", 6), "中文字");
  EXPECT_EQ(TruncateToWidth("中文字", 5), "中文…");
  EXPECT_EQ(TruncateToWidth("中文字", 4), "中 …");  // the wide character that straddles is a space
  EXPECT_EQ(TruncateToWidth("e\xCC\x81tude", 3), "e\xCC\x81t…");  // combining marks stay with their base
  EXPECT_EQ(TruncateToWidth("a\x1b[2Jb", 4), "a\xEF\xBF\xBD[…");  // ESC sanitized
  EXPECT_EQ(TruncateToWidth("\xFF", 3), "\xEF\xBF\xBD");
  for (int width = 0; width < 12; ++width) {
    const std::string cut = TruncateToWidth("ab中cd文ef字", width);
    EXPECT_LE(DisplayWidth(cut), width);
    EXPECT_EQ(DisplayWidth(cut), std::min(width, DisplayWidth("ab中cd文ef字")));
  }
}

TEST(CellGrid, NegativeSizesAreEmpty) {
  CellGrid grid(-3, 5);
  EXPECT_EQ(grid.width(), 0);
  EXPECT_EQ(grid.height(), 5);
  EXPECT_TRUE(grid.bounds().empty());
  grid.Set(0, 0, U'x');
  EXPECT_EQ(grid.PutText(0, 0, "abc"), 0);
  grid.Fill(grid.bounds(), U'x');
  grid.DrawBox({0, 0, 3, 3});
  EXPECT_EQ(grid.ToString(), "\n\n\n\n");
  CellGrid none(0, 0);
  EXPECT_EQ(none.ToString(), "");
}

TEST(CellGrid, OutOfGridReadsAreBlankAndWritesIgnored) {
  CellGrid grid(3, 2);
  EXPECT_EQ(grid.at(-1, 0), Cell{});
  EXPECT_EQ(grid.at(3, 0), Cell{});
  EXPECT_EQ(grid.at(0, 2), Cell{});
  grid.Set(-1, 0, U'x');
  grid.Set(3, 1, U'x');
  grid.Set(0, -1, U'x');
  grid.Set(1, 5, U'x');
  EXPECT_EQ(grid.ToString(), "   \n   ");
  grid.Set(1, 1, U'y', Style{3, 4, kBold});
  EXPECT_EQ(grid.at(1, 1).code_point, U'y');
  EXPECT_EQ(grid.at(1, 1).style, (Style{3, 4, kBold}));
  EXPECT_EQ(grid.ToString(), "   \n y ");
}

TEST(CellGrid, SetSanitizesCodePoints) {
  CellGrid grid(6, 1);
  grid.Set(0, 0, U'\x1b');
  grid.Set(1, 0, 0x9B);      // C1 CSI
  grid.Set(2, 0, 0x7F);      // DEL
  grid.Set(3, 0, 0);         // would be a continuation with no lead
  grid.Set(4, 0, 0x0301);    // a lone combining mark
  grid.Set(5, 0, 0x110000);  // beyond Unicode
  EXPECT_EQ(grid.ToString(), "������");
  ExpectNoOrphans(grid);
}

TEST(CellGrid, PutTextWritesAndClips) {
  CellGrid grid(10, 2);
  EXPECT_EQ(grid.PutText(1, 0, "hello"), 5);
  EXPECT_EQ(grid.PutText(0, 1, "hello world"), 10);
  EXPECT_EQ(grid.ToString(), " hello    \nhello wor…");
  EXPECT_EQ(grid.PutText(2, 0, "abcdef", Style{1}, 3), 3);
  EXPECT_EQ(grid.ToString(), " hab…o    \nhello wor…");
  EXPECT_EQ(grid.at(2, 0).style.fg, 1);
  EXPECT_EQ(grid.at(5, 0).style.fg, kDefaultColor);
  EXPECT_EQ(grid.PutText(3, 0, "xyz", {}, 0), 0);
  EXPECT_EQ(grid.PutText(3, 5, "xyz"), 0);
  EXPECT_EQ(grid.PutText(10, 0, "xyz"), 0);
  EXPECT_EQ(grid.ToString(), " hab…o    \nhello wor…");
}

TEST(CellGrid, PutTextLeftOfTheGridIsClipped) {
  CellGrid grid(5, 1);
  grid.PutText(-2, 0, "abcdefgh");
  EXPECT_EQ(grid.ToString(), "cdef…");
}

TEST(CellGrid, WideCharactersTakeTwoCells) {
  CellGrid grid(8, 1);
  EXPECT_EQ(grid.PutText(0, 0, "a中文b"), 6);
  EXPECT_EQ(grid.at(1, 0).code_point, U'中');
  EXPECT_EQ(grid.at(2, 0).code_point, U'\0');
  EXPECT_EQ(grid.at(3, 0).code_point, U'文');
  EXPECT_EQ(grid.at(4, 0).code_point, U'\0');
  EXPECT_EQ(grid.at(5, 0).code_point, U'b');
  EXPECT_EQ(grid.ToString(), "a中文b  ");
  ExpectNoOrphans(grid);
}

TEST(CellGrid, WideCharacterStraddlingTheLimitBecomesASpace) {
  CellGrid grid(6, 1);
  grid.Fill(grid.bounds(), U'.');
  EXPECT_EQ(grid.PutText(0, 0, "中文字", {}, 4), 4);
  EXPECT_EQ(grid.ToString(), "中 …..");
  CellGrid edge(3, 1);
  edge.Set(2, 0, U'中');  // the last column cannot hold it
  EXPECT_EQ(edge.ToString(), "   ");
  EXPECT_EQ(edge.PutText(0, 0, "ab中"), 3);
  EXPECT_EQ(edge.ToString(), "ab…");
  EXPECT_EQ(edge.PutText(0, 0, "a中"), 3);
  EXPECT_EQ(edge.ToString(), "a中");
  ExpectNoOrphans(edge);
}

TEST(CellGrid, OverwritingHalfAWideCharacterBlanksTheOtherHalf) {
  CellGrid grid(6, 1);
  grid.PutText(0, 0, "中文字");
  grid.Set(1, 0, U'x');  // the continuation of 中
  EXPECT_EQ(grid.ToString(), " x文字");
  ExpectNoOrphans(grid);
  grid.Set(2, 0, U'y');  // the lead of 文
  EXPECT_EQ(grid.ToString(), " xy 字");
  ExpectNoOrphans(grid);
  grid.Set(3, 0, U'한');  // a wide character over a blank and the lead of 字
  EXPECT_EQ(grid.ToString(), " xy한 ");
  ExpectNoOrphans(grid);
  grid.Set(2, 0, U'中');  // over y and the lead of 한
  EXPECT_EQ(grid.ToString(), " x中  ");
  ExpectNoOrphans(grid);
  grid.Set(3, 0, U'가');  // lead on the continuation of 中
  EXPECT_EQ(grid.ToString(), " x 가 ");
  ExpectNoOrphans(grid);
}

TEST(CellGrid, RandomWritesNeverLeaveOrphans) {
  std::mt19937 random(1);
  const char32_t glyphs[] = {U'a', U'中', U'문', U' ', U'😀', U'⣿', 0x0301, 0x1b};
  CellGrid grid(9, 3);
  for (int step = 0; step < 5000; ++step) {
    const int x = static_cast<int>(random() % 11) - 1;
    const int y = static_cast<int>(random() % 4) - 1;
    switch (random() % 3) {
      case 0:
        grid.Set(x, y, glyphs[random() % std::size(glyphs)]);
        break;
      case 1:
        grid.PutText(x, y, "中a문😀b", {}, static_cast<int>(random() % 8));
        break;
      default:
        grid.Fill({x, y, static_cast<int>(random() % 5), static_cast<int>(random() % 3)},
                  glyphs[random() % std::size(glyphs)]);
        break;
    }
    ExpectNoOrphans(grid);
    if (HasFailure()) return;
  }
}

TEST(CellGrid, HostileTextCannotEscape) {
  CellGrid grid(40, 1);
  const std::string hostile = "\x1b]0;pwned\x07\x1b[2J\r\n\t\x9b\x31m\xC2\x9B\x7F\xFF\xC0\x80\xED\xA0\x80z";
  grid.PutText(0, 0, hostile);
  ExpectNoControls(grid);
  ExpectNoOrphans(grid);
  EXPECT_EQ(grid.at(0, 0).code_point, U'\xFFFD');
  EXPECT_EQ(grid.at(1, 0).code_point, U']');
  EXPECT_EQ(DisplayWidth(hostile), 29);
  EXPECT_EQ(grid.at(28, 0).code_point, U'z');
  EXPECT_EQ(grid.ToString().find('\x1b'), std::string::npos);
  EXPECT_EQ(grid.ToString().find('\n'), std::string::npos);
}

TEST(CellGrid, HugeStringsAreClipped) {
  CellGrid grid(20, 2);
  const std::string huge(10'000'000, 'x');
  EXPECT_EQ(grid.PutText(0, 0, huge), 20);
  EXPECT_EQ(grid.ToString(), "xxxxxxxxxxxxxxxxxxx…\n                    ");
  std::string marks = "a";
  for (int i = 0; i < 1'000'000; ++i) marks += "\xCC\x81";  // a million combining marks
  EXPECT_EQ(grid.PutText(0, 1, marks), 1);
  EXPECT_EQ(grid.at(0, 1).code_point, U'a');
  EXPECT_EQ(DisplayWidth(marks), 1);
  std::string random_bytes(1 << 16, '\0');
  std::mt19937 random(3);
  for (char& byte : random_bytes) byte = static_cast<char>(random());
  CellGrid noise(64, 4);
  for (int y = 0; y < 4; ++y) noise.PutText(y, y, random_bytes.substr(static_cast<size_t>(y) * 1000));
  ExpectNoControls(noise);
  ExpectNoOrphans(noise);
}

TEST(CellGrid, FillAndSetStyle) {
  CellGrid grid(5, 3);
  grid.Fill({1, 1, 10, 10}, U'#', Style{2});
  EXPECT_EQ(grid.ToString(), "     \n ####\n ####");
  grid.SetStyle({-1, -1, 3, 3}, Style{5, 6, kReverse});
  EXPECT_EQ(grid.at(1, 1).code_point, U'#');
  EXPECT_EQ(grid.at(1, 1).style, (Style{5, 6, kReverse}));
  EXPECT_EQ(grid.at(2, 1).style, Style{2});
  EXPECT_EQ(grid.at(0, 0).style, (Style{5, 6, kReverse}));
  grid.Fill({0, 0, 5, 1}, U'中');
  EXPECT_EQ(grid.ToString(), "中中 \n ####\n ####");
  ExpectNoOrphans(grid);
  grid.Fill({0, 0, 0, 3}, U'x');
  grid.Fill({0, 0, 3, -1}, U'x');
  EXPECT_EQ(grid.ToString(), "中中 \n ####\n ####");
}

TEST(CellGrid, DrawBoxWithTitle) {
  CellGrid grid(12, 4);
  grid.DrawBox(grid.bounds(), Style{4}, "CPU");
  EXPECT_EQ(grid.ToString(), R"(┌ CPU ─────┐
│          │
│          │
└──────────┘)");
  EXPECT_EQ(grid.at(0, 0).style.fg, 4);
  EXPECT_EQ(grid.at(2, 0).style.fg, 4);
}

TEST(CellGrid, DrawBoxTruncatesTheTitle) {
  CellGrid grid(10, 3);
  grid.DrawBox(grid.bounds(), {}, "GPU Utilization");
  EXPECT_EQ(grid.ToString(), R"(┌ GPU U… ┐
│        │
└────────┘)");
  CellGrid narrow(4, 2);
  narrow.DrawBox(narrow.bounds(), {}, "Title");  // one column of title would not fit
  EXPECT_EQ(narrow.ToString(), "┌──┐\n└──┘");
  CellGrid wide_title(8, 2);
  wide_title.DrawBox(wide_title.bounds(), {}, "中文字幕");
  EXPECT_EQ(wide_title.ToString(), "┌ 中 … ┐\n└──────┘");
  ExpectNoOrphans(wide_title);
}

TEST(CellGrid, DrawBoxInsideAndOutsideTheGrid) {
  CellGrid grid(6, 4);
  grid.DrawBox({1, 1, 3, 2});
  EXPECT_EQ(grid.ToString(), "      \n ┌─┐  \n └─┘  \n      ");
  grid.DrawBox({4, 2, 5, 5});  // clipped by the grid
  EXPECT_EQ(grid.ToString(), "      \n ┌─┐  \n └─┘┌─\n    │ ");
  grid.DrawBox({-1000000000, -5, 2000000000, 2000000000}, {}, "huge");  // around the grid: no edge inside
  grid.DrawBox({7, 0, 3, 3});                                           // right of the grid
  grid.DrawBox({0, 0, 1, 4});                                           // too small: nothing
  grid.DrawBox({0, 0, 4, 1});
  EXPECT_EQ(grid.ToString(), "      \n ┌─┐  \n └─┘┌─\n    │ ");
}

TEST(CellGrid, ToStringSkipsContinuationsAndKeepsTrailingSpaces) {
  CellGrid grid(4, 2);
  grid.PutText(0, 0, "中");
  grid.PutText(0, 1, "ab");
  EXPECT_EQ(grid.ToString(), "中  \nab  ");
}

}  // namespace
}  // namespace runmon::tui
