// MediaLog: the image-file parser on W&B's objects and on hostile ones (paths out of files/, huge and
// wrong-typed fields), a history row's images in W&B's flattened form and the whole-object form, the
// series by step with its cap, and RunModel feeding it from history records of the fixture run
// (tests/fixtures/media, PNGs named as W&B names them), reading files only inside the run directory.
#include "runview/media_log.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runview/run_model.hpp"

namespace runmon::runview {
namespace {

namespace fs = std::filesystem;

const fs::path kRun = fs::path(RUNMON_FIXTURES_DIR) / "media" / "run-20261203_142000-media01";
constexpr const char* kSample0 = "media/images/samples_0_e40d23d80e21c838f507.png";
constexpr const char* kSample5 = "media/images/samples_5_585cae9f560701e69aa4.png";
constexpr const char* kMask5 = "media/images/masks_5_3769d2d11e5cfad7aa14.png";

// A history record as W&B's writer puts an image in it: one item per field, under nested keys.
wandb::Record ImageRecord(int64_t step, const std::vector<std::pair<std::string, std::string>>& images) {
  wandb::Record record;
  auto* history = record.mutable_history();
  history->mutable_step()->set_num(step);
  const auto add = [&](std::vector<std::string> key, std::string value) {
    auto* item = history->add_item();
    for (auto& part : key) item->add_nested_key(std::move(part));
    item->set_value_json(std::move(value));
  };
  add({"_step"}, std::to_string(step));
  for (const auto& [key, path] : images) {
    add({key, "_type"}, "\"image-file\"");
    add({key, "path"}, "\"" + path + "\"");
    add({key, "format"}, "\"png\"");
    add({key, "width"}, "8");
    add({key, "height"}, "8");
    add({key, "sha256"}, "\"e40d23d80e21c838f507\"");
    add({key, "size"}, "97");
  }
  auto* loss = history->add_item();
  loss->set_key("loss");
  loss->set_value_json("0.25");
  return record;
}

TEST(ParseImageFile, ReadsWandbsObject) {
  const auto image = ParseImageFile(
      R"({"_type":"image-file","path":"media/images/samples_7_0123.png","sha256":"0123","size":1234,)"
      R"("width":64,"height":32,"format":"png","caption":"a cat"})");
  ASSERT_TRUE(image.ok()) << image.error();
  EXPECT_EQ(image->path, "media/images/samples_7_0123.png");
  EXPECT_EQ(image->format, "png");
  EXPECT_EQ(image->caption, "a cat");
  EXPECT_EQ(image->width, 64u);
  EXPECT_EQ(image->height, 32u);
  EXPECT_EQ(image->size, 1234u);
  EXPECT_EQ(image->sha256, "0123");
  // The format from the name when not given; a JPEG's extension spelled as its file_type is ("jpeg").
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file","path":"media/images/x.JPG"})")->format, "jpeg");
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file","path":"media/images/x.png","format":"JPG"})")->format,
            "jpeg");
}

TEST(ParseImageFile, RefusesPathsOutOfFiles) {
  for (const std::string path : {"/etc/passwd", "../run.wandb", "media/../../x.png", "media/./x.png", "..",
                                 "media\\\\..\\\\x.png", "a\\u0000b.png", ""}) {
    const auto image = ParseImageFile(R"({"_type":"image-file","path":")" + path + "\"}");
    EXPECT_FALSE(image.ok()) << path;
  }
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file","path":"/etc/passwd"})").error(), "path is absolute");
  EXPECT_EQ(CheckMediaPath(std::string(kMaxMediaPathBytes + 1, 'a')).error(), "path is too long");
  EXPECT_TRUE(CheckMediaPath("media/images/..hidden..png").ok());  // dots inside a name are a name
}

TEST(ParseImageFile, RefusesWrongTypesAndHugeNumbers) {
  const auto error = [](const std::string& fields) {
    const auto image = ParseImageFile(R"({"_type":"image-file","path":"media/images/a.png",)" + fields + "}");
    return image.ok() ? std::string("ok") : image.error();
  };
  EXPECT_EQ(error(R"("width":-3)"), "width is not a whole number");
  EXPECT_EQ(error(R"("width":6.5)"), "width is not a whole number");
  EXPECT_EQ(error(R"("height":"64")"), "height is not a whole number");
  EXPECT_EQ(error(R"("height":99999999999999999999)"), "height is not a whole number");
  EXPECT_EQ(error(R"("width":4294967296)"), "width 4294967296 is out of range");
  EXPECT_NE(error(R"("size":1e400)"), "ok");
  EXPECT_EQ(error(R"("caption":7)"), "caption is not a string");
  EXPECT_EQ(error(R"("format":["png"])"), "format is not a string");
  EXPECT_EQ(error(R"("sha256":")" + std::string(200, 'f') + "\""), "sha256 is not a short string");
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file","path":7})").error(), "path is not a string");
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file"})").error(), "no path");
  EXPECT_EQ(ParseImageFile(R"({"_type":"video-file","path":"a.mp4"})").error(),
            "_type is not \"image-file\"");
  EXPECT_EQ(ParseImageFile(R"([1,2])").error(), "not an object");
  EXPECT_EQ(ParseImageFile(R"({"_type":"image-file","path":)").error(), "not JSON");
  const auto long_caption =
      ParseImageFile(R"({"_type":"image-file","path":"a.png","caption":")" + std::string(5000, 'c') + "\"}");
  ASSERT_TRUE(long_caption.ok());
  EXPECT_EQ(long_caption->caption.size(), kMaxCaptionBytes);
}

