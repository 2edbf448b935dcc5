// KeptOpenFile: whole files come back however large (multi-record kernel files arrive a page or a
// line-aligned part at a time and are read to the end), a file that appears later is picked up, a missing
// file is an error, and the process-wide descriptor count goes back down when files close. Only regular
// files are read: a FIFO (which would block the open), a device (/dev/zero would flood), a directory and
// an oversized file are refused at once with an error naming the path. ReadOptionalFile tells an absent
// file (nothing said) from a broken one (reported).
#include "host/file_reader.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "support/watchdog.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(KeptOpenFile, LargeRegularFileComesBackWhole) {
  TempDir dir;
  std::string content;
  for (int i = 0; i < 20000; ++i) content += "line " + std::to_string(i) + "\n";
  std::ofstream(dir.path() / "big") << content;
  KeptOpenFile file(dir.path() / "big");
  for (int round = 0; round < 2; ++round) {
    auto text = file.Read();
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(*text, content);
  }
}

TEST(KeptOpenFile, MultiRecordKernelFileIsReadToTheEnd) {
  // The kernel hands out /proc/self/maps a page at a time; it must come back whole, also into a buffer
  // that is already large (as a shared buffer becomes), and as often as it is read.
  const fs::path maps = fs::path("/proc/self/maps");
  if (!fs::exists(maps)) GTEST_SKIP() << "no procfs";
  const std::string expected_start = Slurp(maps).substr(0, 64);
  std::string buffer(1 << 16, '\0');
  KeptOpenFile file(maps);
  for (int round = 0; round < 3; ++round) {
    auto text = file.Read(buffer);
    ASSERT_TRUE(text.ok()) << text.error();
    const std::string again = Slurp(maps);
    // The map may change between two reads by a line or two, never by half: compare line counts loosely
    // and the size closely.
    EXPECT_GT(text->size(), 4096u) << "the test needs a file of several pages";
    EXPECT_NEAR(static_cast<double>(text->size()), static_cast<double>(again.size()), 2048.0);
    EXPECT_EQ(text->substr(0, 64), expected_start);
    EXPECT_EQ(text->back(), '\n');
  }
}

TEST(KeptOpenFile, ShortRecordFilesPastTheLimitAreReadToTheEnd) {
  // A short read ends a short-record file only while it holds at most kShortRecordBytes; past that the
  // file is read to the end like any multi-record file.
  const fs::path maps = fs::path("/proc/self/maps");
  if (!fs::exists(maps)) GTEST_SKIP() << "no procfs";
  std::string buffer(1 << 16, '\0');
  KeptOpenFile file(maps, Generated::kShortRecords);
  auto text = file.Read(buffer);
  ASSERT_TRUE(text.ok()) << text.error();
  EXPECT_GT(text->size(), 4096u);
  EXPECT_NEAR(static_cast<double>(text->size()), static_cast<double>(Slurp(maps).size()), 2048.0);

  TempDir dir;
  std::ofstream(dir.path() / "small") << "eth0: 1 2 3\n";
  KeptOpenFile small(dir.path() / "small", Generated::kShortRecords);
  EXPECT_EQ(*small.Read(buffer), "eth0: 1 2 3\n");
}

TEST(KeptOpenFile, WholeFilesStopAtTheFirstShortRead) {
  TempDir dir;
  std::ofstream(dir.path() / "small") << "42 7\n";
  KeptOpenFile file(dir.path() / "small", Generated::kWhole);
  auto text = file.Read();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "42 7\n");
}

TEST(KeptOpenFile, MissingFileIsAnErrorAndIsPickedUpLater) {
  TempDir dir;
  KeptOpenFile file(dir.path() / "later");
  auto missing = file.Read();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("later"), std::string::npos);
  EXPECT_TRUE(IsGoneErrno(file.last_errno()));
  std::ofstream(dir.path() / "later") << "now\n";
  auto present = file.Read();
  ASSERT_TRUE(present.ok()) << present.error();
  EXPECT_EQ(*present, "now\n");
  EXPECT_EQ(file.last_errno(), 0);
}

