// ConfigEditor (`runmon leet config`'s screen): what each key does to the draft and the mode, when quitting
// asks first, and golden frames at 80x24 (the table, the picker, the input line with an error, the unsaved
// prompt), a tall frame with every row and a frame too small for the editor.
#include "tui/config_editor.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/golden.hpp"

namespace runmon::tui {
namespace {

constexpr std::string_view kPath = "/home/ada/.config/runmon/leet.json";

std::filesystem::path Golden(const std::string& name) {
  return std::filesystem::path(RUNMON_FIXTURES_DIR) / "tui" / (name + ".txt");
}

ConfigEditorAction Press(ConfigEditor& editor, char32_t c) {
  return editor.Handle(CharacterEvent(c));
}
ConfigEditorAction Press(ConfigEditor& editor, KeyCode code) {
  return editor.Handle(KeyEvent(code));
}

// Moves the selection to `key`.
void Select(ConfigEditor& editor, std::string_view key) {
  Press(editor, KeyCode::kHome);
  while (LeetConfigFields()[editor.selected()].key != key) {
    const size_t before = editor.selected();
    Press(editor, KeyCode::kDown);
    ASSERT_NE(editor.selected(), before) << key << " is not a field";
  }
}

TEST(ConfigEditorTest, OpensOnTheFirstSettingWithTheFileAsRead) {
  LeetConfig config;
  config.metrics_grid.rows = 6;
  ConfigEditor editor(config, std::string(kPath));
  EXPECT_EQ(editor.selected(), 0u);
  EXPECT_FALSE(editor.dirty());
  test::ExpectGolden(Golden("config-editor-80x24"), editor.Render(80, 24).ToString());
}

TEST(ConfigEditorTest, UpDownAndTheirLettersMoveWithinTheTable) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  EXPECT_EQ(Press(editor, KeyCode::kUp), ConfigEditorAction::kRedraw);
  EXPECT_EQ(editor.selected(), 0u);
  Press(editor, KeyCode::kDown);
  Press(editor, U'j');
  EXPECT_EQ(editor.selected(), 2u);
  Press(editor, U'k');
  EXPECT_EQ(editor.selected(), 1u);
  Press(editor, KeyCode::kEnd);
  EXPECT_EQ(editor.selected(), LeetConfigFields().size() - 1);
  Press(editor, KeyCode::kDown);
  EXPECT_EQ(editor.selected(), LeetConfigFields().size() - 1);
  Press(editor, KeyCode::kPageUp);
  EXPECT_EQ(editor.selected(), LeetConfigFields().size() - 11);
  Press(editor, KeyCode::kWheelUp);
  EXPECT_EQ(editor.selected(), LeetConfigFields().size() - 12);
  // The selected row is always on the screen, and a position says which rows are.
  const std::string frame = editor.Render(80, 24).ToString();
  EXPECT_NE(frame.find(std::string(LeetConfigFields()[editor.selected()].label)), std::string::npos);
  EXPECT_NE(frame.find(" of 30"), std::string::npos);
  Press(editor, KeyCode::kEnd);
  EXPECT_NE(editor.Render(80, 24).ToString().find("Media visible"), std::string::npos);
}

TEST(ConfigEditorTest, LeftRightAdjustSpaceAndEnterToggleAndRResets) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  Select(editor, "metrics_grid.rows");
  Press(editor, KeyCode::kRight);
  Press(editor, U'l');
  EXPECT_EQ(editor.draft().metrics_grid.rows, 6);
  EXPECT_TRUE(editor.dirty());
  Press(editor, U'h');
  EXPECT_EQ(editor.draft().metrics_grid.rows, 5);
  Press(editor, U'r');
  EXPECT_EQ(editor.draft().metrics_grid.rows, 4);
  EXPECT_FALSE(editor.dirty());

