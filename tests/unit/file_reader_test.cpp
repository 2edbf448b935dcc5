// KeptOpenFile: whole files come back however large (multi-record kernel files arrive a page or a
// line-aligned part at a time and are read to the end), a file that appears later is picked up, a missing
// file is an error, and the process-wide descriptor count goes back down when files close.
#include "host/file_reader.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

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

}  // namespace
}  // namespace runmon
