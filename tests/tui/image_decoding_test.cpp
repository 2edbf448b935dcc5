// Image decoding for the media pane (image_decoding.hpp): DecodeToFit's image and its errors; the worker's
// results in order, a job asked for twice queued once, a full queue dropping its oldest job, destruction
// while a decode is under way; and the pane with background decoding: an image over the inline limits says
// "decoding…" and is drawn at the first render after it is done, a small one at once, nothing decoded twice.
#include "tui/image_decoding.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"
#include "tui/media_pane.hpp"

namespace runmon::tui {
namespace {

using namespace std::chrono_literals;

// A decoder that holds every decode until released, and counts them; "bad" bytes fail.
std::atomic<bool> g_release{true};
std::atomic<int> g_decodes{0};
std::atomic<int> g_started{0};

// "large" bytes are a 2048x2048 image, which the limits are checked against first, as the real decoders do.
Result<media::Image> HeldDecoder(std::string_view bytes, const media::DecodeLimits& limits) {
  const int side = bytes.starts_with("large") ? 2048 : 0;
  if (uint64_t{4} * side * side > limits.max_pixel_bytes) return Error{"image 2048x2048 is over the limit"};
  ++g_started;
  while (!g_release.load()) std::this_thread::sleep_for(1ms);
  ++g_decodes;
  if (bytes.starts_with("bad")) return Error{"png: not an image"};
  media::Image image;
  image.width = side > 0 ? side : 64;
  image.height = side > 0 ? side : 32;
  image.rgba.assign(static_cast<size_t>(image.width) * image.height * 4, 255);
  return image;
}

class ImageDecodingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_release = true;
    g_decodes = 0;
    g_started = 0;
  }
  void TearDown() override { g_release = true; }
};

TEST_F(ImageDecodingTest, DecodeToFitResizesOrSaysWhy) {
  const DecodedImage fitted = DecodeToFit(&HeldDecoder, "png", 16, 4);
  ASSERT_TRUE(std::holds_alternative<media::Image>(fitted));
  // 64x32 into 16 columns and 4 rows (8 pixels high): 16x8, the aspect kept.
  EXPECT_EQ(std::get<media::Image>(fitted).width, 16);
  EXPECT_EQ(std::get<media::Image>(fitted).height, 8);
  const DecodedImage failed = DecodeToFit(&HeldDecoder, "bad", 16, 4);
  ASSERT_TRUE(std::holds_alternative<std::string>(failed));
  EXPECT_EQ(std::get<std::string>(failed), "png: not an image");
}

TEST_F(ImageDecodingTest, TheWorkerGivesResultsInOrderAndQueuesAJobOnce) {
  ImageDecodeWorker worker(&HeldDecoder);
  g_release = false;
  worker.Submit({"a", "png", 10, 5});
  worker.Submit({"b", "bad", 10, 5});
  worker.Submit({"a", "png", 10, 5});  // already queued
  EXPECT_TRUE(worker.busy());
  EXPECT_TRUE(worker.Pending("a"));
  EXPECT_FALSE(worker.Pending("c"));
  EXPECT_FALSE(worker.ready());
  g_release = true;
  ASSERT_TRUE(testing::WaitUntil([&] { return !worker.busy(); }, 10s));
  EXPECT_TRUE(worker.ready());
  EXPECT_TRUE(worker.Pending("a"));  // done, not taken: not queued again
  worker.Submit({"a", "png", 10, 5});
  const auto done = worker.TakeDone();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, "a");
  EXPECT_TRUE(std::holds_alternative<media::Image>(done[0].content));
  EXPECT_EQ(done[1].id, "b");
  EXPECT_TRUE(std::holds_alternative<std::string>(done[1].content));
  EXPECT_EQ(g_decodes.load(), 2);
  EXPECT_FALSE(worker.Pending("a"));
  EXPECT_TRUE(worker.TakeDone().empty());
}

TEST_F(ImageDecodingTest, AFullQueueDropsItsOldestJob) {
  ImageDecodeWorker worker(&HeldDecoder);
  g_release = false;
  worker.Submit({"first", "png", 4, 2});
  ASSERT_TRUE(testing::WaitUntil([&] { return g_started.load() == 1; }, 10s));  // under way, out of the queue
  worker.Submit({"probe", "png", 4, 2});
  for (size_t i = 0; i < ImageDecodeWorker::kMaxQueued; ++i) worker.Submit({std::to_string(i), "png", 4, 2});
  EXPECT_FALSE(worker.Pending("probe"));  // the oldest queued, dropped
  EXPECT_TRUE(worker.Pending("0"));
  EXPECT_TRUE(worker.Pending(std::to_string(ImageDecodeWorker::kMaxQueued - 1)));
  g_release = true;
  ASSERT_TRUE(testing::WaitUntil([&] { return !worker.busy(); }, 10s));
  const auto done = worker.TakeDone();
  EXPECT_EQ(done.size(), 1 + ImageDecodeWorker::kMaxQueued);
  EXPECT_EQ(done.front().id, "first");
}

TEST_F(ImageDecodingTest, DestructionWaitsForTheDecodeUnderWayAndDropsTheRest) {
  g_release = false;
  std::thread release([] {
    std::this_thread::sleep_for(50ms);
    g_release = true;
  });
  {
    ImageDecodeWorker worker(&HeldDecoder);
    worker.Submit({"a", "png", 4, 2});
    worker.Submit({"b", "png", 4, 2});
  }  // waits for "a" if it was under way, never starts "b"
  release.join();
  EXPECT_LE(g_decodes.load(), 1);
}

TEST_F(ImageDecodingTest, ThePaneDecodesLargeFilesInTheBackground) {
  const test::TempDir root("image_decoding_test");
  std::filesystem::create_directories(root.path() / "files" / "media");
  std::ofstream(root.path() / "files" / "media" / "large.png", std::ios::binary) << "large";
  std::ofstream(root.path() / "files" / "media" / "small.png", std::ios::binary) << "small";
  runview::MediaLog log;
  log.set_run_directory(root.path());
  log.Add("large", 1, {.path = "media/large.png", .format = "png"});
  log.Add("small", 1, {.path = "media/small.png", .format = "png"});
  MediaPane pane;
  pane.SetDecoder(&HeldDecoder);
  pane.SetBackgroundDecoding(true);
  pane.SetGrid(1, 2);
  g_release = false;
  const auto frame = [&] {
    CellGrid grid(80, 14);
    pane.Render(grid, grid.bounds(), &log, false);
    return grid.ToString();
  };
  // Held: the small one would block this render, so let it through once the large one is queued.
  std::thread release([] {
    std::this_thread::sleep_for(20ms);
    g_release = true;
  });
  std::string first = frame();
  release.join();
  EXPECT_NE(first.find("decoding…"), std::string::npos) << first;
  ASSERT_TRUE(testing::WaitUntil([&] { return pane.decoded_waiting(); }, 10s));
  EXPECT_FALSE(pane.decoding());
  const std::string second = frame();
  EXPECT_EQ(second.find("decoding…"), std::string::npos) << second;
  // Both tiles drawn: 2 x 14 columns of half blocks at least.
  size_t blocks = 0;
  for (size_t at = second.find("▀"); at != std::string::npos; at = second.find("▀", at + 1)) ++blocks;
  EXPECT_GT(blocks, 28u) << second;
  EXPECT_EQ(pane.decodes(), 2u);
  frame();
  EXPECT_EQ(g_decodes.load(), 2);  // from the cache since
}

}  // namespace
}  // namespace runmon::tui