  Select(editor, "chart_guides");
  Press(editor, KeyCode::kLeft);
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kHorizontal);
  Press(editor, KeyCode::kRight);
  Press(editor, KeyCode::kRight);
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kDots);

  Select(editor, "console_logs_visible");
  Press(editor, U' ');
  EXPECT_TRUE(editor.draft().console_logs_visible);
  Press(editor, KeyCode::kEnter);
  EXPECT_FALSE(editor.draft().console_logs_visible);
  Press(editor, KeyCode::kLeft);
  EXPECT_TRUE(editor.draft().console_logs_visible);

  Select(editor, "run_layout.logs");
  Press(editor, KeyCode::kRight);
  Press(editor, KeyCode::kRight);
  EXPECT_EQ(editor.draft().run_layout.logs, 0.1);
}

TEST(ConfigEditorTest, ThePickerAppliesOnEnterAndCancelsOnEscape) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  Select(editor, "chart_guides");
  Press(editor, KeyCode::kEnter);
  Press(editor, KeyCode::kDown);
  test::ExpectGolden(Golden("config-editor-choose-80x24"), editor.Render(80, 24).ToString());
  EXPECT_EQ(Press(editor, U's'), ConfigEditorAction::kRedraw);  // no saving from inside the picker
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kOff);
  Press(editor, KeyCode::kEscape);
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kOff);
  EXPECT_EQ(editor.Render(80, 24).ToString().find("Select Chart guides"), std::string::npos);
  Press(editor, U' ');  // space opens the picker too
  Press(editor, U'j');
  Press(editor, U'j');
  Press(editor, U'j');
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kHorizontal);
  Press(editor, KeyCode::kEnter);
  Press(editor, U'k');
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().chart_guides, ChartGuides::kDots);
}

TEST(ConfigEditorTest, TheInputLineTakesDigitsAndRefusesWhatIsOutOfRange) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  Select(editor, "system_grid.cols");
  Press(editor, KeyCode::kEnter);
  Press(editor, KeyCode::kBackspace);
  for (const char32_t c : {U'1', U'x', U'.', U'2'}) Press(editor, c);  // letters and points are not digits
  Press(editor, KeyCode::kEnter);
  test::ExpectGolden(Golden("config-editor-input-80x24"), editor.Render(80, 24).ToString());
  EXPECT_EQ(editor.draft().system_grid.cols, 2);
  Press(editor, KeyCode::kBackspace);
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().system_grid.cols, 1);
  EXPECT_EQ(editor.Render(80, 24).ToString().find("Edit System grid cols"), std::string::npos);

  Select(editor, "run_layout.left_sidebar");
  Press(editor, KeyCode::kEnter);
  Press(editor, KeyCode::kBackspace);
  for (const char32_t c : {U'0', U'.', U'3', U'5'}) Press(editor, c);
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().run_layout.left_sidebar, 0.35);
  Press(editor, KeyCode::kEnter);
  Press(editor, U'9');
  Press(editor, KeyCode::kEscape);
  EXPECT_EQ(editor.draft().run_layout.left_sidebar, 0.35);
}

TEST(ConfigEditorTest, SSavesAndQuittingAsksFirstWhenThereAreChanges) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  EXPECT_EQ(Press(editor, U's'), ConfigEditorAction::kSave);
  EXPECT_EQ(Press(editor, U'q'), ConfigEditorAction::kQuit);
  EXPECT_EQ(Press(editor, KeyCode::kEscape), ConfigEditorAction::kQuit);
  EXPECT_EQ(Press(editor, KeyCode::kCtrlC), ConfigEditorAction::kQuit);

  Select(editor, "media_visible");
  Press(editor, U' ');
  EXPECT_EQ(Press(editor, U'q'), ConfigEditorAction::kRedraw);
  test::ExpectGolden(Golden("config-editor-unsaved-80x24"), editor.Render(80, 24).ToString());
  Press(editor, KeyCode::kDown);  // another key takes the question back
  EXPECT_EQ(editor.Render(80, 24).ToString().find("Unsaved changes"), std::string::npos);
  EXPECT_EQ(Press(editor, KeyCode::kEscape), ConfigEditorAction::kRedraw);
  EXPECT_EQ(Press(editor, KeyCode::kEscape), ConfigEditorAction::kQuit);
  EXPECT_EQ(Press(editor, U's'), ConfigEditorAction::kSave);

  // From the input line: q asks, esc goes back to editing.
  Select(editor, "heartbeat_interval_seconds");
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(Press(editor, U'q'), ConfigEditorAction::kRedraw);
  EXPECT_NE(editor.Render(80, 24).ToString().find("esc goes back to editing"), std::string::npos);
  EXPECT_EQ(Press(editor, KeyCode::kCtrlC), ConfigEditorAction::kQuit);
}

