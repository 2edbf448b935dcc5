// The process table's pure parsers (process_identity_parse.hpp): status's real uid, passwd names, cmdline
// splitting and escaping, stat's comm, and the `runmon run` rule.
#include <gtest/gtest.h>

#include <string>

#include "collectors/linux/parse/process_identity_parse.hpp"

namespace runmon {
namespace {

using namespace std::string_literals;

TEST(ProcessIdentityParseTest, RealUid) {
  EXPECT_EQ(*ParsePidStatusRealUid("Name:\tpython\nUid:\t1000\t0\t0\t0\nGid:\t5\n"), 1000u);
  EXPECT_FALSE(ParsePidStatusRealUid("Name:\tx\n").ok());
  EXPECT_FALSE(ParsePidStatusRealUid("Uid:\t\n").ok());
  EXPECT_FALSE(ParsePidStatusRealUid("Uid:\t-1\t0\n").ok());
  EXPECT_FALSE(ParsePidStatusRealUid("Uid:\t4294967296\t0\n").ok());
  EXPECT_EQ(*ParsePidStatusRealUid("Uid:\t4294967295\t0\n"), 4294967295u);
}

TEST(ProcessIdentityParseTest, PasswdNames) {
  const auto names = ParsePasswdNames(
      "# comment\nroot:x:0:0::/root:/bin/sh\n+nis::::::\nalice:x:1000:1000::/:/bin/sh\n"
      "second:x:1000:1::/:/bin/sh\nbad:x:abc:1::/:/bin/sh\n:x:5:5::/:\nnocolons\n"
      "esc\x1b:x:6:6::/:\nlast:x:7:7");
  EXPECT_EQ(names.at(0), "root");
  EXPECT_EQ(names.at(1000), "alice");
  EXPECT_EQ(names.at(7), "last");
  EXPECT_EQ(names.size(), 3u);
  EXPECT_TRUE(ParsePasswdNames("").empty());
  EXPECT_TRUE(ParsePasswdNames(std::string(70, 'n') + ":x:1:1::/:\n").empty());
}

TEST(ProcessIdentityParseTest, SplitCmdline) {
  const std::string cmdline = "python\0train.py\0\0--x\0"s;
  const auto args = SplitCmdline(cmdline);
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0], "python");
  EXPECT_EQ(args[2], "");
  EXPECT_EQ(args[3], "--x");
  EXPECT_EQ(SplitCmdline("no-nul-at-end").size(), 1u);
  EXPECT_TRUE(SplitCmdline("").empty());
  const std::string three = "a\0b\0c\0"s;
  EXPECT_EQ(SplitCmdline(three, 2).size(), 2u);
}

TEST(ProcessIdentityParseTest, FormatCommandLine) {
  EXPECT_EQ(FormatCommandLine("python\0-c\0print(1)\0\0"s, 100), "python -c print(1)");
  EXPECT_EQ(FormatCommandLine("a\\b\t\n\r\x01\x7f"s, 100), "a\\\\b\\t\\n\\r\\x01\\x7F");
  EXPECT_EQ(FormatCommandLine("caf\xc3\xa9 \xe6\x97\xa5"s, 100), "café 日");  // valid UTF-8 is kept
  EXPECT_EQ(FormatCommandLine("\xc2\x9b"
                              "31m \xe2\x81\xa6x \xc3"s,
                              100),
            "\\u{009B}31m \\u{2066}x \\xC3");
  EXPECT_EQ(FormatCommandLine("abcdefgh", 5), "abcde…");
  EXPECT_EQ(FormatCommandLine("abc\x1b", 5), "abc…");  // an escape is never cut in half
  EXPECT_EQ(FormatCommandLine("", 5), "");
}

TEST(ProcessIdentityParseTest, StatComm) {
  EXPECT_EQ(*ParsePidStatComm("42 (my (weird) cmd) S 1 2"), "my (weird) cmd");
  EXPECT_EQ(*ParsePidStatComm("42 () S"), "");
  EXPECT_FALSE(ParsePidStatComm("42 S 1").ok());
  EXPECT_FALSE(ParsePidStatComm("42 )x( S").ok());
}

TEST(ProcessIdentityParseTest, RunmonRunRule) {
  EXPECT_TRUE(IsRunmonRunCommand({"runmon", "run", "--", "python"}));
  EXPECT_TRUE(IsRunmonRunCommand({"/usr/local/bin/runmon", "run"}));
  EXPECT_TRUE(IsRunmonRunCommand({"./build/runmon", "run", "--pid", "42"}));
  EXPECT_FALSE(IsRunmonRunCommand({"runmon", "leet", "symon"}));
  EXPECT_FALSE(IsRunmonRunCommand({"runmon"}));
  EXPECT_FALSE(IsRunmonRunCommand({"/opt/runmonitor", "run"}));
  EXPECT_FALSE(IsRunmonRunCommand({"python", "runmon", "run"}));
  EXPECT_FALSE(IsRunmonRunCommand({"runmon/", "run"}));
  EXPECT_FALSE(IsRunmonRunCommand({}));
}

}  // namespace
}  // namespace runmon
