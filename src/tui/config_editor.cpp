// The config editor's keys and frames. See config_editor.hpp. The frame: a title (with * while there are
// unsaved changes) and the file's path, the table of settings (scrolled to keep the selected row in view;
// values changed since the file was read are bold, the selected row reversed and marked ›), then a status
// line, the selected setting's description and key, and the key hints. A picker or an input line opens as a
// box over the middle. Below 40x12 a message takes the place of the frame.
#include "tui/config_editor.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace runmon::tui {
namespace {

constexpr int kMinWidth = 40;
constexpr int kMinHeight = 12;
constexpr int kMargin = 2;
constexpr int kColumnGap = 3;
constexpr size_t kMaxInput = 12;
constexpr size_t kPageStep = 10;  // page up/down in rows (the frame's height is not known here)

constexpr Style kBoldStyle{kDefaultColor, kDefaultColor, kBold};
constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kSelectedStyle{kDefaultColor, kDefaultColor, kReverse};
constexpr Style kStatusStyle{214, kDefaultColor, kBold};
constexpr Style kErrorStyle{196, kDefaultColor, kBold};

constexpr std::string_view kQuitBrowse = "Unsaved changes: q or esc again discards them, s saves and quits.";
constexpr std::string_view kQuitEditing = "Unsaved changes: q again discards them, esc goes back to editing.";
constexpr std::string_view kHints =
    "↑/↓ select · enter edit · ←/→ adjust · r default · s save & quit · q quit";

bool IsCharacter(const InputEvent& event, char32_t c) {
  return event.code == KeyCode::kCharacter && event.character == c;
}

int LabelWidth() {
  int width = 0;
  for (const LeetConfigField& field : LeetConfigFields()) width = std::max(width, DisplayWidth(field.label));
  return width;
}

// A box of `width` x `height` in the middle of the grid, cleared; its inner area (one cell of padding).
Rect CentredBox(CellGrid& grid, int width, int height, std::string_view title = {}) {
  width = std::min(width, grid.width() - 2);
  height = std::min(height, grid.height() - 2);
  const Rect box{(grid.width() - width) / 2, (grid.height() - height) / 2, width, height};
  grid.Fill(box, U' ');
  grid.DrawBox(box, {}, title);
  return {box.x + 2, box.y + 1, box.width - 4, box.height - 2};
}

}  // namespace

ConfigEditor::ConfigEditor(LeetConfig config, std::string path, std::string notice)
    : original_(config), draft_(std::move(config)), path_(std::move(path)), status_(std::move(notice)) {}

const LeetConfigField& ConfigEditor::field() const {
  return LeetConfigFields()[selected_];
}

void ConfigEditor::SaveFailed(const std::string& message) {
  status_ = "Save failed: " + message;
}

ConfigEditorAction ConfigEditor::Handle(const InputEvent& event) {
  if (event.code == KeyCode::kResize) return ConfigEditorAction::kRedraw;
  if (event.code == KeyCode::kCtrlC || IsCharacter(event, U'q') ||
      (event.code == KeyCode::kEscape && mode_ == Mode::kBrowse)) {
    return Quit();
  }
  if (mode_ == Mode::kBrowse && IsCharacter(event, U's')) return ConfigEditorAction::kSave;
  if (event.code == KeyCode::kNone) return ConfigEditorAction::kNone;
  // Any other key takes back a quit that was waiting for its confirmation, and clears the status line.
  confirm_quit_ = false;
  status_.clear();
  switch (mode_) {
    case Mode::kChoose:
      return HandleChoose(event);
    case Mode::kType:
      return HandleType(event);
    case Mode::kBrowse:
      break;
  }
  return HandleBrowse(event);
}

ConfigEditorAction ConfigEditor::Quit() {
  if (dirty() && !confirm_quit_) {
    confirm_quit_ = true;
    status_ = mode_ == Mode::kBrowse ? kQuitBrowse : kQuitEditing;
    return ConfigEditorAction::kRedraw;
  }
  return ConfigEditorAction::kQuit;
}