TEST(ParseRowImages, ReadsBothFormsAndLeavesMetricsAlone) {
  const std::vector<std::string> flat_type{"samples", "_type"};
  const std::vector<std::string> flat_path{"samples", "path"};
  const std::vector<std::string> model_size{"model", "size"};  // a metric named like an image field
  const std::vector<std::string> legacy{"legacy"};
  const std::vector<std::string> histogram{"weights"};
  const std::vector<std::string> grid_type{"grid", "_type"};
  const std::vector<std::string> grid_files{"grid", "filenames"};
  const std::vector<std::string> grid_captions{"grid", "captions"};
  std::vector<std::vector<std::string_view>> keys;
  for (const auto* key :
       {&flat_type, &flat_path, &model_size, &legacy, &histogram, &grid_type, &grid_files, &grid_captions}) {
    keys.emplace_back(key->begin(), key->end());
  }
  const std::vector<std::string_view> values{R"("image-file")",
                                             R"("media/images/samples_1_ab.png")",
                                             "12",
                                             R"({"_type":"image-file","path":"media/images/legacy_1.jpg"})",
                                             R"({"_type":"histogram","bins":[1,2]})",
                                             R"("images/separated")",
                                             R"(["media/images/g0.png","media/images/g1.png"])",
                                             R"(["zero"])"};
  std::vector<HistoryField> fields;
  for (size_t i = 0; i < keys.size(); ++i) fields.push_back({keys[i], values[i]});
  const RowImages row = ParseRowImages(fields);
  EXPECT_EQ(row.media_items, (std::vector<bool>{true, true, false, true, true, true, true, true}));
  ASSERT_EQ(row.images.size(), 4u);
  EXPECT_EQ(row.images[0].first, "legacy");
  EXPECT_EQ(row.images[0].second.format, "jpeg");
  EXPECT_EQ(row.images[1].first, "grid[0]");
  EXPECT_EQ(row.images[1].second.caption, "zero");
  EXPECT_EQ(row.images[2].first, "grid[1]");
  EXPECT_EQ(row.images[2].second.path, "media/images/g1.png");
  EXPECT_EQ(row.images[3].first, "samples");
  EXPECT_EQ(row.images[3].second.path, "media/images/samples_1_ab.png");
  EXPECT_TRUE(row.errors.empty());
}

TEST(ParseRowImages, NamesTheKeyOfARefusedImage) {
  const std::vector<std::string> type{"evil", "_type"};
  const std::vector<std::string> path{"evil", "path"};
  const std::vector<std::vector<std::string_view>> keys{{type.begin(), type.end()},
                                                        {path.begin(), path.end()}};
  const std::vector<HistoryField> fields{{keys[0], R"("image-file")"}, {keys[1], R"("../../../etc/shadow")"}};
  const RowImages row = ParseRowImages(fields);
  EXPECT_TRUE(row.images.empty());
  EXPECT_EQ(row.errors, (std::vector<std::string>{"evil: path has a . or .. part"}));
  EXPECT_EQ(row.media_items, (std::vector<bool>{true, true}));
}

TEST(ParseRowImages, TakesARepeatedTypeFieldAsRefused) {
  // W&B never repeats a field, but a row may: the last _type is a number, so there is no image.
  const std::vector<std::string> type{"samples", "_type"};
  const std::vector<std::string> path{"samples", "path"};
  const std::vector<std::vector<std::string_view>> keys{
      {type.begin(), type.end()}, {path.begin(), path.end()}, {type.begin(), type.end()}};
  const std::vector<HistoryField> fields{
      {keys[0], R"("image-file")"}, {keys[1], R"("media/a.png")"}, {keys[2], "0"}};
  const RowImages row = ParseRowImages(fields);
  EXPECT_TRUE(row.images.empty());
  EXPECT_EQ(row.errors, (std::vector<std::string>{"samples: _type is not an image type"}));
}

