// ParseAnsiLine: SGR colours and weights into styles, every other escape sequence dropped, tabs expanded,
// broken and hostile sequences handled, long lines cut.
#include "tui/ansi_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace runmon::tui {
namespace {

std::string Text(const std::vector<StyledSpan>& spans) {
  std::string text;
  for (const auto& span : spans) text += span.text;
  return text;
}

TEST(AnsiText, PlainTextIsOneSpan) {
  const auto spans = ParseAnsiLine("epoch 1 loss 0.31", {});
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].text, "epoch 1 loss 0.31");
  EXPECT_EQ(spans[0].style, Style{});
}

TEST(AnsiText, SgrColoursBecomeStyles) {
  const auto spans = ParseAnsiLine("\x1b[31mred\x1b[0m \x1b[1;92mbold green\x1b[39;22m plain", {});
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].text, "red");
  EXPECT_EQ(spans[0].style.fg, 1);
  EXPECT_EQ(spans[1].text, " ");
  EXPECT_EQ(spans[1].style, Style{});
  EXPECT_EQ(spans[2].style.fg, 10);
  EXPECT_EQ(spans[2].style.attributes, kBold);
  EXPECT_EQ(spans[3].style, Style{});
  EXPECT_EQ(ParseAnsiLine("\x1b[38;5;208mx", {})[0].style.fg, 208);
  EXPECT_EQ(ParseAnsiLine("\x1b[38;2;255;0;0mx", {})[0].style.fg, 196);
  // Backgrounds are read past, not applied, and do not take the foreground with them.
  EXPECT_EQ(ParseAnsiLine("\x1b[48;5;17;33mx", {})[0].style.fg, 3);
  EXPECT_EQ(ParseAnsiLine("\x1b[mx", {Style{4, kDefaultColor, kNoAttributes}})[0].style.fg, 4);
}

TEST(AnsiText, OtherSequencesAreDropped) {
  EXPECT_EQ(Text(ParseAnsiLine("\x1b[2J\x1b[Hclear\x1b[K", {})), "clear");
  EXPECT_EQ(Text(ParseAnsiLine("\x1b]0;evil title\x07text", {})), "text");
  EXPECT_EQ(Text(ParseAnsiLine("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", {})), "link");
  EXPECT_EQ(Text(ParseAnsiLine("\x1b"
                               "7saved\x1b"
                               "8",
                               {})),
            "saved");
  EXPECT_EQ(Text(ParseAnsiLine("\x1b]0;never ended", {})), "");
  EXPECT_EQ(Text(ParseAnsiLine("cut\x1b[12", {})), "cut");
  EXPECT_EQ(Text(ParseAnsiLine("end\x1b", {})), "end");
}

TEST(AnsiText, TabsAndLimits) {
  EXPECT_EQ(Text(ParseAnsiLine("a\tb", {})), "a       b");
  EXPECT_EQ(Text(ParseAnsiLine(std::string(10000, 'x'), {}, 100)).size(), 100u);
  EXPECT_EQ(ParseAnsiLine("", {}).size(), 0u);
  // Thousands of parameters: read, bounded.
  std::string many = "\x1b[";
  for (int i = 0; i < 5000; ++i) many += "31;";
  EXPECT_EQ(Text(ParseAnsiLine(many + "mok", {})), "ok");
}

}  // namespace
}  // namespace runmon::tui
