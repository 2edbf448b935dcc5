// Run directories: W&B's run-id rules, names with the local start time, exclusive creation, the latest-run
// link replaced atomically (and left alone when it is a real directory), and FindRunLog's resolution of a
// file, a run directory or a directory of runs, with clear errors for everything else.
#include "runlog/run_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace runmon::runlog {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

void Touch(const fs::path& path) {
  std::ofstream(path) << "x";
}

TEST(RunId, GeneratedIdsAreEightLowercaseAlphanumerics) {
  std::set<std::string> seen;
  const std::regex shape("[a-z0-9]{8}");
  for (int i = 0; i < 200; ++i) {
    const std::string id = GenerateRunId();
    EXPECT_TRUE(std::regex_match(id, shape)) << id;
    EXPECT_TRUE(ValidateRunId(id).ok());
    seen.insert(id);
  }
  EXPECT_GT(seen.size(), 195u);
}

TEST(RunId, FollowsWandbRulesAndIsSafeAsAFileName) {
  for (const char* good : {"abc12345", "my-run_1", "Run.7", "é-ü", "x"}) {
    EXPECT_TRUE(ValidateRunId(good).ok()) << good;
  }
  for (const char* bad : {"", " lead", "trail ", "a:b", "a;b", "a,b", "a#b", "a?b", "a/b", "a'b", "a\\b", ".",
                          "..", "tab\there", "bell\a"}) {
    const Status status = ValidateRunId(bad);
    EXPECT_FALSE(status.ok()) << bad;
  }
  EXPECT_FALSE(ValidateRunId(std::string(129, 'a')).ok());
  EXPECT_TRUE(ValidateRunId(std::string(128, 'a')).ok());
  EXPECT_FALSE(ValidateRunId("bad\xff").ok());
}

TEST(Utf8, ValidatesAndRepairs) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // é € 😀
  EXPECT_FALSE(IsValidUtf8("\xC3"));                                 // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));                             // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));                         // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                     // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_EQ(ToValidUtf8("a\xFF"
                        "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ToValidUtf8("\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(ToValidUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xF0\x9F\x98")));
}

TEST(Utf8, AnInvalidByteIsFoundAfterAsciiOfAnyLength) {
  // ASCII is skipped eight bytes at a time: a bad byte at each place in and after those words.
  for (size_t at = 0; at < 40; ++at) {
    std::string text(at, 'a');
    EXPECT_TRUE(IsValidUtf8(text + "\xC3\xA9" + std::string(9, 'z')));
    EXPECT_FALSE(IsValidUtf8(text + "\xFF" + std::string(9, 'z'))) << at;
    EXPECT_EQ(ToValidUtf8(text + "\x80"), text + "\xEF\xBF\xBD");
  }
}

TEST(Utf8, AppendsEachLengthOfSequence) {
  std::string out;
  for (const char32_t code_point : {U'a', U'\u00E9', U'\u20AC', U'\U0001F600', U'\U0010FFFF'}) {
    AppendUtf8(out, code_point);
  }
  EXPECT_EQ(out, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
  EXPECT_TRUE(IsValidUtf8(out));
}

TEST(RunDirectoryName, UsesTheLocalStartTime) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  EXPECT_EQ(RunDirectoryName(1735689610.75, "abc12345"), "run-20250101_000010-abc12345");
  ::setenv("TZ", "Asia/Kolkata", 1);  // +05:30, no daylight saving
  ::tzset();
  const std::string name = RunDirectoryName(1735689610.75, "abc12345");
  ::unsetenv("TZ");
  ::tzset();
  if (fs::exists("/usr/share/zoneinfo/Asia/Kolkata")) {
    EXPECT_EQ(name, "run-20250101_053010-abc12345");
  }
}

