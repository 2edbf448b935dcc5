// The constant labels' file: rendered and parsed back, refused when it is not what runmon writes (not JSON,
// not an object, another format, a member that is not a string, too long), members it does not know
// ignored; stored at the first open, kept on a reopen with other labels, written again when damaged.
#include "remote_write/constant_labels.hpp"

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace runmon::remote_write {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ConstantLabels, RenderedLabelsParseBack) {
  const ConstantLabels labels{"node-7", "run \"a\"\n", "job-1", "3"};
  const std::string text = RenderConstantLabels(labels);
  EXPECT_NE(text.find("\"format\": 1"), std::string::npos) << text;
  const Result<ConstantLabels> parsed = ParseConstantLabels(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(*parsed, labels);
}

TEST(ConstantLabels, MissingMembersAreEmptyAndUnknownOnesIgnored) {
  const Result<ConstantLabels> parsed = ParseConstantLabels(R"({"format": 1, "host": "h", "later": [1, 2]})");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed->host, "h");
  EXPECT_EQ(parsed->run_id, "");
  EXPECT_EQ(parsed->node_rank, "");
}

TEST(ConstantLabels, RefusesWhatRunmonDoesNotWrite) {
  const std::string too_long =
      R"({"format": 1, "host": ")" + std::string(kMaxConstantLabelBytes + 1, 'h') + "\"}";
  const std::pair<std::string, std::string> cases[] = {
      {"", "not JSON"},
      {"{\"format\": 1", "not JSON"},
      {"[1]", "not a JSON object"},
      {R"({"host": "h"})", "not format 1"},
      {R"({"format": 2})", "not format 1"},
      {R"({"format": "1"})", "not format 1"},
      {R"({"format": 1, "run_id": 7})", "\"run_id\" is not a string"},
      {too_long, "\"host\" is 4097 bytes long"},
      {std::string(kMaxLabelsFileBytes + 1, ' '), "more than a labels file holds"},
      {"{\"format\": 1, \"host\": \"\xff\"}", "not JSON"},
  };
  for (const auto& [text, error] : cases) {
    const Result<ConstantLabels> parsed = ParseConstantLabels(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().find(error), std::string::npos) << parsed.error();
  }
}

TEST(ConstantLabels, TheFirstOpenStoresAndAReopenKeeps) {
  const runmon::test::TempDir dir("runmon-rw-labels");
  std::string damaged;
  const ConstantLabels first{"host-a", "run-1", "", "0"};
  Result<ConstantLabels> stored = LoadOrStoreConstantLabels(dir.path(), first, &damaged);
  ASSERT_TRUE(stored.ok()) << stored.error();
  EXPECT_EQ(*stored, first);
  EXPECT_TRUE(damaged.empty());
  EXPECT_EQ(ReadFile(dir.path() / kLabelsFileName), RenderConstantLabels(first));

  stored = LoadOrStoreConstantLabels(dir.path(), ConstantLabels{"host-b", "push", "j", "1"}, &damaged);
  ASSERT_TRUE(stored.ok()) << stored.error();
  EXPECT_EQ(*stored, first);
  EXPECT_TRUE(damaged.empty());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "labels.json.tmp"));
}

TEST(ConstantLabels, ADamagedFileIsReplacedAndSaid) {
  const runmon::test::TempDir dir("runmon-rw-labels");
  std::ofstream(dir.path() / kLabelsFileName) << "{\"format\": 1, \"host\": ";
  std::string damaged;
  const ConstantLabels labels{"h", "r", "j", "2"};
  const Result<ConstantLabels> stored = LoadOrStoreConstantLabels(dir.path(), labels, &damaged);
  ASSERT_TRUE(stored.ok()) << stored.error();
  EXPECT_EQ(*stored, labels);
  EXPECT_NE(damaged.find("labels.json: not JSON"), std::string::npos) << damaged;
  EXPECT_EQ(ReadFile(dir.path() / kLabelsFileName), RenderConstantLabels(labels));
}

TEST(ConstantLabels, AnUnwritableDirectoryIsAnError) {
  const runmon::test::TempDir dir("runmon-rw-labels");
  std::string damaged;
  const Result<ConstantLabels> stored = LoadOrStoreConstantLabels(dir.path() / "missing", {}, &damaged);
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.error().find("cannot create"), std::string::npos) << stored.error();
}

}  // namespace
}  // namespace runmon::remote_write
