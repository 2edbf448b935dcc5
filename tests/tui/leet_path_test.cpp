// What `runmon leet PATH` opens: a wandb directory, a run directory, a .wandb file, or nothing (./wandb
// with its latest run), and clear errors for the rest.
#include "tui/leet_path.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "support/run_log_builder.hpp"
#include "support/temp_dir.hpp"

namespace runmon::tui {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::WriteTestRun;

// Runs a callable with the working directory set to `dir`.
template <typename F>
auto InDirectory(const fs::path& dir, F f) {
  const auto previous = fs::current_path();
  fs::current_path(dir);
  auto result = f();
  fs::current_path(previous);
  return result;
}

TEST(ResolveLeetPath, EachKindOfPath) {
  TempDir dir("leet-ws");
  const fs::path wandb = dir.path() / "wandb";
  const auto older = WriteTestRun(wandb, "20260101_000000", "old", true);
  const auto newer = WriteTestRun(wandb, "20260102_000000", "new", true);

  auto workspace = ResolveLeetPath(wandb);
  ASSERT_TRUE(workspace.ok()) << workspace.error();
  EXPECT_EQ(workspace->mode, LeetMode::kWorkspace);
  EXPECT_EQ(workspace->wandb_dir, wandb);

  auto run_dir = ResolveLeetPath(older.parent_path());
  ASSERT_TRUE(run_dir.ok());
  EXPECT_EQ(run_dir->mode, LeetMode::kSingleRun);
  EXPECT_EQ(run_dir->run_log, older);

  auto file = ResolveLeetPath(newer);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->mode, LeetMode::kSingleRun);
  EXPECT_EQ(file->run_log, newer);

  // Nothing: ./wandb with its newest run open.
  auto none = InDirectory(dir.path(), [] { return ResolveLeetPath(std::nullopt); });
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none->mode, LeetMode::kSingleRun);
  EXPECT_EQ(fs::canonical(dir.path() / none->run_log), fs::canonical(newer));
}

// Without a PATH, a latest run that is not a run log opens the workspace (where it is listed as such)
// rather than refusing to start.
TEST(ResolveLeetPath, NoPathAndALatestRunThatIsNotARunLog) {
  TempDir dir("leet-ws");
  const fs::path wandb = dir.path() / "wandb";
  WriteTestRun(wandb, "20260101_000000", "old", true);
  const fs::path junk = wandb / "run-20260102_000000-junk" / "run-junk.wandb";
  fs::create_directories(junk.parent_path());
  std::ofstream(junk) << std::string(1000, 'x');
  auto none = InDirectory(dir.path(), [] { return ResolveLeetPath(std::nullopt); });
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_EQ(none->mode, LeetMode::kWorkspace);
  EXPECT_EQ(none->wandb_dir, "wandb");
}

TEST(ResolveLeetPath, ClearErrors) {
  TempDir dir("leet-ws");
  auto missing = ResolveLeetPath(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no such file"), std::string::npos);
  std::ofstream(dir.path() / "notes.txt") << "hello";
  auto text = ResolveLeetPath(dir.path() / "notes.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().find("not a run log"), std::string::npos);
  auto none = InDirectory(dir.path(), [] { return ResolveLeetPath(std::nullopt); });
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no ./wandb"), std::string::npos);
  // An empty wandb directory opens as an (empty) workspace.
  fs::create_directory(dir.path() / "wandb");
  auto empty = InDirectory(dir.path(), [] { return ResolveLeetPath(std::nullopt); });
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->mode, LeetMode::kWorkspace);
}

}  // namespace
}  // namespace runmon::tui