TEST(CreateRunDirectory, CreatesParentsRunAndFilesAndNeverReusesADirectory) {
  TempDir tmp;
  const fs::path wandb = tmp.path() / "a" / "b" / "wandb";
  auto paths = CreateRunDirectory(wandb, 1735689610, "abc12345");
  ASSERT_TRUE(paths.ok()) << paths.error();
  EXPECT_TRUE(fs::is_directory(paths->directory));
  EXPECT_TRUE(fs::is_directory(paths->files));
  EXPECT_EQ(paths->log.filename(), "run-abc12345.wandb");
  EXPECT_EQ(paths->log.parent_path(), paths->directory);
  auto again = CreateRunDirectory(wandb, 1735689610, "abc12345");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("File exists"), std::string::npos) << again.error();
}

TEST(CreateRunDirectory, ReportsAPathThatCannotBeADirectory) {
  TempDir tmp;
  Touch(tmp.path() / "file");
  auto paths = CreateRunDirectory(tmp.path() / "file" / "wandb", 0, "abc12345");
  ASSERT_FALSE(paths.ok());
  EXPECT_NE(paths.error().find("cannot create"), std::string::npos) << paths.error();
}

TEST(LatestRunLink, PointsRelativelyAtTheNewestRunAndIsReplaced) {
  TempDir tmp;
  auto first = CreateRunDirectory(tmp.path(), 1000, "first000");
  auto second = CreateRunDirectory(tmp.path(), 2000, "second00");
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(UpdateLatestRunLink(tmp.path(), first->directory).ok());
  EXPECT_EQ(fs::read_symlink(tmp.path() / "latest-run"), first->directory.filename());
  ASSERT_TRUE(UpdateLatestRunLink(tmp.path(), second->directory).ok());
  EXPECT_EQ(fs::read_symlink(tmp.path() / "latest-run"), second->directory.filename());
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".latest-run")) << "temporary link left behind";
  }
}

TEST(LatestRunLink, ARealDirectoryInTheWayIsAnErrorNotADeletion) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "latest-run" / "keep");
  auto run = CreateRunDirectory(tmp.path(), 1000, "abc12345");
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(UpdateLatestRunLink(tmp.path(), run->directory).ok());
  EXPECT_TRUE(fs::is_directory(tmp.path() / "latest-run" / "keep"));
}

TEST(WriteFileAtomically, ReplacesWholeFiles) {
  TempDir tmp;
  const fs::path path = tmp.path() / "wandb-metadata.json";
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 1}\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "{}\n").ok());
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "{}\n");
  EXPECT_FALSE(WriteFileAtomically(tmp.path() / "missing" / "x.json", "{}").ok());
}

TEST(FindRunLog, ResolvesFilesRunDirectoriesAndDirectoriesOfRuns) {
  TempDir tmp;
  auto older = CreateRunDirectory(tmp.path(), 1000, "older000");
  auto newer = CreateRunDirectory(tmp.path(), 2000, "newer000");
  ASSERT_TRUE(older.ok() && newer.ok());
  Touch(older->log);
  Touch(newer->log);

  EXPECT_EQ(*FindRunLog(older->log), older->log);
  EXPECT_EQ(*FindRunLog(older->directory), older->log);
  // Without latest-run: the newest by the time stamp in the name.
  EXPECT_EQ(*FindRunLog(tmp.path()), newer->log);
  ASSERT_TRUE(UpdateLatestRunLink(tmp.path(), older->directory).ok());
  EXPECT_EQ(FindRunLog(tmp.path())->filename(), older->log.filename());
}

TEST(FindRunLog, ClearErrors) {
  TempDir tmp;
  auto missing = FindRunLog(tmp.path() / "nothing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no such file"), std::string::npos);

  auto empty = FindRunLog(tmp.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("no run log"), std::string::npos);

  Touch(tmp.path() / "run-a.wandb");
  Touch(tmp.path() / "run-b.wandb");
  auto two = FindRunLog(tmp.path());
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().find("2 run logs"), std::string::npos) << two.error();

  // A run directory that lost its log is skipped for an older complete one.
  TempDir runs;
  auto complete = CreateRunDirectory(runs.path(), 1000, "complete");
  auto broken = CreateRunDirectory(runs.path(), 2000, "broken00");
  ASSERT_TRUE(complete.ok() && broken.ok());
  Touch(complete->log);
  EXPECT_EQ(*FindRunLog(runs.path()), complete->log);
}

}  // namespace
}  // namespace runmon::runlog