TEST(MediaLog, KeepsSeriesByStepNewestWinning) {
  MediaLog log;
  log.Add("img[10]", 3, {.path = "c.png"});
  log.Add("img[2]", 5, {.path = "b5.png"});
  log.Add("img[2]", 1, {.path = "b1.png"});
  log.Add("img[2]", 5, {.path = "b5-again.png"});
  EXPECT_EQ(log.keys(), (std::vector<std::string>{"img[2]", "img[10]"}));  // natural order
  ASSERT_EQ(log.Series("img[2]")->size(), 2u);
  EXPECT_EQ(log.Series("img[2]")->back().image.path, "b5-again.png");
  EXPECT_EQ(log.At("img[2]", 4)->image.path, "b1.png");
  EXPECT_EQ(log.At("img[2]", 0), nullptr);
  EXPECT_EQ(log.At("nope", 4), nullptr);
  EXPECT_EQ(log.Steps(), (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(log.size(), 3u);
  const uint64_t version = log.version();
  log.Add("img[2]", std::nan(""), {.path = "x.png"});
  EXPECT_EQ(log.rejected(), 1u);
  EXPECT_NE(log.version(), version);
  EXPECT_EQ(log.size(), 3u);
}

TEST(MediaLog, DropsTheOldestOverItsCap) {
  MediaLog log(3);
  log.Add("a", 0, {.path = "a0.png"});
  log.Add("b", 0, {.path = "b0.png"});
  log.Add("a", 1, {.path = "a1.png"});
  log.Add("a", 1, {.path = "a1-again.png"});  // a replacement holds no second place
  log.Add("a", 2, {.path = "a2.png"});
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.dropped(), 1u);
  EXPECT_EQ(log.Series("a")->front().image.path, "a1-again.png");
  log.Add("a", 3, {.path = "a3.png"});  // b's only image goes, and b with it
  EXPECT_EQ(log.keys(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(log.dropped(), 2u);
  EXPECT_LT(log.MemoryBytes(), 4096u);
}

TEST(MediaLog, RunModelReadsTheFixtureRunsImages) {
  RunModel model;
  model.set_run_directory(kRun);
  model.Ingest(ImageRecord(0, {{"samples", kSample0}}));
  model.Ingest(ImageRecord(5, {{"samples", kSample5}, {"masks", kMask5}}));
  const MediaLog& media = model.media();
  EXPECT_EQ(media.keys(), (std::vector<std::string>{"masks", "samples"}));
  ASSERT_EQ(media.Series("samples")->size(), 2u);
  EXPECT_EQ(media.Series("samples")->front().step, 0);
  EXPECT_EQ(media.At("samples", 5)->image.path, kSample5);
  EXPECT_EQ(media.At("masks", 5)->image.width, 8u);
  // The images are not metrics (nor skipped values); the loss beside them is.
  EXPECT_EQ(model.history_series().size(), 1u);
  EXPECT_EQ(model.history_series().count("loss"), 1u);
  EXPECT_EQ(model.skipped_values(), 0u);
  const auto bytes = media.ReadFile(media.At("samples", 0)->image, 1 << 20);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_TRUE(bytes->starts_with("\x89PNG"));
  EXPECT_EQ(
      media.ReadFile(media.At("samples", 0)->image, 10).error(),
      std::string(kSample0) + ": " + std::to_string(bytes->size()) + " bytes is over the 10-byte limit");
}

TEST(MediaLog, ReadsNothingOutsideTheRunDirectory) {
  const fs::path root = fs::temp_directory_path() / ("media_log_test." + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "run" / "files" / "media");
  std::ofstream(root / "secret.png") << "secret";
  std::ofstream(root / "run" / "run.wandb") << "log";
  fs::create_symlink(root / "secret.png", root / "run" / "files" / "media" / "out.png");
  fs::create_symlink("../../run.wandb", root / "run" / "files" / "media" / "in.png");
  fs::create_directory(root / "run" / "files" / "media" / "dir.png");
  MediaLog log;
  EXPECT_EQ(log.ReadFile({.path = "media/in.png"}, 100).error(), "the run directory is not known");
  log.set_run_directory(root / "run");
  EXPECT_EQ(log.ReadFile({.path = "media/out.png"}, 100).error(),
            "media/out.png: leads out of the run directory");
  EXPECT_EQ(*log.ReadFile({.path = "media/in.png"}, 100), "log");  // a link inside the run is followed
  EXPECT_EQ(log.ReadFile({.path = "media/dir.png"}, 100).error(), "media/dir.png: not a regular file");
  EXPECT_EQ(log.ReadFile({.path = "media/none.png"}, 100).error(),
            "media/none.png: No such file or directory");
  fs::remove_all(root);
}

}  // namespace
}  // namespace runmon::runview
