// OutputLogFile: files/output.log as W&B writes it: finished lines appended once, open lines written
// and rewritten in place (only when something changed), every line final after Close.
#include "console/output_log_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.hpp"

namespace runmon::console {
namespace {

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(OutputLogFile, WritesLinesAndRewritesTheOpenOnes) {
  test::TempDir dir;
  const auto path = dir.path() / "output.log";
  auto file = OutputLogFile::Create(path);
  ASSERT_TRUE(file) << file.error();
  TerminalLines lines(2);
  lines.Write(ConsoleStream::kStdout, "epoch 1\n 10%", 0);
  ASSERT_TRUE((*file)->Update(lines));
  EXPECT_EQ(Read(path), "epoch 1\n 10%\n");
  lines.Write(ConsoleStream::kStdout, "\r100%\n", 0);
  lines.Write(ConsoleStream::kStderr, "warning\n", 0);
  ASSERT_TRUE((*file)->Update(lines));
  EXPECT_EQ(Read(path), "epoch 1\n100%\nwarning\n");
  lines.Write(ConsoleStream::kStdout, "a", 0);
  ASSERT_TRUE((*file)->Close(lines));
  EXPECT_EQ(Read(path), "epoch 1\n100%\nwarning\na\n");
}

TEST(OutputLogFile, OnlyChangesAreWritten) {
  test::TempDir dir;
  const auto path = dir.path() / "output.log";
  auto file = OutputLogFile::Create(path);
  ASSERT_TRUE(file);
  TerminalLines lines(8);
  lines.Write(ConsoleStream::kStdout, "state", 0);
  ASSERT_TRUE((*file)->Update(lines));
  // Written behind the writer's back: an update with no change leaves the file alone.
  std::filesystem::resize_file(path, 2);
  ASSERT_TRUE((*file)->Update(lines));
  EXPECT_EQ(Read(path), "st");
  lines.Write(ConsoleStream::kStdout, "\rSTATE", 0);
  ASSERT_TRUE((*file)->Update(lines));
  EXPECT_EQ(Read(path), "STATE\n");
}

TEST(OutputLogFile, AnUnwritableFileIsAnError) {
  EXPECT_FALSE(OutputLogFile::Create("/nonexistent-dir/output.log"));
}

}  // namespace
}  // namespace runmon::console
