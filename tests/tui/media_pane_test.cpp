// MediaPane: golden frames of the fixture run's images (tests/fixtures/media: two keys, three PNGs named as
// W&B names them) as half-block cells, with their xterm-256 colours; LEET's keys (scrubbing one key or all
// linked, selection, paging, fullscreen); files that are missing, corrupt or of a format not drawn say so
// in their tile; decoding happens once per image and size (the cache), and only for the tiles shown.
#include "tui/media_pane.hpp"

#include "media/image_decode.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/golden.hpp"

namespace runmon::tui {
namespace {

namespace fs = std::filesystem;

const fs::path kRun = fs::path(RUNMON_FIXTURES_DIR) / "media" / "run-20261203_142000-media01";

fs::path Golden(const std::string& name) {
  return fs::path(RUNMON_FIXTURES_DIR) / "tui" / (name + ".txt");
}

// A pane with the image module's decoder, linked in.
MediaPane DecodingPane() {
  MediaPane pane;
  pane.SetDecoder(&media::DecodeImage);
  return pane;
}

runview::MediaLog FixtureLog() {
  runview::MediaLog log;
  log.set_run_directory(kRun);
  log.Add("samples", 0, {.path = "media/images/samples_0_e40d23d80e21c838f507.png", .format = "png"});
  log.Add("samples", 5,
          {.path = "media/images/samples_5_585cae9f560701e69aa4.png", .format = "png", .caption = "checker"});
  log.Add("masks", 5, {.path = "media/images/masks_5_3769d2d11e5cfad7aa14.png", .format = "png"});
  return log;
}

std::string Frame(MediaPane& pane, const runview::MediaLog* log, bool focused, int width = 60,
                  int height = 14) {
  CellGrid grid(width, height);
  pane.Render(grid, grid.bounds(), log, focused);
  return grid.ToString();
}

// The colours of the half-block cells, row by row: runs of "fg/bg" ("-" for the terminal's own colour),
// each as count×colours.
std::string Colours(const CellGrid& grid) {
  std::ostringstream out;
  const auto colour = [](int16_t c) { return c == kDefaultColor ? std::string("-") : std::to_string(c); };
  for (int y = 0; y < grid.height(); ++y) {
    std::vector<std::pair<int, std::string>> runs;
    for (int x = 0; x < grid.width(); ++x) {
      const Cell& cell = grid.at(x, y);
      if (cell.code_point != U'▀' && cell.code_point != U'▄') continue;
      std::string cell_colours =
          (cell.code_point == U'▄' ? "▄" : "") + colour(cell.style.fg) + '/' + colour(cell.style.bg);
      if (!runs.empty() && runs.back().second == cell_colours) {
        ++runs.back().first;
      } else {
        runs.emplace_back(1, std::move(cell_colours));
      }
    }
    if (runs.empty()) continue;
    out << fmt::format("{:2}:", y);
    for (const auto& [count, cell_colours] : runs) out << ' ' << count << "×" << cell_colours;
    out << '\n';
  }
  return out.str();
}

InputEvent Key(KeyCode code) {
  return KeyEvent(code);
}

TEST(MediaPane, GoldenFramesOfTheFixtureRun) {
  const runview::MediaLog log = FixtureLog();
  MediaPane pane = DecodingPane();
  CellGrid grid(60, 14);
  pane.Render(grid, grid.bounds(), &log, true);
  test::ExpectGolden(Golden("media-60x14"), grid.ToString());
  test::ExpectGolden(Golden("media-60x14-colours"), Colours(grid));
  EXPECT_EQ(pane.status_label(), "Media: masks • step 5");
  EXPECT_EQ(pane.decodes(), 2u);
  // A second frame decodes nothing again.
  EXPECT_EQ(Frame(pane, &log, true), grid.ToString());
  EXPECT_EQ(pane.decodes(), 2u);
  EXPECT_GT(pane.cached_bytes(), 0u);
  EXPECT_LE(pane.cached_bytes(), MediaPane::kCacheBytes);
}

TEST(MediaPane, ScrubsOneKeyOrAllLinked) {
  const runview::MediaLog log = FixtureLog();
  MediaPane pane = DecodingPane();
  Frame(pane, &log, true);
  EXPECT_TRUE(pane.HandleKey(CharacterEvent(U'd')));  // select samples
  EXPECT_EQ(pane.selected(), 1u);
  Frame(pane, &log, true);
  EXPECT_EQ(pane.status_label(), "Media: samples • step 5 • checker");
  EXPECT_TRUE(pane.HandleKey(Key(KeyCode::kLeft)));
  CellGrid scrubbed(60, 14);
  pane.Render(scrubbed, scrubbed.bounds(), &log, true);
  EXPECT_EQ(pane.status_label(), "Media: samples • step 0");
  test::ExpectGolden(Golden("media-60x14-step0"), scrubbed.ToString());
  test::ExpectGolden(Golden("media-60x14-step0-colours"), Colours(scrubbed));  // the gradient, in the cube
  // Linked: every key at the shared step 0, where masks has no image yet.
  EXPECT_TRUE(pane.HandleKey(CharacterEvent(U'l')));
  const std::string linked = Frame(pane, &log, true);
  EXPECT_TRUE(pane.linked_scrub());
  EXPECT_NE(linked.find("no image at this step"), std::string::npos);
  EXPECT_NE(linked.find("Media • sync"), std::string::npos);
  pane.HandleKey(Key(KeyCode::kEnd));
  EXPECT_EQ(Frame(pane, &log, true).find("no image at this step"), std::string::npos);
  // Unlinking leaves each key at the shared step (the newest here), following again.
  pane.HandleKey(CharacterEvent(U'l'));
  Frame(pane, &log, true);
  EXPECT_EQ(pane.status_label(), "Media: samples • step 5 • checker");
  pane.HandleKey(Key(KeyCode::kHome));
  Frame(pane, &log, true);
  EXPECT_EQ(pane.status_label(), "Media: samples • step 0");
  pane.HandleKey(Key(KeyCode::kDown));  // +10, clamped to the newest
  Frame(pane, &log, true);
  EXPECT_EQ(pane.status_label(), "Media: samples • step 5 • checker");
  EXPECT_FALSE(pane.HandleKey(CharacterEvent(U'q')));
  EXPECT_FALSE(pane.HandleKey(Key(KeyCode::kEscape)));
}

TEST(MediaPane, PagesSelectsAndGoesFullscreen) {
  runview::MediaLog log = FixtureLog();
  log.Add("zeta", 1, {.path = "media/images/none.png", .format = "png"});
  MediaPane pane = DecodingPane();
  pane.SetGrid(1, 2);
  std::string frame = Frame(pane, &log, true);
  EXPECT_NE(frame.find("[1-2 of 3]"), std::string::npos);
  pane.HandleKey(Key(KeyCode::kPageDown));
  frame = Frame(pane, &log, true);
  EXPECT_NE(frame.find("[3-3 of 3]"), std::string::npos);
  EXPECT_EQ(pane.selected(), 2u);
  EXPECT_NE(frame.find("media/images/none.png:"), std::string::npos);
  EXPECT_NE(frame.find("such file or directory"), std::string::npos) << frame;
  pane.HandleKey(Key(KeyCode::kPageUp));
  Frame(pane, &log, true);
  EXPECT_EQ(pane.selected(), 0u);
  // A click selects the tile under it.
  EXPECT_TRUE(pane.Click(45, 6));
  EXPECT_EQ(pane.selected(), 1u);
  EXPECT_FALSE(pane.Click(1, 0));
  pane.HandleKey(Key(KeyCode::kEnter));
  frame = Frame(pane, &log, true, 60, 20);
  EXPECT_TRUE(pane.fullscreen());
  test::ExpectGolden(Golden("media-60x20-fullscreen"), frame);
  EXPECT_TRUE(pane.HandleKey(Key(KeyCode::kEscape)));
  EXPECT_FALSE(pane.fullscreen());
  // Narrow: one tile a row, the grid asked for or not.
  pane.SetGrid(2, 3);
  EXPECT_NE(Frame(pane, &log, false, 30, 12).find("[2-2 of 3]"), std::string::npos);
}

TEST(MediaPane, SaysWhyAnImageIsNotShown) {
  const fs::path root = fs::temp_directory_path() / ("media_pane_test." + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "files" / "media");
  std::ofstream(root / "files" / "media" / "corrupt.png", std::ios::binary) << "\x89PNG\r\n\x1a\nnot really";
  std::ofstream(root / "files" / "media" / "huge.png", std::ios::binary) << std::string(
      "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\1\x86\xa0\0\1\x86\xa0\x08\x02\0\0\0\x27\x30\x9c\x9f"
      "\0\0\0\0IDAT\x35\xaf\x06\x1e\0\0\0\0IEND\xae\x42\x60\x82",
      57);
  runview::MediaLog log;
  log.set_run_directory(root);
  log.Add("a corrupt", 1, {.path = "media/corrupt.png", .format = "png"});
  log.Add("b gif", 1, {.path = "media/anim.gif", .format = "gif"});
  log.Add("c huge", 1, {.path = "media/huge.png", .format = "png"});
  MediaPane pane = DecodingPane();
  pane.SetGrid(1, 3);
  const std::string frame = Frame(pane, &log, false, 90, 12);
  EXPECT_NE(frame.find("png: "), std::string::npos) << frame;
  EXPECT_NE(frame.find("gif not shown"), std::string::npos) << frame;
  EXPECT_NE(frame.find("image 100000x100000 is"), std::string::npos) << frame;
  EXPECT_EQ(pane.decodes(), 2u);  // the gif is never read
  // A file that could not be read is read again once the log changes; a corrupt one is not.
  Frame(pane, &log, false, 90, 12);
  EXPECT_EQ(pane.decodes(), 2u);
  fs::remove_all(root);
  EXPECT_EQ(Frame(pane, nullptr, false, 40, 6).find("no run open") != std::string::npos, true);
  runview::MediaLog empty;
  empty.NoteRejected("evil: path is absolute");
  EXPECT_NE(Frame(pane, &empty, false, 70, 6).find("no media (1 refused: evil: path is absolute)"),
            std::string::npos);
}

TEST(MediaPane, RereadsAMissingFileWhenTheLogMovesOn) {
  const fs::path root = fs::temp_directory_path() / ("media_pane_late." + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "files" / "media");
  runview::MediaLog log;
  log.set_run_directory(root);
  log.Add("late", 1, {.path = "media/late.png", .format = "png"});
  MediaPane pane = DecodingPane();
  EXPECT_NE(Frame(pane, &log, false).find("No such"), std::string::npos);
  fs::copy_file(kRun / "files" / "media" / "images" / "masks_5_3769d2d11e5cfad7aa14.png",
                root / "files" / "media" / "late.png");
  Frame(pane, &log, false);
  EXPECT_EQ(pane.decodes(), 1u);  // the log has not changed: the error stands
  log.Add("late", 2, {.path = "media/late.png", .format = "png"});
  EXPECT_NE(Frame(pane, &log, false).find("▀"), std::string::npos);
  EXPECT_EQ(pane.decodes(), 2u);
  pane.Reset();
  EXPECT_EQ(pane.cached_bytes(), 0u);
  fs::remove_all(root);
}

}  // namespace
}  // namespace runmon::tui
