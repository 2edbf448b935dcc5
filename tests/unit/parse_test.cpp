// Unit tests of the pure procfs/sysfs/cgroup parsers (collectors/linux/parse/procfs_parse.hpp): realistic
// kernel text for every format and kernel generation the parsers claim to handle, plus malformed,
// truncated, empty and overflowing input, each of which must give an Error (or the documented nullopt).
#include "collectors/linux/parse/procfs_parse.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/linux/parse/text.hpp"

namespace runmon {
namespace {

using namespace std::string_literals;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Expects `result` to be an Error whose message contains `fragment`.
template <typename T>
void ExpectError(const Result<T>& result, std::string_view fragment = {}) {
  ASSERT_FALSE(result.ok()) << "expected an error";
  EXPECT_FALSE(result.error().empty());
  EXPECT_NE(result.error().find(fragment), std::string::npos)
      << "message '" << result.error() << "' lacks '" << fragment << "'";
}

// ---------------------------------------------------------------------------------------------------------
// text.hpp helpers

TEST(TextHelpers, TrimRemovesAllKernelWhitespace) {
  EXPECT_EQ(text::Trim(" \t\r\n\v\fabc d \n"), "abc d");
  EXPECT_EQ(text::Trim(""), "");
  EXPECT_EQ(text::Trim(" \t\n"), "");
}

TEST(TextHelpers, LinesYieldsEachLineWithoutNewline) {
  text::Lines lines("a\n\nb c\nlast");
  std::string_view line;
  std::vector<std::string> got;
  while (lines.Next(line)) got.emplace_back(line);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "", "b c", "last"}));
}

TEST(TextHelpers, LinesDoesNotYieldAnEmptyLineAfterTrailingNewline) {
  text::Lines lines("a\n");
  std::string_view line;
  ASSERT_TRUE(lines.Next(line));
  EXPECT_EQ(line, "a");
  EXPECT_FALSE(lines.Next(line));
}

TEST(TextHelpers, FieldsSplitsOnAnyWhitespace) {
  text::Fields fields("  8\t 0   sda \n");
  std::string_view f;
  std::vector<std::string> got;
  while (fields.Next(f)) got.emplace_back(f);
  EXPECT_EQ(got, (std::vector<std::string>{"8", "0", "sda"}));
}