TEST(ConfigEditorTest, AFailedSaveAndANoticeShowInTheStatusLine) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath), "symon_grid: [3,3] is not an object");
  EXPECT_NE(editor.Render(80, 24).ToString().find("symon_grid: [3,3] is not an object"), std::string::npos);
  editor.SaveFailed("/home/ada/.config/runmon/leet.json: Permission denied");
  EXPECT_NE(
      editor.Render(80, 24).ToString().find("Save failed: /home/ada/.config/runmon/leet.json: Permission"),
      std::string::npos);
  Press(editor, KeyCode::kDown);
  EXPECT_EQ(editor.Render(80, 24).ToString().find("Save failed"), std::string::npos);
}

TEST(ConfigEditorTest, ColourSchemesArePickedByName) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  Select(editor, "system_color_scheme");
  Press(editor, KeyCode::kEnter);
  const std::string frame = editor.Render(80, 24).ToString();
  for (const std::string_view name : kColorSchemeNames) {
    EXPECT_NE(frame.find(std::string(name)), std::string::npos) << name;
  }
  Press(editor, KeyCode::kDown);
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().system_color_scheme, FindColorScheme("wandb-vibe-20"));
  // A picker taller than the frame still fits it.
  Press(editor, KeyCode::kEnter);
  const CellGrid small = editor.Render(60, 12);
  EXPECT_EQ(small.width(), 60);
  EXPECT_EQ(small.height(), 12);
  Press(editor, KeyCode::kEnd);
  // The last one is in view (the list scrolled) and chosen.
  EXPECT_NE(editor.Render(60, 12).ToString().find("> cividis"), std::string::npos);
  Press(editor, KeyCode::kEnter);
  EXPECT_EQ(editor.draft().system_color_scheme, FindColorScheme("cividis"));
}

TEST(ConfigEditorTest, FramesFitTheirSize) {
  ConfigEditor editor(LeetConfig{}, std::string(kPath));
  const std::string tall = editor.Render(120, 40).ToString();
  for (const LeetConfigField& field : LeetConfigFields()) {
    EXPECT_NE(tall.find(std::string(field.label)), std::string::npos) << field.key;
  }
  EXPECT_EQ(tall.find(" of 30"), std::string::npos);  // every row shows: no position
  const CellGrid small = editor.Render(30, 10);
  EXPECT_EQ(small.width(), 30);
  EXPECT_NE(small.ToString().find("40x12 at least"), std::string::npos);
  for (const auto& [width, height] :
       {std::pair{40, 12}, std::pair{41, 13}, std::pair{1000, 1000}, std::pair{0, 0}}) {
    const CellGrid grid = editor.Render(width, height);
    EXPECT_EQ(grid.width(), width);
    EXPECT_EQ(grid.height(), height);
  }
  Select(editor, "startup_mode");
  Press(editor, KeyCode::kEnter);
  EXPECT_NE(editor.Render(40, 12).ToString().find("workspace_latest"), std::string::npos);
}

}  // namespace
}  // namespace runmon::tui