ConfigEditorAction ConfigEditor::HandleBrowse(const InputEvent& event) {
  const size_t last = LeetConfigFields().size() - 1;
  switch (event.code) {
    case KeyCode::kUp:
    case KeyCode::kWheelUp:
      selected_ = selected_ == 0 ? 0 : selected_ - 1;
      return ConfigEditorAction::kRedraw;
    case KeyCode::kDown:
    case KeyCode::kWheelDown:
      selected_ = std::min(selected_ + 1, last);
      return ConfigEditorAction::kRedraw;
    case KeyCode::kPageUp:
      selected_ = selected_ < kPageStep ? 0 : selected_ - kPageStep;
      return ConfigEditorAction::kRedraw;
    case KeyCode::kPageDown:
      selected_ = std::min(selected_ + kPageStep, last);
      return ConfigEditorAction::kRedraw;
    case KeyCode::kHome:
      selected_ = 0;
      return ConfigEditorAction::kRedraw;
    case KeyCode::kEnd:
      selected_ = last;
      return ConfigEditorAction::kRedraw;
    case KeyCode::kLeft:
      AdjustLeetConfigValue(field(), -1, draft_);
      return ConfigEditorAction::kRedraw;
    case KeyCode::kRight:
      AdjustLeetConfigValue(field(), 1, draft_);
      return ConfigEditorAction::kRedraw;
    case KeyCode::kEnter:
      return Activate();
    case KeyCode::kCharacter:
      switch (event.character) {
        case U'k':
          return HandleBrowse(KeyEvent(KeyCode::kUp));
        case U'j':
          return HandleBrowse(KeyEvent(KeyCode::kDown));
        case U'h':
          return HandleBrowse(KeyEvent(KeyCode::kLeft));
        case U'l':
          return HandleBrowse(KeyEvent(KeyCode::kRight));
        case U' ':
          if (field().kind == LeetFieldKind::kBool) return HandleBrowse(KeyEvent(KeyCode::kRight));
          return Activate();
        case U'r':
          ResetLeetConfigValue(field(), draft_);
          return ConfigEditorAction::kRedraw;
        default:
          return ConfigEditorAction::kRedraw;  // the status line may have been cleared
      }
    default:
      return ConfigEditorAction::kRedraw;
  }
}

ConfigEditorAction ConfigEditor::Activate() {
  const LeetConfigField& selected = field();
  const double value = selected.get(draft_);
  switch (selected.kind) {
    case LeetFieldKind::kBool:
      AdjustLeetConfigValue(selected, 1, draft_);
      break;
    case LeetFieldKind::kEnum:
      mode_ = Mode::kChoose;
      choice_ = static_cast<size_t>(value);
      break;
    case LeetFieldKind::kInt:
    case LeetFieldKind::kFraction:
      mode_ = Mode::kType;
      input_ = value == 0 ? "0" : FormatLeetConfigValue(selected, draft_);
      input_error_.clear();
      break;
  }
  return ConfigEditorAction::kRedraw;
}

ConfigEditorAction ConfigEditor::HandleChoose(const InputEvent& event) {
  const size_t count = field().options.size();
  if (event.code == KeyCode::kEscape) {
    mode_ = Mode::kBrowse;
  } else if (event.code == KeyCode::kEnter) {
    field().set(draft_, static_cast<double>(choice_));
    mode_ = Mode::kBrowse;
  } else if (event.code == KeyCode::kUp || IsCharacter(event, U'k')) {
    choice_ = choice_ == 0 ? 0 : choice_ - 1;
  } else if (event.code == KeyCode::kDown || IsCharacter(event, U'j')) {
    choice_ = std::min(choice_ + 1, count - 1);
  } else if (event.code == KeyCode::kHome) {
    choice_ = 0;
  } else if (event.code == KeyCode::kEnd) {
    choice_ = count - 1;
  }
  return ConfigEditorAction::kRedraw;
}

ConfigEditorAction ConfigEditor::HandleType(const InputEvent& event) {
  const LeetConfigField& selected = field();
  if (event.code == KeyCode::kEscape) {
    mode_ = Mode::kBrowse;
  } else if (event.code == KeyCode::kEnter) {
    LeetConfig next = draft_;
    if (auto set = SetLeetConfigValue(selected, input_, next); !set) {
      // The message starts with the key, which the box's title already names.
      input_error_ = set.error().substr(std::min(set.error().size(), selected.key.size() + 2));
    } else {
      draft_ = std::move(next);
      mode_ = Mode::kBrowse;
    }
  } else if (event.code == KeyCode::kBackspace) {
    if (!input_.empty()) input_.pop_back();
    input_error_.clear();
  } else if (event.code == KeyCode::kCharacter && input_.size() < kMaxInput &&
             ((event.character >= U'0' && event.character <= U'9') ||
              (event.character == U'.' && selected.kind == LeetFieldKind::kFraction))) {
    input_ += static_cast<char>(event.character);
    input_error_.clear();
  }
  return ConfigEditorAction::kRedraw;
}

CellGrid ConfigEditor::Render(int width, int height) {
  CellGrid grid(width, height);
  if (width < kMinWidth || height < kMinHeight) {
    const std::string message = fmt::format("Too small: {}x{} at least", kMinWidth, kMinHeight);
    grid.PutText(std::max(0, (width - DisplayWidth(message)) / 2), height / 2, message, {}, width);
    return grid;
  }
  const int inner = width - 2 * kMargin;
  grid.PutText(kMargin, 1, dirty() ? "runmon leet config *" : "runmon leet config", kBoldStyle, inner);
  grid.PutText(kMargin, 2, "Path: " + path_, kDimStyle, inner);
  RenderTable(grid, {kMargin, 4, inner, height - 9});
  RenderFooter(grid, {kMargin, height - 4, inner, 3});
  if (mode_ == Mode::kChoose) RenderChooser(grid);
  if (mode_ == Mode::kType) RenderInput(grid);
  return grid;
}