TEST(TextHelpers, ParseU64IsStrict) {
  EXPECT_EQ(text::ParseU64("0"), uint64_t{0});
  EXPECT_EQ(text::ParseU64("18446744073709551615"), kU64Max);
  EXPECT_EQ(text::ParseU64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(text::ParseU64(""), std::nullopt);
  EXPECT_EQ(text::ParseU64("-1"), std::nullopt);
  EXPECT_EQ(text::ParseU64("+1"), std::nullopt);
  EXPECT_EQ(text::ParseU64("12a"), std::nullopt);
  EXPECT_EQ(text::ParseU64(" 12"), std::nullopt);
  EXPECT_EQ(text::ParseU64("0x10"), std::nullopt);
}

TEST(TextHelpers, ParseI64IsStrict) {
  EXPECT_EQ(text::ParseI64("-1"), int64_t{-1});
  EXPECT_EQ(text::ParseI64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(text::ParseI64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(text::ParseI64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(text::ParseI64("-"), std::nullopt);
  EXPECT_EQ(text::ParseI64(""), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------------
// /proc/stat

constexpr std::string_view kProcStatModern =
    "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0\n"
    "cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0\n"
    "cpu1 1335535 39225 570588 13313895 3568 0 3447 0 39458 0\n"
    "intr 199292 23 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0\n"
    "ctxt 1990473\n"
    "btime 1062191376\n"
    "processes 2915\n"
    "procs_running 1\n"
    "procs_blocked 0\n"
    "softirq 12121874 0 1374312 2 393063 10 0 69 1265870 0 9088548\n";

TEST(ParseProcStat, ModernTenColumnKernel) {
  const auto stat = ParseProcStat(kProcStatModern);
  ASSERT_TRUE(stat.ok()) << stat.error();
  // busy = user + nice + system + irq + softirq + steal; guest (175628) is inside user already.
  const uint64_t busy = 10132153u + 290696u + 3084719u + 0u + 25195u + 0u;
  EXPECT_EQ(stat->all.busy, busy);
  EXPECT_EQ(stat->all.total, busy + 46828483u + 16683u);
  ASSERT_EQ(stat->per_cpu.size(), 2u);
  ASSERT_TRUE(stat->per_cpu[0].has_value());
  EXPECT_EQ(stat->per_cpu[0]->busy, 1393280u + 32966u + 572056u + 17875u);
  EXPECT_EQ(stat->per_cpu[0]->total, 1393280u + 32966u + 572056u + 17875u + 13343292u + 6130u);
  ASSERT_TRUE(stat->per_cpu[1].has_value());
  EXPECT_EQ(stat->per_cpu[1]->busy, 1335535u + 39225u + 570588u + 3447u);
  EXPECT_EQ(stat->boot_time_seconds, uint64_t{1062191376});
}

TEST(ParseProcStat, EachColumnLandsInTheRightBucket) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto stat = ParseProcStat("cpu 1 2 3 4 5 6 7 8 9 10\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->all.busy, uint64_t{1 + 2 + 3 + 6 + 7 + 8});
  EXPECT_EQ(stat->all.total, uint64_t{1 + 2 + 3 + 6 + 7 + 8 + 4 + 5});
  EXPECT_TRUE(stat->per_cpu.empty());
  EXPECT_EQ(stat->boot_time_seconds, std::nullopt);
}

TEST(ParseProcStat, OldFourColumnKernel) {
  // Linux 2.4: user nice system idle only.
  const auto stat = ParseProcStat("cpu  100 20 30 400\ncpu0 100 20 30 400\nbtime 5\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->all.busy, 150u);
  EXPECT_EQ(stat->all.total, 550u);
  ASSERT_EQ(stat->per_cpu.size(), 1u);
  EXPECT_EQ(stat->per_cpu[0]->total, 550u);
  EXPECT_EQ(stat->boot_time_seconds, uint64_t{5});
}

TEST(ParseProcStat, SevenAndEightColumnKernels) {
  const auto seven = ParseProcStat("cpu 1 2 3 4 5 6 7\n");  // 2.6.0: up to softirq
  ASSERT_TRUE(seven.ok()) << seven.error();
  EXPECT_EQ(seven->all.busy, uint64_t{1 + 2 + 3 + 6 + 7});
  EXPECT_EQ(seven->all.total, uint64_t{1 + 2 + 3 + 6 + 7 + 4 + 5});
  const auto eight = ParseProcStat("cpu 1 2 3 4 5 6 7 8\n");  // 2.6.11: steal
  ASSERT_TRUE(eight.ok()) << eight.error();
  EXPECT_EQ(eight->all.busy, uint64_t{1 + 2 + 3 + 6 + 7 + 8});
}

TEST(ParseProcStat, OfflineCpusLeaveGaps) {
  const auto stat = ParseProcStat(
      "cpu  40 0 0 400 0 0 0 0 0 0\n"
      "cpu0 10 0 0 100 0 0 0 0 0 0\n"
      "cpu1 10 0 0 100 0 0 0 0 0 0\n"
      "cpu3 20 0 0 200 0 0 0 0 0 0\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  ASSERT_EQ(stat->per_cpu.size(), 4u);
  EXPECT_TRUE(stat->per_cpu[0].has_value());
  EXPECT_TRUE(stat->per_cpu[1].has_value());
  EXPECT_FALSE(stat->per_cpu[2].has_value());
  ASSERT_TRUE(stat->per_cpu[3].has_value());
  EXPECT_EQ(stat->per_cpu[3]->busy, 20u);
  EXPECT_EQ(stat->per_cpu[3]->total, 220u);
}

TEST(ParseProcStat, CpuLinesInAnyOrder) {
  const auto stat = ParseProcStat("cpu2 2 0 0 2\ncpu 9 0 0 9\ncpu0 1 0 0 1\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  ASSERT_EQ(stat->per_cpu.size(), 3u);
  EXPECT_EQ(stat->per_cpu[0]->busy, 1u);
  EXPECT_FALSE(stat->per_cpu[1].has_value());
  EXPECT_EQ(stat->per_cpu[2]->busy, 2u);
  EXPECT_EQ(stat->all.busy, 9u);
}

TEST(ParseProcStat, ExtraColumnsOfFutureKernelsAreIgnored) {
  const auto stat = ParseProcStat("cpu 1 2 3 4 5 6 7 8 9 10 11 12\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->all.total, uint64_t{1 + 2 + 3 + 6 + 7 + 8 + 4 + 5});
}

TEST(ParseProcStat, LargestValuesThatFitAreAccepted) {
  const auto stat = ParseProcStat("cpu 18446744073709551614 0 0 1\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->all.busy, kU64Max - 1);
  EXPECT_EQ(stat->all.total, kU64Max);
}

TEST(ParseProcStat, BadBtimeIsNotReported) {
  const auto stat = ParseProcStat("cpu 1 2 3 4\nbtime abc\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->boot_time_seconds, std::nullopt);
  const auto empty = ParseProcStat("cpu 1 2 3 4\nbtime\n");
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->boot_time_seconds, std::nullopt);
}

TEST(ParseProcStat, Errors) {
  ExpectError(ParseProcStat(""), "no aggregate");
  ExpectError(ParseProcStat("\n\n"), "no aggregate");
  ExpectError(ParseProcStat("cpu0 1 2 3 4\nbtime 5\n"), "no aggregate");
  ExpectError(ParseProcStat("cpu 1 2 3\n"), "aggregate");  // fewer than four columns
  ExpectError(ParseProcStat("cpu\n"), "aggregate");
  ExpectError(ParseProcStat("cpu 1 2 x 4\n"), "aggregate");                     // not a number
  ExpectError(ParseProcStat("cpu 1 2 -3 4\n"), "aggregate");                    // negative
  ExpectError(ParseProcStat("cpu 18446744073709551616 0 0 0\n"), "aggregate");  // does not fit
  ExpectError(ParseProcStat("cpu 1 2 3 4\ncpu0 1 2\n"), "cpu0");
  ExpectError(ParseProcStat("cpu 1 2 3 4\ncpux 1 2 3 4\n"), "cpux");
  ExpectError(ParseProcStat("cpu 1 2 3 4\ncpu-1 1 2 3 4\n"), "cpu-1");
  ExpectError(ParseProcStat("cpu 1 2 3 4\ncpu65536 1 2 3 4\n"), "cpu65536");  // would allocate wildly
  ExpectError(ParseProcStat("cpu 1 2 3 4\ncpu99999999999999999999999 1 2 3 4\n"), "bad CPU name");
}

TEST(ParseProcStat, SumOverflowIsAnError) {
  ExpectError(ParseProcStat("cpu 18446744073709551615 1 0 0\n"));          // busy overflows
  ExpectError(ParseProcStat("cpu 18446744073709551615 0 0 1\n"));          // busy + idle overflows
  ExpectError(ParseProcStat("cpu 18446744073709551614 0 0 0 2\n"));        // + iowait overflows
  ExpectError(ParseProcStat("cpu 1 0 0 0 0 0 0 18446744073709551615\n"));  // steal overflows
}

TEST(ParseProcStat, HighestAllowedCpuIndex) {
  const auto stat = ParseProcStat("cpu 1 0 0 1\ncpu65535 1 0 0 1\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  ASSERT_EQ(stat->per_cpu.size(), 65536u);
  EXPECT_TRUE(stat->per_cpu[65535].has_value());
  EXPECT_FALSE(stat->per_cpu[0].has_value());
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/stat

TEST(ParsePidStat, CommWithSpacesAndParentheses) {
  const auto stat = ParsePidStat(
      "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 1000 0 0 0 150 30 0 0 20 0 7 0 123456 10000000 500 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->pid, 1234);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->utime_ticks, 150u);
  EXPECT_EQ(stat->stime_ticks, 30u);
  EXPECT_EQ(stat->num_threads, 7);
  EXPECT_EQ(stat->start_time_ticks, 123456u);
  EXPECT_EQ(stat->rss_pages, 500u);
}

TEST(ParsePidStat, ResidentPagesAreOptional) {
  // Cut after the start time: the line parses, without its resident pages.
  const auto cut = ParsePidStat("7 (x) S 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99\n");
  ASSERT_TRUE(cut.ok()) << cut.error();
  EXPECT_EQ(cut->start_time_ticks, 99u);
  EXPECT_FALSE(cut->rss_pages.has_value());
  // A value that is not a count is no value; the rest still parses.
  const auto bad = ParsePidStat("7 (x) S 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99 4096 -3 0\n");
  ASSERT_TRUE(bad.ok()) << bad.error();
  EXPECT_FALSE(bad->rss_pages.has_value());
}

TEST(ParsePidStat, CommThatLooksLikeFields) {
  // A hostile process can name itself ") R 99 9" (comm is at most 15 bytes): only the last ')' counts.
  const auto stat =
      ParsePidStat("77 () R 99 9) R 42 77 77 0 -1 4194304 5 0 0 0 11 22 0 0 20 0 3 0 999 0 0\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->pid, 77);
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->ppid, 42);
  EXPECT_EQ(stat->utime_ticks, 11u);
  EXPECT_EQ(stat->stime_ticks, 22u);
  EXPECT_EQ(stat->num_threads, 3);
  EXPECT_EQ(stat->start_time_ticks, 999u);
}

TEST(ParsePidStat, KernelThreadAndZombie) {
  const auto kthread = ParsePidStat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 12 0 0 20 0 1 0 2 0 0\n");
  ASSERT_TRUE(kthread.ok()) << kthread.error();
  EXPECT_EQ(kthread->ppid, 0);
  EXPECT_EQ(kthread->stime_ticks, 12u);
  EXPECT_EQ(kthread->start_time_ticks, 2u);

  const auto zombie =
      ParsePidStat("4321 (Web Content) Z 4000 4000 4000 0 -1 4227084 0 0 0 0 5 6 0 0 20 0 1 0 777");
  ASSERT_TRUE(zombie.ok()) << zombie.error();
  EXPECT_EQ(zombie->state, 'Z');
  EXPECT_EQ(zombie->ppid, 4000);
  EXPECT_EQ(zombie->start_time_ticks, 777u);  // no trailing newline, exactly 22 fields
}

TEST(ParsePidStat, HugeTickCountsFit) {
  const auto stat = ParsePidStat(
      "5 (x) S 1 5 5 0 -1 0 0 0 0 0 18446744073709551614 1 9223372036854775807 9223372036854775807 20 0 "
      "2147483647 0 18446744073709551615\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->utime_ticks, kU64Max - 1);
  EXPECT_EQ(stat->CpuTicks(), kU64Max);
  EXPECT_EQ(stat->children_cpu_ticks, kU64Max - 1);  // two INT64_MAX: parsed (whether true is not its job)
  EXPECT_EQ(stat->num_threads, 2147483647);
  EXPECT_EQ(stat->start_time_ticks, kU64Max);
}

TEST(ParsePidStat, CpuTimesThatCannotBeSummedAreErrors) {
  ExpectError(
      ParsePidStat("5 (x) S 1 5 5 0 -1 0 0 0 0 0 18446744073709551615 18446744073709551615 0 0 20 0 1 "
                   "0 100\n"),
      "overflows");
  ExpectError(ParsePidStat("5 (x) S 1 5 5 0 -1 0 0 0 0 0 1 1 -3 0 20 0 1 0 100\n"), "children cpu time");
  ExpectError(ParsePidStat("5 (x) S 1 5 5 0 -1 0 0 0 0 0 1 1 0 9223372036854775808 20 0 1 0 100\n"),
              "children cpu time");
}

TEST(ParsePidStat, Errors) {
  const std::string tail = " S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 100\n";
  ExpectError(ParsePidStat(""), "parentheses");
  ExpectError(ParsePidStat("1234 bash S 1"), "parentheses");
  ExpectError(ParsePidStat("1234 (bash S 1"), "parentheses");
  ExpectError(ParsePidStat("1234 bash) S 1"), "parentheses");
  ExpectError(ParsePidStat(")("), "parentheses");
  ExpectError(ParsePidStat("(x)" + tail), "pid");    // no pid
  ExpectError(ParsePidStat("0 (x)" + tail), "pid");  // pid 0
  ExpectError(ParsePidStat("-5 (x)" + tail), "pid");
  ExpectError(ParsePidStat("abc (x)" + tail), "pid");
  ExpectError(ParsePidStat("99999999999999999999 (x)" + tail), "pid");
  ExpectError(ParsePidStat("1 (x)"), "truncated");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0\n"), "truncated");  // 21 fields
  ExpectError(ParsePidStat("1 (x) SS 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 100\n"), "state");
  ExpectError(ParsePidStat("1 (x) S one 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 100\n"), "ppid");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 100\n"), "cpu time");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 18446744073709551616 0 0 20 0 1 0 100\n"),
              "cpu time");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 -1 0 100\n"), "thread");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 x 0 100\n"), "thread");
  ExpectError(ParsePidStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1e5\n"), "start time");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/statm

TEST(ParsePidStatm, ResidentIsTheSecondField) {
  const auto pages = ParsePidStatmResidentPages("2345 678 123 45 0 890 0\n");
  ASSERT_TRUE(pages.ok()) << pages.error();
  EXPECT_EQ(*pages, 678u);
  const auto two = ParsePidStatmResidentPages("1 18446744073709551615");
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_EQ(*two, kU64Max);
}

TEST(ParsePidStatm, Errors) {
  ExpectError(ParsePidStatmResidentPages(""), "truncated");
  ExpectError(ParsePidStatmResidentPages("\n"), "truncated");
  ExpectError(ParsePidStatmResidentPages("2345"), "truncated");
  ExpectError(ParsePidStatmResidentPages("2345 abc 1"), "resident");
  ExpectError(ParsePidStatmResidentPages("2345 -1 1"), "resident");
  ExpectError(ParsePidStatmResidentPages("2345 18446744073709551616 1"), "resident");
}

TEST(PagesToBytes, RefusesProductsThatOverflow) {
  EXPECT_EQ(PagesToBytes(678, 4096), std::optional<uint64_t>(678u * 4096u));
  EXPECT_EQ(PagesToBytes(kU64Max / 4096, 4096), std::optional<uint64_t>(kU64Max / 4096 * 4096));
  EXPECT_EQ(PagesToBytes(kU64Max / 4096 + 1, 4096), std::nullopt);
  EXPECT_EQ(PagesToBytes(kU64Max, 4096), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/schedstat

TEST(ParsePidSchedstat, RuntimeIsTheFirstField) {
  const auto ns = ParsePidSchedstatRuntimeNs("968590866 1267291 41\n");
  ASSERT_TRUE(ns.ok()) << ns.error();
  EXPECT_EQ(*ns, 968590866u);
  ExpectError(ParsePidSchedstatRuntimeNs(""), "3 fields");
  ExpectError(ParsePidSchedstatRuntimeNs("1 2"), "3 fields");
  ExpectError(ParsePidSchedstatRuntimeNs("1 2 3 4"), "3 fields");
  ExpectError(ParsePidSchedstatRuntimeNs("-1 2 3"), "bad field");
  ExpectError(ParsePidSchedstatRuntimeNs("1 2 x"), "bad field");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/task/TID/children

TEST(ParseChildrenList, KernelFormatWithTrailingSpace) {
  const auto pids = ParseChildrenList("123 456 789 ");
  ASSERT_TRUE(pids.ok()) << pids.error();
  EXPECT_EQ(*pids, (std::vector<long>{123, 456, 789}));
}

TEST(ParseChildrenList, EmptyAndWhitespaceOnly) {
  for (std::string_view text : {"", " ", "\n", " \n"}) {
    const auto pids = ParseChildrenList(text);
    ASSERT_TRUE(pids.ok()) << pids.error();
    EXPECT_TRUE(pids->empty());
  }
}

TEST(ParseChildrenList, SingleChildAndLimits) {
  const auto one = ParseChildrenList("4194304\n");
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(*one, (std::vector<long>{4194304}));
  const auto max = ParseChildrenList("2147483647");
  ASSERT_TRUE(max.ok()) << max.error();
  EXPECT_EQ(*max, (std::vector<long>{2147483647}));
}

TEST(ParseChildrenList, Errors) {
  ExpectError(ParseChildrenList("12 abc"), "abc");
  ExpectError(ParseChildrenList("0"), "'0'");
  ExpectError(ParseChildrenList("12 -5"), "-5");
  ExpectError(ParseChildrenList("2147483648"), "2147483648");
  ExpectError(ParseChildrenList("99999999999999999999999"), "bad pid");
  ExpectError(ParseChildrenList("12,13"), "12,13");
}

// ---------------------------------------------------------------------------------------------------------
// CPU lists

TEST(ParseCpuListCount, RangesAndSingles) {
  struct Case {
    std::string_view text;
    unsigned count;
  };
  for (const Case& c : {Case{"0-3,8,10-11", 7}, Case{"0", 1}, Case{"5", 1}, Case{"0-63", 64},
                        Case{"0-3\n", 4}, Case{" 2,4,6 \n", 3}, Case{"1-1", 1}, Case{"0-1048575", 1048576}}) {
    const auto count = ParseCpuListCount(c.text);
    ASSERT_TRUE(count.ok()) << c.text << ": " << count.error();
    EXPECT_EQ(*count, c.count) << c.text;
  }
}

TEST(ParseCpuListCount, Errors) {
  ExpectError(ParseCpuListCount(""), "empty");
  ExpectError(ParseCpuListCount("\n"), "empty");
  ExpectError(ParseCpuListCount("3-1"), "3-1");
  ExpectError(ParseCpuListCount("a"), "'a'");
  ExpectError(ParseCpuListCount("0-"), "0-");
  ExpectError(ParseCpuListCount("-3"), "-3");
  ExpectError(ParseCpuListCount("0,,2"), "bad CPU range");
  ExpectError(ParseCpuListCount("0-1048576"), "0-1048576");
  ExpectError(ParseCpuListCount("99999999999999999999"), "bad CPU range");
  ExpectError(ParseCpuListCount("0-3 8"), "bad CPU range");
  ExpectError(ParseCpuListCount("0-3,"), "bad CPU range");  // a trailing comma is no kernel's output
}

TEST(ParseCpuListCount, RepeatedCpusCountOnce) {
  EXPECT_EQ(*ParseCpuListCount("0,0,0"), 1u);
  EXPECT_EQ(*ParseCpuListCount("0-3,2-5"), 6u);
  EXPECT_EQ(*ParseCpuListCount("8-9,0-3,1"), 6u);
  EXPECT_EQ(*ParseCpuListCount("0-1048575,0-1048575"), 1u << 20);
  ExpectError(ParseCpuListCount("0-3:2"), "bad CPU range");  // stride syntax is a cpuset input form only
}

// ---------------------------------------------------------------------------------------------------------
// "Key:\tvalue" files

constexpr std::string_view kPidStatus =
    "Name:\tpython3\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t1234\n"
    "Pid:\t1234\n"
    "PPid:\t1\n"
    "VmRSS:\t  204800 kB\n"
    "Threads:\t7\n"
    "Cpus_allowed:\tff\n"
    "Cpus_allowed_list:\t0-7\n"
    "Mems_allowed:\t00000000,00000001\n"
    "Mems_allowed_list:\t0\n"
    "Empty:\n";

TEST(FindEnvironValue, FindsWholeNamesInNulSeparatedEntries) {
  using namespace std::string_literals;
  const std::string environ =
      "PATH=/usr/bin\0XCUDA_VISIBLE_DEVICES=9\0CUDA_VISIBLE_DEVICES=0,1\0EMPTY=\0LAST=end"s;
  EXPECT_EQ(FindEnvironValue(environ, "CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(FindEnvironValue(environ, "PATH"), "/usr/bin");
  EXPECT_EQ(FindEnvironValue(environ, "EMPTY"), "");
  EXPECT_EQ(FindEnvironValue(environ, "LAST"), "end");  // the last entry may lack its NUL
  EXPECT_FALSE(FindEnvironValue(environ, "CUDA"));
  EXPECT_FALSE(FindEnvironValue(environ, "MISSING"));
  EXPECT_FALSE(FindEnvironValue("", "PATH"));
  EXPECT_FALSE(FindEnvironValue("PATH"s, "PATH"));  // no '=': not a definition
}

TEST(FindColonField, FindsTrimmedValues) {
  EXPECT_EQ(FindColonField(kPidStatus, "Cpus_allowed_list"), "0-7");
  EXPECT_EQ(FindColonField(kPidStatus, "Cpus_allowed"), "ff");
  EXPECT_EQ(FindColonField(kPidStatus, "State"), "S (sleeping)");
  EXPECT_EQ(FindColonField(kPidStatus, "VmRSS"), "204800 kB");
  EXPECT_EQ(FindColonField(kPidStatus, "Pid"), "1234");
  EXPECT_EQ(FindColonField(kPidStatus, "PPid"), "1");
  EXPECT_EQ(FindColonField(kPidStatus, "Empty"), "");
}

TEST(FindColonField, AbsentOrPrefixKeys) {
  EXPECT_EQ(FindColonField(kPidStatus, "Cpus"), std::nullopt);
  EXPECT_EQ(FindColonField(kPidStatus, "Cpus_allowed_list_x"), std::nullopt);
  EXPECT_EQ(FindColonField(kPidStatus, "name"), std::nullopt);  // case matters
  EXPECT_EQ(FindColonField(kPidStatus, "Missing"), std::nullopt);
  EXPECT_EQ(FindColonField("", "Name"), std::nullopt);
  EXPECT_EQ(FindColonField("Name", "Name"), std::nullopt);
}

TEST(FindColonField, CpusAllowedListFeedsTheCpuListParser) {
  const auto list = FindColonField(kPidStatus, "Cpus_allowed_list");
  ASSERT_TRUE(list.has_value());
  const auto count = ParseCpuListCount(*list);
  ASSERT_TRUE(count.ok()) << count.error();
  EXPECT_EQ(*count, 8u);
}

// ---------------------------------------------------------------------------------------------------------
// /proc/meminfo

constexpr std::string_view kMeminfoModern =
    "MemTotal:       16318480 kB\n"
    "MemFree:         1234567 kB\n"
    "MemAvailable:    8765432 kB\n"
    "Buffers:          234567 kB\n"
    "Cached:          5432100 kB\n"
    "SwapCached:         1111 kB\n"
    "Active:          7654321 kB\n"
    "SwapTotal:       2097148 kB\n"
    "HugePages_Total:       0\n"
    "HugePages_Free:        0\n"
    "Hugepagesize:       2048 kB\n"
    "DirectMap1G:    13631488 kB\n";

TEST(ParseMeminfo, ModernKernel) {
  const auto info = ParseMeminfo(kMeminfoModern);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->total_bytes, uint64_t{16318480} * 1024);
  EXPECT_EQ(info->available_bytes, uint64_t{8765432} * 1024);
  EXPECT_EQ(info->free_bytes, uint64_t{1234567} * 1024);
  EXPECT_EQ(info->buffers_bytes, uint64_t{234567} * 1024);
  EXPECT_EQ(info->cached_bytes, uint64_t{5432100} * 1024);  // not SwapCached
  EXPECT_EQ(info->Available(), uint64_t{8765432} * 1024);   // MemAvailable wins over the estimate
}

TEST(ParseMeminfo, OldKernelWithoutMemAvailableFallsBack) {
  const auto info = ParseMeminfo(
      "MemTotal:        2048000 kB\n"
      "MemFree:          100000 kB\n"
      "Buffers:           20000 kB\n"
      "Cached:           300000 kB\n"
      "SwapCached:            0 kB\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->available_bytes, std::nullopt);
  EXPECT_EQ(info->Available(), uint64_t{100000 + 20000 + 300000} * 1024);
}

TEST(ParseMeminfo, EstimateNeedsAllThreeParts) {
  const auto info = ParseMeminfo("MemTotal: 2048000 kB\nMemFree: 100000 kB\nBuffers: 20000 kB\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->cached_bytes, std::nullopt);
  EXPECT_EQ(info->Available(), std::nullopt);
  const auto total_only = ParseMeminfo("MemTotal: 1 kB\n");
  ASSERT_TRUE(total_only.ok()) << total_only.error();
  EXPECT_EQ(total_only->Available(), std::nullopt);
}

TEST(ParseMeminfo, ZeroMemAvailableIsKeptApartFromAbsent) {
  const auto info =
      ParseMeminfo("MemTotal: 1000 kB\nMemAvailable: 0 kB\nMemFree: 5 kB\nBuffers: 5 kB\nCached: 5 kB\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->available_bytes, uint64_t{0});
  EXPECT_EQ(info->Available(), uint64_t{0});
}

TEST(ParseMeminfo, ValueWithoutUnitIsBytes) {
  const auto info = ParseMeminfo("MemTotal: 4096\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->total_bytes, 4096u);
}

TEST(ParseMeminfo, LargestKilobyteValueThatFits) {
  const auto info = ParseMeminfo("MemTotal: 18014398509481983 kB\n");  // (2^54 - 1) KiB
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->total_bytes, (uint64_t{1} << 54) * 1024 - 1024);
}

TEST(ParseMeminfo, Errors) {
  ExpectError(ParseMeminfo(""), "MemTotal");
  ExpectError(ParseMeminfo("MemFree: 100 kB\n"), "MemTotal");
  ExpectError(ParseMeminfo("MemTotal: 0 kB\n"), "MemTotal");
  ExpectError(ParseMeminfo("MemTotal:\n"), "missing");
  ExpectError(ParseMeminfo("MemTotal: abc kB\n"), "bad value");
  ExpectError(ParseMeminfo("MemTotal: -5 kB\n"), "bad value");
  ExpectError(ParseMeminfo("MemTotal: 5 MB\n"), "unit");
  ExpectError(ParseMeminfo("MemTotal: 18014398509481984 kB\n"), "range");  // 2^64 bytes
  ExpectError(ParseMeminfo("MemTotal: 18446744073709551616\n"), "bad value");
  ExpectError(ParseMeminfo("MemTotal: 100 kB\nMemAvailable: x kB\n"), "bad value");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/diskstats

TEST(ParseDiskstats, FourteenEighteenAndTwentyColumns) {
  const auto disks = ParseDiskstats(
      // 14 columns (before 4.18)
      "   8       0 sda 12345 678 987654 4321 2345 567 765432 8765 0 9876 13086\n"
      "   8       1 sda1 1234 67 98765 432 234 56 76543 876 0 987 1308\n"
      // 18 columns (4.18+: discards)
      " 259       0 nvme0n1 535321 12 27345632 81234 291020 104 18273648 98123 0 187001 179357 0 0 0 0\n"
      // 20 columns (5.5+: flushes)
      " 259       1 nvme0n1p1 1000 0 2048 10 20 0 4096 30 0 40 50 0 0 0 0 7 8\n"
      " 254       0 dm-0 5000 0 40000 100 6000 0 48000 200 0 300 300 0 0 0 0 0 0\n"
      "   7       0 loop0 52 0 2122 6 0 0 0 0 0 20 6 0 0 0 0 0 0\n");
  ASSERT_TRUE(disks.ok()) << disks.error();
  ASSERT_EQ(disks->size(), 6u);
  const auto& sda = (*disks)[0];
  EXPECT_EQ(sda.major, 8u);
  EXPECT_EQ(sda.minor, 0u);
  EXPECT_EQ(sda.name, "sda");
  EXPECT_EQ(sda.sectors_read, 987654u);
  EXPECT_EQ(sda.sectors_written, 765432u);
  EXPECT_EQ((*disks)[1].name, "sda1");
  EXPECT_EQ((*disks)[1].minor, 1u);
  const auto& nvme = (*disks)[2];
  EXPECT_EQ(nvme.major, 259u);
  EXPECT_EQ(nvme.name, "nvme0n1");
  EXPECT_EQ(nvme.sectors_read, 27345632u);
  EXPECT_EQ(nvme.sectors_written, 18273648u);
  const auto& part = (*disks)[3];
  EXPECT_EQ(part.name, "nvme0n1p1");
  EXPECT_EQ(part.minor, 1u);
  EXPECT_EQ(part.sectors_read, 2048u);
  EXPECT_EQ(part.sectors_written, 4096u);
  const auto& dm = (*disks)[4];
  EXPECT_EQ(dm.major, 254u);
  EXPECT_EQ(dm.name, "dm-0");
  EXPECT_EQ(dm.sectors_read, 40000u);
  EXPECT_EQ(dm.sectors_written, 48000u);
  EXPECT_EQ((*disks)[5].name, "loop0");
}

TEST(ParseDiskstats, EmptyAndBlankLines) {
  const auto none = ParseDiskstats("");
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_TRUE(none->empty());
  const auto blank = ParseDiskstats("\n   \n 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\n");
  ASSERT_TRUE(blank.ok()) << blank.error();
  ASSERT_EQ(blank->size(), 1u);
  EXPECT_EQ((*blank)[0].sectors_read, 3u);
  EXPECT_EQ((*blank)[0].sectors_written, 7u);
}

TEST(ParseDiskstats, ExactlyTenColumnsAndHugeCounters) {
  const auto disks = ParseDiskstats("8 16 sdb 1 2 18446744073709551615 4 5 6 18446744073709551615\n");
  ASSERT_TRUE(disks.ok()) << disks.error();
  ASSERT_EQ(disks->size(), 1u);
  EXPECT_EQ((*disks)[0].sectors_read, kU64Max);
  EXPECT_EQ((*disks)[0].sectors_written, kU64Max);
  const auto max_major = ParseDiskstats("4294967295 4294967295 x 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(max_major.ok()) << max_major.error();
  EXPECT_EQ((*max_major)[0].major, 4294967295u);
}

TEST(ParseDiskstats, Errors) {
  ExpectError(ParseDiskstats("8 0 sda 1 2 3\n"), "truncated");
  ExpectError(ParseDiskstats("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 1 sda1 1\n"), "truncated");
  ExpectError(ParseDiskstats("x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"), "sda");
  ExpectError(ParseDiskstats("8 y sda 1 2 3 4 5 6 7 8 9 10 11\n"), "sda");
  ExpectError(ParseDiskstats("8 0 sda 1 2 -3 4 5 6 7 8 9 10 11\n"), "sda");
  ExpectError(ParseDiskstats("8 0 sda 1 2 3 4 5 6 x 8 9 10 11\n"), "sda");
  ExpectError(ParseDiskstats("8 0 sda 1 2 18446744073709551616 4 5 6 7\n"), "sda");
  ExpectError(ParseDiskstats("4294967296 0 big 1 2 3 4 5 6 7\n"), "big");
  ExpectError(ParseDiskstats("8 4294967296 big 1 2 3 4 5 6 7\n"), "big");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/net/dev

constexpr std::string_view kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
    "carrier compressed\n"
    "    lo: 1234567    8910    0    0    0     0          0         0  1234567    8910    0    0    0     0"
    "       0          0\n"
    "  eth0: 987654321  123456    0    0    0     0          0      1234 123456789   98765    0    0    0    "
    " 0"
    "       0          0\n"
    "wlp2s0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0"
    "       0          0\n";

TEST(ParseNetDev, SkipsBothHeaderLines) {
  const auto devices = ParseNetDev(kNetDev);
  ASSERT_TRUE(devices.ok()) << devices.error();
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[0].name, "lo");
  EXPECT_EQ((*devices)[0].rx_bytes, 1234567u);
  EXPECT_EQ((*devices)[0].tx_bytes, 1234567u);
  EXPECT_EQ((*devices)[1].name, "eth0");
  EXPECT_EQ((*devices)[1].rx_bytes, 987654321u);
  EXPECT_EQ((*devices)[1].tx_bytes, 123456789u);
  EXPECT_EQ((*devices)[2].name, "wlp2s0");
  EXPECT_EQ((*devices)[2].rx_bytes, 0u);
  EXPECT_EQ((*devices)[2].tx_bytes, 0u);
}

TEST(ParseNetDev, NumberGluedToTheColon) {
  // Old kernels printed "%6s:%8lu", so a large rx count runs into the colon.
  const auto devices = ParseNetDev("  eth1:123456789012 5 0 0 0 0 0 0 42 6 0 0 0 0 0 0\n");
  ASSERT_TRUE(devices.ok()) << devices.error();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "eth1");
  EXPECT_EQ((*devices)[0].rx_bytes, 123456789012u);
  EXPECT_EQ((*devices)[0].tx_bytes, 42u);
}

TEST(ParseNetDev, HeadersOnlyAndEmpty) {
  const auto headers = ParseNetDev(
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
      "colls carrier compressed\n");
  ASSERT_TRUE(headers.ok()) << headers.error();
  EXPECT_TRUE(headers->empty());
  const auto empty = ParseNetDev("");
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_TRUE(empty->empty());
}

TEST(ParseNetDev, MaxCounters) {
  const auto devices =
      ParseNetDev("lo: 18446744073709551615 0 0 0 0 0 0 0 18446744073709551615 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(devices.ok()) << devices.error();
  EXPECT_EQ((*devices)[0].rx_bytes, kU64Max);
  EXPECT_EQ((*devices)[0].tx_bytes, kU64Max);
}

TEST(ParseNetDev, Errors) {
  ExpectError(ParseNetDev("  eth0: 1 2 3 4 5 6 7 8\n"), "eth0");  // tx bytes missing
  ExpectError(ParseNetDev("  eth0:\n"), "eth0");
  ExpectError(ParseNetDev("  eth0: x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"), "eth0");
  ExpectError(ParseNetDev("  eth0: 1 2 3 4 5 6 7 8 -9 10 11 12 13 14 15 16\n"), "eth0");
  ExpectError(ParseNetDev("  eth0: 18446744073709551616 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"), "eth0");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/mountinfo

constexpr std::string_view kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
    "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "25 22 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 "
    "rw,nsdelegate\n"
    "27 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup "
    "rw,xattr,name=systemd\n"
    "28 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup "
    "rw,cpu,cpuacct\n"
    "40 22 259:2 / /home rw,relatime shared:30 master:1 propagate_from:2 - ext4 /dev/nvme0n1p2 rw\n"
    "41 22 8:17 /data/My\\040Files /mnt/my\\040files rw,relatime - ext4 /dev/sdb1 rw\n"
    "42 22 254:0 / /var rw,relatime shared:31 - xfs /dev/mapper/vg-var rw,attr2,inode64\n"
    "43 22 0:44 / /srv/tab\\011dir rw - tmpfs tmp\\040fs rw\n"
    "44 22 0:45 / /back\\134slash\\012nl rw - tmpfs none rw\n"
    "45 22 0:46 /@home /btrfs rw,relatime shared:40 - btrfs /dev/nvme1n1p3 rw,ssd,subvolid=257\n";

TEST(ParseMountinfo, RealisticTable) {
  const auto mounts = ParseMountinfo(kMountinfo);
  ASSERT_TRUE(mounts.ok()) << mounts.error();
  ASSERT_EQ(mounts->size(), 12u);

  const Mount& root = (*mounts)[0];
  EXPECT_EQ(root.major, 8u);
  EXPECT_EQ(root.minor, 1u);
  EXPECT_EQ(root.root, "/");
  EXPECT_EQ(root.mount_point, "/");
  EXPECT_EQ(root.fs_type, "ext4");
  EXPECT_EQ(root.source, "/dev/sda1");
  EXPECT_EQ(root.super_options, "rw,errors=remount-ro");

  EXPECT_EQ((*mounts)[1].fs_type, "proc");
  EXPECT_EQ((*mounts)[1].major, 0u);
  EXPECT_EQ((*mounts)[1].minor, 21u);

  const Mount& unified = (*mounts)[3];
  EXPECT_EQ(unified.fs_type, "cgroup2");
  EXPECT_EQ(unified.mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(unified.super_options, "rw,nsdelegate");

  const Mount& systemd = (*mounts)[4];
  EXPECT_EQ(systemd.fs_type, "cgroup");
  EXPECT_EQ(systemd.super_options, "rw,xattr,name=systemd");
  EXPECT_EQ((*mounts)[5].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ((*mounts)[5].super_options, "rw,cpu,cpuacct");

  // Several optional fields before the separator.
  const Mount& home = (*mounts)[6];
  EXPECT_EQ(home.major, 259u);
  EXPECT_EQ(home.minor, 2u);
  EXPECT_EQ(home.mount_point, "/home");
  EXPECT_EQ(home.fs_type, "ext4");
  EXPECT_EQ(home.source, "/dev/nvme0n1p2");

  // A bind mount of a subdirectory, no optional fields, escaped spaces.
  const Mount& bind = (*mounts)[7];
  EXPECT_EQ(bind.root, "/data/My Files");
  EXPECT_EQ(bind.mount_point, "/mnt/my files");
  EXPECT_EQ(bind.source, "/dev/sdb1");
  EXPECT_EQ(bind.super_options, "rw");

  EXPECT_EQ((*mounts)[8].major, 254u);
  EXPECT_EQ((*mounts)[8].source, "/dev/mapper/vg-var");

  EXPECT_EQ((*mounts)[9].mount_point, "/srv/tab\tdir");
  EXPECT_EQ((*mounts)[9].source, "tmp fs");  // the source is unescaped too
  EXPECT_EQ((*mounts)[10].mount_point, "/back\\slash\nnl");

  const Mount& btrfs = (*mounts)[11];
  EXPECT_EQ(btrfs.major, 0u);
  EXPECT_EQ(btrfs.root, "/@home");
  EXPECT_EQ(btrfs.fs_type, "btrfs");
  EXPECT_EQ(btrfs.source, "/dev/nvme1n1p3");
}

TEST(ParseMountinfo, IncompleteOrInvalidEscapesAreKeptVerbatim) {
  const auto mounts = ParseMountinfo(
      "1 0 8:1 / /a\\04 rw - ext4 /dev/sda1 rw\n"
      "2 0 8:1 / /b\\999 rw - ext4 /dev/sda1 rw\n"
      "3 0 8:1 / /c\\ rw - ext4 /dev/sda1 rw\n"
      "4 0 8:1 / /d\\400x rw - ext4 /dev/sda1 rw\n"
      "5 0 8:1 / /e\\040 rw - ext4 /dev/sda1 rw\n");
  ASSERT_TRUE(mounts.ok()) << mounts.error();
  ASSERT_EQ(mounts->size(), 5u);
  EXPECT_EQ((*mounts)[0].mount_point, "/a\\04");
  EXPECT_EQ((*mounts)[1].mount_point, "/b\\999");
  EXPECT_EQ((*mounts)[2].mount_point, "/c\\");
  EXPECT_EQ((*mounts)[3].mount_point, "/d\\400x");  // > 0377 is not an octal byte
  EXPECT_EQ((*mounts)[4].mount_point, "/e ");       // escape at the very end of the field
}

TEST(ParseMountinfo, MissingSourceAndSuperOptionsAreTolerated) {
  const auto mounts = ParseMountinfo("1 0 0:5 / /x rw - fuse.sshfs\n");
  ASSERT_TRUE(mounts.ok()) << mounts.error();
  ASSERT_EQ(mounts->size(), 1u);
  EXPECT_EQ((*mounts)[0].fs_type, "fuse.sshfs");
  EXPECT_EQ((*mounts)[0].source, "");
  EXPECT_EQ((*mounts)[0].super_options, "");
}

TEST(ParseMountinfo, EmptyAndBlank) {
  const auto mounts = ParseMountinfo("\n \n");
  ASSERT_TRUE(mounts.ok()) << mounts.error();
  EXPECT_TRUE(mounts->empty());
}

TEST(ParseMountinfo, Errors) {
  ExpectError(ParseMountinfo("22 1 8:1 / /\n"), "truncated");
  ExpectError(ParseMountinfo("22 1 8:1 / / rw shared:1 ext4 /dev/sda1 rw\n"), "filesystem type");
  ExpectError(ParseMountinfo("22 1 8:1 / / rw -\n"), "filesystem type");
  ExpectError(ParseMountinfo("22 1 8-1 / / rw - ext4 /dev/sda1 rw\n"), "8-1");
  ExpectError(ParseMountinfo("22 1 x:1 / / rw - ext4 /dev/sda1 rw\n"), "x:1");
  ExpectError(ParseMountinfo("22 1 8: / / rw - ext4 /dev/sda1 rw\n"), "8:");
  ExpectError(ParseMountinfo("22 1 4294967296:0 / / rw - ext4 /dev/sda1 rw\n"), "4294967296:0");
  ExpectError(ParseMountinfo("22 1 8:1:2 / / rw - ext4 /dev/sda1 rw\n"), "8:1:2");
  // One bad line spoils the table.
  ExpectError(ParseMountinfo(std::string(kMountinfo) + "99 1 bad / /x rw - ext4 /dev/x rw\n"), "bad");
}

// ---------------------------------------------------------------------------------------------------------
// /proc/PID/cgroup

TEST(ParseProcPidCgroup, UnifiedV2) {
  const auto entries = ParseProcPidCgroup("0::/user.slice/user-1000.slice/session-2.scope\n");
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].hierarchy_id, 0);
  EXPECT_TRUE((*entries)[0].controllers.empty());
  EXPECT_EQ((*entries)[0].path, "/user.slice/user-1000.slice/session-2.scope");
}

TEST(ParseProcPidCgroup, ContainerRoot) {
  const auto entries = ParseProcPidCgroup("0::/\n");
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].path, "/");
}

TEST(ParseProcPidCgroup, V1WithNamedHierarchy) {
  const auto entries = ParseProcPidCgroup(
      "12:pids:/user.slice/user-1000.slice\n"
      "11:cpu,cpuacct:/docker/3f2a\n"
      "10:memory:/docker/3f2a\n"
      "4:net_cls,net_prio:/\n"
      "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n");
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 5u);
  EXPECT_EQ((*entries)[0].hierarchy_id, 12);
  EXPECT_EQ((*entries)[0].controllers, (std::vector<std::string>{"pids"}));
  EXPECT_EQ((*entries)[1].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ((*entries)[1].path, "/docker/3f2a");
  EXPECT_EQ((*entries)[2].controllers, (std::vector<std::string>{"memory"}));
  EXPECT_EQ((*entries)[3].controllers, (std::vector<std::string>{"net_cls", "net_prio"}));
  EXPECT_EQ((*entries)[3].path, "/");
  EXPECT_EQ((*entries)[4].hierarchy_id, 1);
  EXPECT_EQ((*entries)[4].controllers, (std::vector<std::string>{"name=systemd"}));
  EXPECT_EQ((*entries)[4].path, "/user.slice/user-1000.slice/session-2.scope");
}

TEST(ParseProcPidCgroup, HybridV1AndV2) {
  const auto entries = ParseProcPidCgroup(
      "10:memory:/user.slice\n"
      "1:name=systemd:/user.slice/session-1.scope\n"
      "0::/user.slice/session-1.scope\n");
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[2].hierarchy_id, 0);
  EXPECT_TRUE((*entries)[2].controllers.empty());
  EXPECT_EQ((*entries)[2].path, "/user.slice/session-1.scope");
}

TEST(ParseProcPidCgroup, PathsMayHoldColonsAndBlankLinesAreSkipped) {
  const auto entries = ParseProcPidCgroup("\n0::/system.slice/foo:bar.service\n\n");
  ASSERT_TRUE(entries.ok()) << entries.error();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].path, "/system.slice/foo:bar.service");
  const auto empty = ParseProcPidCgroup("");
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_TRUE(empty->empty());
}

TEST(ParseProcPidCgroup, Errors) {
  ExpectError(ParseProcPidCgroup("garbage\n"), "malformed");
  ExpectError(ParseProcPidCgroup("0:/\n"), "malformed");
  ExpectError(ParseProcPidCgroup("x::/\n"), "hierarchy id");
  ExpectError(ParseProcPidCgroup("::/\n"), "hierarchy id");
  ExpectError(ParseProcPidCgroup("-1::/\n"), "hierarchy id");
  ExpectError(ParseProcPidCgroup("99999999999999999999::/\n"), "hierarchy id");
  ExpectError(ParseProcPidCgroup("0::relative/path\n"), "absolute");
  ExpectError(ParseProcPidCgroup("0::\n"), "absolute");
  ExpectError(ParseProcPidCgroup("0::/ok\n1:memory:\n"), "absolute");
}

// ---------------------------------------------------------------------------------------------------------
// cpu.max

TEST(ParseCgroupCpuMax, Values) {
  struct Case {
    std::string_view text;
    std::optional<double> cpus;
  };
  for (const Case& c :
       {Case{"max 100000\n", std::nullopt}, Case{"max", std::nullopt}, Case{"400000 100000\n", 4.0},
        Case{"50000 100000", 0.5}, Case{"150000 100000", 1.5}, Case{"1000 1000000", 0.001}}) {
    const auto cpus = ParseCgroupCpuMax(c.text);
    ASSERT_TRUE(cpus.ok()) << c.text << ": " << cpus.error();
    ASSERT_EQ(cpus->has_value(), c.cpus.has_value()) << c.text;
    if (c.cpus) {
      EXPECT_DOUBLE_EQ(**cpus, *c.cpus) << c.text;
    }
  }
}

TEST(ParseCgroupCpuMax, Errors) {
  ExpectError(ParseCgroupCpuMax(""), "empty");
  ExpectError(ParseCgroupCpuMax("\n"), "empty");
  ExpectError(ParseCgroupCpuMax("100000"), "period");
  ExpectError(ParseCgroupCpuMax("abc 100000"), "abc 100000");
  ExpectError(ParseCgroupCpuMax("100000 abc"), "malformed");
  ExpectError(ParseCgroupCpuMax("100000 0"), "malformed");
  ExpectError(ParseCgroupCpuMax("-1 100000"), "malformed");  // v1's cfs_quota_us spelling is not v2's
  ExpectError(ParseCgroupCpuMax("18446744073709551616 100000"), "malformed");
  ExpectError(ParseCgroupCpuMax("100000 18446744073709551616"), "malformed");
}

// ---------------------------------------------------------------------------------------------------------
// memory.max / memory.limit_in_bytes

TEST(ParseCgroupMemoryLimit, Values) {
  struct Case {
    std::string_view text;
    std::optional<uint64_t> bytes;
  };
  for (const Case& c :
       {Case{"max\n", std::nullopt}, Case{"max", std::nullopt},
        Case{"9223372036854771712\n", std::nullopt},  // v1 unlimited (page-aligned LONG_MAX)
        Case{"9223372036854775807", std::nullopt}, Case{"4611686018427387904", std::nullopt},  // 2^62
        Case{"-1", std::nullopt}, Case{"18446744073709551615", std::nullopt},
        Case{"4611686018427387903", uint64_t{4611686018427387903}},
        Case{"8589934592\n", uint64_t{8589934592}}, Case{"  536870912  ", uint64_t{536870912}},
        Case{"4096", uint64_t{4096}}}) {
    const auto bytes = ParseCgroupMemoryLimit(c.text);
    ASSERT_TRUE(bytes.ok()) << c.text << ": " << bytes.error();
    EXPECT_EQ(*bytes, c.bytes) << c.text;
  }
}

TEST(ParseCgroupMemoryLimit, Errors) {
  ExpectError(ParseCgroupMemoryLimit("abc"), "abc");
  ExpectError(ParseCgroupMemoryLimit("-2"), "-2");
  ExpectError(ParseCgroupMemoryLimit("1.5G"), "1.5G");
  ExpectError(ParseCgroupMemoryLimit("8G"), "8G");
  ExpectError(ParseCgroupMemoryLimit("max 100"), "max 100");
  ExpectError(ParseCgroupMemoryLimit("18446744073709551616"), "18446744073709551616");
  ExpectError(ParseCgroupMemoryLimit("1 2"), "malformed");
}

// ---------------------------------------------------------------------------------------------------------
// "key value" files

constexpr std::string_view kCpuStat =
    "usage_usec 123456789\n"
    "user_usec 100000000\n"
    "system_usec 23456789\n"
    "nr_periods 5000\n"
    "nr_throttled 120\n"
    "throttled_usec 3456789\n"
    "nr_bursts 0\n"
    "burst_usec 0\n";

constexpr std::string_view kMemoryEvents =
    "low 0\n"
    "high 0\n"
    "max 12\n"
    "oom 3\n"
    "oom_kill 2\n"
    "oom_group_kill 0\n";

TEST(FindKeyedValue, CpuStat) {
  EXPECT_EQ(FindKeyedValue(kCpuStat, "nr_periods"), uint64_t{5000});
  EXPECT_EQ(FindKeyedValue(kCpuStat, "nr_throttled"), uint64_t{120});
  EXPECT_EQ(FindKeyedValue(kCpuStat, "throttled_usec"), uint64_t{3456789});
  EXPECT_EQ(FindKeyedValue(kCpuStat, "usage_usec"), uint64_t{123456789});
  EXPECT_EQ(FindKeyedValue(kCpuStat, "nr_bursts"), uint64_t{0});
  EXPECT_EQ(FindKeyedValue(kCpuStat, "nr"), std::nullopt);
  EXPECT_EQ(FindKeyedValue(kCpuStat, "usec"), std::nullopt);
}

TEST(FindKeyedValue, MemoryEventsDistinguishesOomFromOomKill) {
  EXPECT_EQ(FindKeyedValue(kMemoryEvents, "oom"), uint64_t{3});
  EXPECT_EQ(FindKeyedValue(kMemoryEvents, "oom_kill"), uint64_t{2});
  EXPECT_EQ(FindKeyedValue(kMemoryEvents, "oom_group_kill"), uint64_t{0});
  EXPECT_EQ(FindKeyedValue(kMemoryEvents, "max"), uint64_t{12});
}

TEST(FindKeyedValue, V1OomControl) {
  constexpr std::string_view text = "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n";
  EXPECT_EQ(FindKeyedValue(text, "oom_kill"), uint64_t{4});
  EXPECT_EQ(FindKeyedValue(text, "under_oom"), uint64_t{0});
}

TEST(FindKeyedValue, AbsentMalformedAndOverflowing) {
  EXPECT_EQ(FindKeyedValue("", "oom_kill"), std::nullopt);
  EXPECT_EQ(FindKeyedValue("oom_kill\n", "oom_kill"), std::nullopt);
  EXPECT_EQ(FindKeyedValue("oom_kill abc\n", "oom_kill"), std::nullopt);
  EXPECT_EQ(FindKeyedValue("oom_kill -1\n", "oom_kill"), std::nullopt);
  EXPECT_EQ(FindKeyedValue("oom_kill 18446744073709551616\n", "oom_kill"), std::nullopt);
  EXPECT_EQ(FindKeyedValue("oom_kill 18446744073709551615\n", "oom_kill"), kU64Max);
  EXPECT_EQ(FindKeyedValue("  oom_kill\t7  \n", "oom_kill"), uint64_t{7});
}

// ---------------------------------------------------------------------------------------------------------
// /proc/cpuinfo

std::string X86Block(int processor, int physical_id, int core_id) {
  return "processor\t: " + std::to_string(processor) +
         "\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 142\n"
         "model name\t: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz\nstepping\t: 10\ncpu MHz\t\t: 2112.000\n"
         "cache size\t: 8192 KB\nphysical id\t: " +
         std::to_string(physical_id) + "\nsiblings\t: 8\ncore id\t\t: " + std::to_string(core_id) +
         "\ncpu cores\t: 4\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep\n\n";
}

TEST(ParseCpuinfo, X86WithHyperThreads) {
  std::string text;
  int processor = 0;
  for (int thread = 0; thread < 2; ++thread) {
    for (int core = 0; core < 4; ++core) text += X86Block(processor++, 0, core);
  }
  const auto info = ParseCpuinfo(text);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz");
  EXPECT_EQ(info->logical_count, 8u);
  EXPECT_EQ(info->physical_count, 4u);
}

TEST(ParseCpuinfo, X86TwoSocketsWithTheSameCoreIds) {
  std::string text;
  for (int i = 0; i < 4; ++i) text += X86Block(i, i / 2, i % 2);  // (0,0) (0,1) (1,0) (1,1)
  const auto info = ParseCpuinfo(text);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->logical_count, 4u);
  EXPECT_EQ(info->physical_count, 4u);
}

TEST(ParseCpuinfo, LastBlockWithoutTrailingBlankLine) {
  std::string text = X86Block(0, 0, 0) + X86Block(1, 0, 1);
  text.resize(text.size() - 2);  // drop "\n\n"
  const auto info = ParseCpuinfo(text);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->logical_count, 2u);
  EXPECT_EQ(info->physical_count, 2u);
}

TEST(ParseCpuinfo, Arm64CoreIsNamedFromImplementerAndPart) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    text += "processor\t: " + std::to_string(i) +
            "\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\n"
            "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n";
  }
  text +=
      "Hardware\t: BCM2835\nRevision\t: c03111\nSerial\t\t: 10000000abcdef01\n"
      "Model\t\t: Raspberry Pi 4 Model B Rev 1.1\n";
  const auto info = ParseCpuinfo(text);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "ARM Cortex-A72");  // the core, ahead of the board's "Hardware"
  EXPECT_EQ(info->logical_count, 4u);
  EXPECT_EQ(info->physical_count, 0u);  // left to the sysfs topology reader

  // A part runmon does not know leaves the board's name.
  std::string unknown = text;
  for (size_t at = unknown.find("0xd08"); at != std::string::npos; at = unknown.find("0xd08")) {
    unknown.replace(at, 5, "0xfff");
  }
  EXPECT_EQ(ParseCpuinfo(unknown)->model_name, "BCM2835");
}

TEST(ParseCpuinfo, Arm64ServerWithOnlyImplementerAndPart) {
  // A Neoverse-N1 server (Graviton 2, Ampere Altra) and a Grace CPU: nothing but the Main ID register.
  const auto info = ParseCpuinfo(
      "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n"
      "processor\t: 1\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "ARM Neoverse-N1");
  EXPECT_EQ(info->logical_count, 2u);
  EXPECT_EQ(info->physical_count, 0u);
  EXPECT_EQ(ParseCpuinfo("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd4f\n")->model_name,
            "ARM Neoverse-V2");
  // Malformed numbers name nothing.
  for (const char* bad : {"0x", "41", "0x41zz", "0x123456789ab"}) {
    const std::string text = std::string("processor : 0\nCPU implementer : ") + bad + "\nCPU part : 0xd0c\n";
    EXPECT_EQ(ParseCpuinfo(text)->model_name, "") << bad;
  }
}

TEST(ParseCpuinfo, ArmV6WithoutPerCpuEntries) {
  // Old ARM kernels: one "Processor" line naming the CPU and no "processor : N" entries.
  const auto info = ParseCpuinfo(
      "Processor\t: ARMv6-compatible processor rev 7 (v6l)\nBogoMIPS\t: 697.95\n"
      "Features\t: swp half thumb fastmult vfp edsp java tls\nCPU implementer\t: 0x41\n"
      "CPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xb76\nCPU revision\t: 7\n\n"
      "Hardware\t: BCM2708\nRevision\t: 000e\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "ARMv6-compatible processor rev 7 (v6l)");
  EXPECT_EQ(info->logical_count, 0u);  // unknown here: the count comes from sysfs
}

TEST(ParseCpuinfo, LoongArchModelName) {
  std::string text = "system type\t\t: generic-loongson-machine\n\n";
  for (int i = 0; i < 4; ++i) {
    text += "processor\t\t: " + std::to_string(i) + "\npackage\t\t\t: 0\ncore\t\t\t: " + std::to_string(i) +
            "\nCPU Family\t\t: Loongson-64bit\nModel Name\t\t: Loongson-3A6000\nCPU MHz\t\t\t: 2000.00\n\n";
  }
  const auto info = ParseCpuinfo(text);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "Loongson-3A6000");
  EXPECT_EQ(info->logical_count, 4u);
  // Without "Model Name", the family.
  EXPECT_EQ(ParseCpuinfo("processor : 0\nCPU Family : Loongson-32bit\n")->model_name, "Loongson-32bit");
}

TEST(ParseCpuinfo, S390ProcessorLinesAndDeclaredCount) {
  const std::string head =
      "vendor_id       : IBM/S390\n# processors    : 3\nbogomips per cpu: 3241.00\n"
      "features\t: esan3 zarch stfle msa ldisp eimm dfp edat etf3eh highgprs te vx sie\n";
  std::string lines;
  for (int i = 0; i < 3; ++i) {
    lines += "processor " + std::to_string(i) + ": version = 00,  identification = 0A1B2C,  machine = 3906\n";
  }
  const auto info = ParseCpuinfo(head + lines + "\ncpu number      : 0\ncpu MHz dynamic : 5208\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->logical_count, 3u);
  EXPECT_EQ(info->model_name, "IBM/S390");
  // The declared count stands in when the per-CPU lines are not there.
  EXPECT_EQ(ParseCpuinfo(head)->logical_count, 3u);
}

TEST(ParseCpuinfo, SparcDeclaresActiveCpus) {
  const auto info = ParseCpuinfo(
      "cpu\t\t: TI UltraSparc IIi (Sabre)\nfpu\t\t: UltraSparc IIi integrated FPU\n"
      "pmu\t\t: ultra12\nprom\t\t: OBP 3.10.25 2000/01/17 21:26\ntype\t\t: sun4u\n"
      "ncpus probed\t: 4\nncpus active\t: 2\nD$ parity tl1\t: 0\nI$ parity tl1\t: 0\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "TI UltraSparc IIi (Sabre)");
  EXPECT_EQ(info->logical_count, 2u);
  EXPECT_EQ(ParseCpuinfo("ncpus active : 99999999999\n").ok(), false);  // not a count: nothing known
}

TEST(ParseCpuinfo, RiscVMicroarchitectureThenIsa) {
  const auto info = ParseCpuinfo(
      "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm\nmmu\t\t: sv39\n"
      "uarch\t\t: sifive,u74-mc\nmvendorid\t: 0x489\nmarchid\t\t: 0x8000000000000007\n\n"
      "processor\t: 1\nhart\t\t: 2\nisa\t\t: rv64imafdc_zicntr_zicsr_zifencei_zihpm\nmmu\t\t: sv39\n"
      "uarch\t\t: sifive,u74-mc\n\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "sifive,u74-mc");
  EXPECT_EQ(info->logical_count, 2u);
  EXPECT_EQ(ParseCpuinfo("processor : 0\nhart : 0\nisa : rv64imafdcsu\nmmu : sv48\n")->model_name,
            "rv64imafdcsu");
}

TEST(ParseCpuinfo, PowerPcCpuLine) {
  const auto info = ParseCpuinfo(
      "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 2166.000000MHz\n"
      "revision\t: 2.2 (pvr 004e 1202)\n\nprocessor\t: 1\ncpu\t\t: POWER9 (raw), altivec supported\n\n"
      "timebase\t: 512000000\nplatform\t: PowerNV\nmodel\t\t: 9006-22P\nmachine\t\t: PowerNV 9006-22P\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "POWER9 (raw), altivec supported");
  EXPECT_EQ(info->logical_count, 2u);
}

TEST(ParseCpuinfo, OldArm32ProcessorLineIsAModelNotACpu) {
  const auto info = ParseCpuinfo(
      "Processor\t: ARMv7 Processor rev 10 (v7l)\n"
      "processor\t: 0\nBogoMIPS\t: 1993.93\n\n"
      "processor\t: 1\nBogoMIPS\t: 1993.93\n\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "ARMv7 Processor rev 10 (v7l)");
  EXPECT_EQ(info->logical_count, 2u);
}

TEST(ParseCpuinfo, MipsCpuModel) {
  const auto info = ParseCpuinfo(
      "system type\t\t: MediaTek MT7621 ver:1 eco:3\nmachine\t\t\t: Ubiquiti EdgeRouter X\n"
      "processor\t\t: 0\ncpu model\t\t: MIPS 1004Kc V2.15\nBogoMIPS\t\t: 586.13\n\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "MIPS 1004Kc V2.15");
  EXPECT_EQ(info->logical_count, 1u);
}

TEST(ParseCpuinfo, ModelNameWinsOverFallbacks) {
  const auto info = ParseCpuinfo("processor : 0\nHardware : Board\nmodel name : Real CPU\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->model_name, "Real CPU");
}

TEST(ParseCpuinfo, Errors) {
  ExpectError(ParseCpuinfo(""), "no processor");
  ExpectError(ParseCpuinfo("\n\n"), "no processor");
  ExpectError(ParseCpuinfo("garbage without colons\n"), "no processor");
  ExpectError(ParseCpuinfo("model name :\nflags : fpu\n"), "no processor");  // an empty model is none
  // A model without any count is not an error: the count comes from sysfs.
  const auto model_only = ParseCpuinfo("model name : x\nHardware : y\n");
  ASSERT_TRUE(model_only.ok()) << model_only.error();
  EXPECT_EQ(model_only->model_name, "x");
  EXPECT_EQ(model_only->logical_count, 0u);
}

// ---------------------------------------------------------------------------------------------------------
// os-release

constexpr std::string_view kOsRelease =
    "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
    "NAME=\"Debian GNU/Linux\"\n"
    "VERSION_ID=\"12\"\n"
    "VERSION=\"12 (bookworm)\"\n"
    "VERSION_CODENAME=bookworm\n"
    "ID_LIKE=ubuntu\n"
    "ID=debian\n"
    "HOME_URL=\"https://www.debian.org/\"\n"
    "# ID=commented\n"
    "  BUILD_ID='rolling'  \n"
    "EMPTY=\n"
    "QUOTES=\"\"\n"
    "HALF=\"open\n";

TEST(FindOsReleaseValue, QuotedAndBareValues) {
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "PRETTY_NAME"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "NAME"), "Debian GNU/Linux");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "VERSION_ID"), "12");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "VERSION_CODENAME"), "bookworm");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "ID"), "debian");  // not ID_LIKE, not the comment
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "ID_LIKE"), "ubuntu");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "HOME_URL"), "https://www.debian.org/");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "BUILD_ID"), "rolling");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "EMPTY"), "");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "QUOTES"), "");
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "HALF"), "\"open");  // unbalanced quote kept
}

TEST(ParsePidStat, ReapedChildrenTime) {
  const auto stat = ParsePidStat(
      "42 (sh) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 250 50 20 0 1 0 5000 1000 10 18446744073709551615\n");
  ASSERT_TRUE(stat.ok()) << stat.error();
  EXPECT_EQ(stat->utime_ticks, 7u);
  EXPECT_EQ(stat->stime_ticks, 3u);
  EXPECT_EQ(stat->children_cpu_ticks, 300u);
  ExpectError(ParsePidStat("42 (sh) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 x 50 20 0 1 0 5000\n"), "children");
}

TEST(ParseLoadavgLastPid, Values) {
  EXPECT_EQ(*ParseLoadavgLastPid("0.00 0.01 0.05 1/123 4567\n"), 4567);
  EXPECT_EQ(*ParseLoadavgLastPid("12.50 8.00 4.25 17/2048 4194304"), 4194304);
  EXPECT_EQ(*ParseLoadavgLastPid("0.00 0.00 0.00 0/0 0\n"), 0);
}

TEST(ParseLoadavgLastPid, Errors) {
  ExpectError(ParseLoadavgLastPid(""), "5 fields");
  ExpectError(ParseLoadavgLastPid("0.00 0.01 0.05 1/123"), "5 fields");
  ExpectError(ParseLoadavgLastPid("0.00 0.01 0.05 1/123 4567 8"), "5 fields");
  ExpectError(ParseLoadavgLastPid("0.00 0.01 0.05 1/123 -4"), "bad last pid");
  ExpectError(ParseLoadavgLastPid("0.00 0.01 0.05 1/123 12a"), "bad last pid");
  ExpectError(ParseLoadavgLastPid("0.00 0.01 0.05 1/123 99999999999"), "bad last pid");
}

TEST(FindOsReleaseValue, ShellEscapesInsideDoubleQuotes) {
  EXPECT_EQ(*FindOsReleaseValue("PRETTY_NAME=\"Foo \\\"Bar\\\" \\$5 \\\\ok\"\n", "PRETTY_NAME"),
            "Foo \"Bar\" $5 \\ok");
  EXPECT_EQ(*FindOsReleaseValue("NAME='a \\\" b'\n", "NAME"), "a \\\" b");  // single quotes: literal
}

TEST(ParseCpuinfo, Ppc64ModelUnderCpu) {
  const auto info = ParseCpuinfo(
      "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n\n"
      "processor\t: 1\ncpu\t\t: POWER9 (raw), altivec supported\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->logical_count, 2u);
  EXPECT_EQ(info->model_name, "POWER9 (raw), altivec supported");
}

TEST(ParseCpuinfo, S390xProcessorLines) {
  const auto info = ParseCpuinfo(
      "vendor_id       : IBM/S390\n# processors    : 2\n"
      "processor 0: version = FF,  identification = 0133E8,  machine = 8561\n"
      "processor 1: version = FF,  identification = 0133E8,  machine = 8561\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->logical_count, 2u);
}

TEST(ParseMeminfo, FallbackEstimateDoesNotWrap) {
  const auto info = ParseMeminfo(
      "MemTotal: 16 kB\nMemFree: 18014398509481983 kB\nBuffers: 18014398509481983 kB\n"
      "Cached: 18014398509481983 kB\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_FALSE(info->Available().has_value());
}

TEST(FindOsReleaseValue, Absent) {
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "VARIANT"), std::nullopt);
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "VERSION_"), std::nullopt);
  EXPECT_EQ(FindOsReleaseValue(kOsRelease, "id"), std::nullopt);
  EXPECT_EQ(FindOsReleaseValue("", "ID"), std::nullopt);
  EXPECT_EQ(FindOsReleaseValue("ID", "ID"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------------
// Adversarial bytes: no parser may crash, read out of bounds or report success on garbage that has none of
// its format's required parts (run under ASan/UBSan in the test build).

TEST(AdversarialInput, GarbageNeverCrashesAndRequiredPartsAreEnforced) {
  const std::vector<std::string> inputs = {
      ""s,
      "\0"s,
      "\0\0\0\n\0"s,
      "("s,
      ")"s,
      "()"s,
      "(((((("s,
      "))))))"s,
      "\\"s,
      "\\0"s,
      ":"s,
      "::"s,
      "-"s,
      "- - - - - - -"s,
      std::string(100000, 'x'),
      std::string(100000, '9'),
      std::string(10000, '\n'),
      "\xff\xfe\x80\x81"s,
  };
  for (const auto& input : inputs) {
    SCOPED_TRACE(testing::PrintToString(input.substr(0, 20)));
    EXPECT_FALSE(ParseProcStat(input).ok());
    EXPECT_FALSE(ParsePidStat(input).ok());
    EXPECT_FALSE(ParsePidStatmResidentPages(input).ok());
    EXPECT_FALSE(ParseCpuListCount(input).ok());
    EXPECT_FALSE(ParseMeminfo(input).ok());
    EXPECT_FALSE(ParseCpuinfo(input).ok());
    EXPECT_FALSE(ParseCgroupCpuMax(input).ok());
    // These accept an empty table, so only crash-freedom and consistency are checked.
    const auto children = ParseChildrenList(input);
    if (children.ok()) {
      EXPECT_TRUE(children->empty());
    }
    const auto disks = ParseDiskstats(input);
    if (disks.ok()) {
      EXPECT_TRUE(disks->empty());
    }
    const auto net = ParseNetDev(input);
    if (net.ok()) {
      EXPECT_TRUE(net->empty());
    }
    const auto mounts = ParseMountinfo(input);
    if (mounts.ok()) {
      EXPECT_TRUE(mounts->empty());
    }
    const auto cgroups = ParseProcPidCgroup(input);
    if (cgroups.ok()) {
      EXPECT_TRUE(cgroups->empty());
    }
    (void)ParseCgroupMemoryLimit(input);
    EXPECT_EQ(FindKeyedValue(input, "oom_kill"), std::nullopt);
    EXPECT_EQ(FindOsReleaseValue(input, "ID"), std::nullopt);
    EXPECT_EQ(FindColonField(input, "Cpus_allowed_list"), std::nullopt);
  }
}

TEST(AdversarialInput, EveryPrefixOfRealFilesIsHandled) {
  // Truncation at every byte (a file read racing a writer, a short read) must never crash.
  const std::string pid_stat =
      "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 1000 0 0 0 150 30 0 0 20 0 7 0 123456 10000000 500\n";
  size_t ok_prefixes = 0;
  for (size_t n = 0; n <= pid_stat.size(); ++n) {
    if (ParsePidStat(std::string_view(pid_stat).substr(0, n)).ok()) ++ok_prefixes;
  }
  // Exactly the prefixes that reach into the 22nd field (start time "123456") parse.
  const size_t start_time = pid_stat.find(" 123456 ") + 1;
  EXPECT_EQ(ok_prefixes, pid_stat.size() - start_time);

  for (size_t n = 0; n <= kMountinfo.size(); ++n) (void)ParseMountinfo(kMountinfo.substr(0, n));
  for (size_t n = 0; n <= kNetDev.size(); ++n) (void)ParseNetDev(kNetDev.substr(0, n));
  for (size_t n = 0; n <= kProcStatModern.size(); ++n) (void)ParseProcStat(kProcStatModern.substr(0, n));
  for (size_t n = 0; n <= kMeminfoModern.size(); ++n) (void)ParseMeminfo(kMeminfoModern.substr(0, n));
  for (size_t n = 0; n <= kOsRelease.size(); ++n) (void)FindOsReleaseValue(kOsRelease.substr(0, n), "ID");
  // A prefix of /proc/stat that cuts the aggregate line before its fourth column is an error.
  EXPECT_FALSE(ParseProcStat(kProcStatModern.substr(0, 20)).ok());
}

}  // namespace
}  // namespace runmon