TEST(KeptOpenFile, DescriptorsAreCountedAndReleased) {
  TempDir dir;
  std::ofstream(dir.path() / "a") << "a";
  const size_t before = KeptDescriptorCount();
  {
    KeptOpenFile first(dir.path() / "a");
    KeptOpenFile second(dir.path() / "a");
    ASSERT_TRUE(first.Read().ok());
    ASSERT_TRUE(second.Read().ok());
    EXPECT_EQ(KeptDescriptorCount(), before + 2);
    KeptOpenFile moved(std::move(first));
    EXPECT_EQ(KeptDescriptorCount(), before + 2);
    second.Close();
    EXPECT_EQ(KeptDescriptorCount(), before + 1);
  }
  EXPECT_EQ(KeptDescriptorCount(), before);
  EXPECT_GT(KeptDescriptorBudget(), 0u);
}

TEST(ReadFileToString, DirectoryAndListing) {
  TempDir dir;
  std::ofstream(dir.path() / "x") << "1";
  fs::create_directory(dir.path() / "y");
  auto names = ListDirectory(dir.path());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 2u);
  EXPECT_FALSE(ListDirectory(dir.path() / "none").ok());
  EXPECT_FALSE(ReadFileToString(dir.path() / "none").ok());
  EXPECT_EQ(*ReadFileToString(dir.path() / "x"), "1");
}

// Expects `result` to be an error naming `path` and containing `reason`.
template <typename T>
void ExpectRefused(const Result<T>& result, const fs::path& path, std::string_view reason) {
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find(path.string()), std::string::npos) << result.error();
  EXPECT_NE(result.error().find(reason), std::string::npos) << result.error();
}

TEST(KeptOpenFile, SpecialFilesAreRefusedWithoutBlocking) {
  TempDir dir;
  const fs::path fifo = dir.path() / "meminfo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path zero = dir.path() / "stat";
  fs::create_symlink("/dev/zero", zero);
  const fs::path directory = dir.path() / "cpuinfo";
  fs::create_directory(directory);
  const size_t descriptors_before = KeptDescriptorCount();
  test::RunWithin(std::chrono::seconds(10), "reading special files", [&] {
    for (int round = 0; round < 2; ++round) {  // refused again on the next tick, still without blocking
      KeptOpenFile kept(fifo, Generated::kWhole);
      ExpectRefused(kept.Read(), fifo, "a FIFO, not a regular file");
      EXPECT_FALSE(IsGoneErrno(kept.last_errno()));
      ExpectRefused(KeptOpenFile(zero).Read(), zero, "a character device");
      ExpectRefused(KeptOpenFile(directory).Read(), directory, "a directory");
      ExpectRefused(ReadFileToString(fifo), fifo, "FIFO");
    }
    EXPECT_EQ(KeptDescriptorCount(), descriptors_before);  // nothing refused stays open
  });
}

TEST(KeptOpenFile, OversizedRegularFileIsRefusedBeforeReading) {
  TempDir dir;
  const fs::path big = dir.path() / "mountinfo";
  std::ofstream(big).close();
  fs::resize_file(big, kMaxFileBytes + 1);  // sparse: costs no disk
  ExpectRefused(KeptOpenFile(big).Read(), big, "larger than");
}

TEST(ReadOptionalFile, AbsentIsSilentBrokenIsReported) {
  TempDir dir;
  std::vector<std::string> reports;
  const ProblemReporter report = [&](const std::string& problem) { reports.push_back(problem); };
  EXPECT_EQ(ReadOptionalFile(dir.path() / "none", report), std::nullopt);
  EXPECT_TRUE(reports.empty());
  std::ofstream(dir.path() / "x") << "1\n";
  EXPECT_EQ(ReadOptionalFile(dir.path() / "x", report), "1\n");
  const fs::path fifo = dir.path() / "cpu.max";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::RunWithin(std::chrono::seconds(10), "reading a FIFO",
                  [&] { EXPECT_EQ(ReadOptionalFile(fifo, report), std::nullopt); });
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_NE(reports[0].find(fifo.string()), std::string::npos) << reports[0];
  EXPECT_EQ(ReadOptionalFile(fifo, nullptr), std::nullopt);  // a null reporter is allowed

  // Parsed: a malformed file is reported with its path and the parser's message.
  std::ofstream(dir.path() / "count") << "many\n";
  auto parse = [](std::string_view text) -> Result<int> {
    if (text != "7\n") return Error{"not seven"};
    return 7;
  };
  EXPECT_EQ(ReadOptionalParsed(dir.path() / "count", parse, report), std::nullopt);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1], (dir.path() / "count").string() + ": not seven");
  std::ofstream(dir.path() / "count") << "7\n";
  EXPECT_EQ(ReadOptionalParsed(dir.path() / "count", parse, report), 7);
}

}  // namespace
}  // namespace runmon