void ConfigEditor::RenderTable(CellGrid& grid, Rect area) {
  const auto fields = LeetConfigFields();
  const int label_width = std::min(LabelWidth(), std::max(20, area.width / 2));
  const int value_x = area.x + label_width + kColumnGap;
  const int value_width = area.x + area.width - value_x;
  const auto rows = static_cast<size_t>(std::max(1, area.height - 1));
  if (selected_ < scroll_) scroll_ = selected_;
  if (selected_ >= scroll_ + rows) scroll_ = selected_ + 1 - rows;
  scroll_ = std::min(scroll_, fields.size() > rows ? fields.size() - rows : 0);

  grid.PutText(area.x, area.y, "Setting", kBoldStyle, label_width);
  grid.PutText(value_x, area.y, "Value", kBoldStyle, value_width);
  if (fields.size() > rows) {
    const std::string position =
        fmt::format("{}-{} of {}", scroll_ + 1, std::min(scroll_ + rows, fields.size()), fields.size());
    grid.PutText(area.x + area.width - DisplayWidth(position), area.y, position, kDimStyle);
  }
  for (size_t row = 0; row < rows && scroll_ + row < fields.size(); ++row) {
    const size_t index = scroll_ + row;
    const LeetConfigField& shown = fields[index];
    const int y = area.y + 1 + static_cast<int>(row);
    const bool changed = shown.get(draft_) != shown.get(original_);
    Style label_style;
    Style value_style = changed ? kBoldStyle : Style{};
    if (index == selected_) {
      grid.Set(area.x - 1, y, U'›');  // the selection in plain text too
      grid.Fill({area.x, y, area.width, 1}, U' ', kSelectedStyle);
      label_style.attributes = kReverse;
      value_style.attributes = static_cast<uint8_t>(value_style.attributes | kReverse);
    }
    grid.PutText(area.x, y, shown.label, label_style, label_width);
    grid.PutText(value_x, y, FormatLeetConfigValue(shown, draft_), value_style, value_width);
  }
}

void ConfigEditor::RenderFooter(CellGrid& grid, Rect area) const {
  grid.PutText(area.x, area.y, status_, kStatusStyle, area.width);
  const LeetConfigField& selected = field();
  grid.PutText(area.x, area.y + 1, fmt::format("{}: {}", selected.key, selected.description), kDimStyle,
               area.width);
  grid.PutText(area.x, area.y + 2, kHints, kDimStyle, area.width);
}

void ConfigEditor::RenderChooser(CellGrid& grid) const {
  const LeetConfigField& selected = field();
  const std::string title = fmt::format("Select {}", selected.label);
  int width = DisplayWidth(title);
  for (const std::string_view option : selected.options) width = std::max(width, DisplayWidth(option) + 2);
  const auto count = static_cast<int>(selected.options.size());
  const Rect inside = CentredBox(grid, std::max(width, 26) + 4, count + 4);
  grid.PutText(inside.x, inside.y, title, kBoldStyle, inside.width);
  grid.PutText(inside.x, inside.y + 1, "enter apply · esc cancel", kDimStyle, inside.width);
  // A list taller than the box scrolls with the choice (the colour schemes in a short terminal).
  const int rows = std::max(1, inside.height - 2);
  const int chosen = static_cast<int>(choice_);
  const int first = chosen >= rows ? chosen - rows + 1 : 0;
  for (int row = 0; row < rows && first + row < count; ++row) {
    const int i = first + row;
    const bool current = i == chosen;
    const std::string line =
        fmt::format("{}{}", current ? "> " : "  ", selected.options[static_cast<size_t>(i)]);
    grid.PutText(inside.x, inside.y + 2 + row, line, current ? kSelectedStyle : Style{}, inside.width);
  }
}

void ConfigEditor::RenderInput(CellGrid& grid) const {
  const LeetConfigField& selected = field();
  const std::string title = fmt::format("Edit {}", selected.label);
  const std::string range = selected.kind == LeetFieldKind::kFraction
                                ? fmt::format("0 (default) or {}-{}", kMinPaneFraction, kMaxPaneFraction)
                                : fmt::format("Range: {}-{}", selected.min, selected.max);
  const Rect inside = CentredBox(grid, std::max(DisplayWidth(title), 30) + 4, 8);
  grid.PutText(inside.x, inside.y, title, kBoldStyle, inside.width);
  grid.PutText(inside.x, inside.y + 1, range, kDimStyle, inside.width);
  grid.PutText(inside.x, inside.y + 2, "enter apply · esc cancel", kDimStyle, inside.width);
  grid.PutText(inside.x, inside.y + 3, "> " + input_ + "_", {}, inside.width);
  grid.PutText(inside.x, inside.y + 4, input_error_, kErrorStyle, inside.width);
}

}  // namespace runmon::tui
