// `runmon leet config`'s editor, as pure code (like W&B's configeditor): a table of every setting with its
// value; up/down (k/j) select, left/right (h/l) adjust (numbers step, options cycle, switches toggle),
// space toggles a switch, enter toggles a switch or opens a picker (options) or an input line (numbers),
// r puts the selected setting back to its default, s saves and quits, q, esc and ctrl+c quit, asking
// first when there are unsaved changes. It reacts to InputEvents and renders CellGrids; the app saves the
// file when asked (kSave) and reports back with SaveFailed, so nothing here touches a file or the terminal.
#pragma once

#include <cstddef>
#include <string>

#include "tui/cell_grid.hpp"
#include "tui/input.hpp"
#include "tui/leet_config.hpp"

namespace runmon::tui {

enum class ConfigEditorAction { kNone, kRedraw, kSave, kQuit };

class ConfigEditor {
 public:
  // `path` is shown in the header; `notice` (a warning about the file read) in the status line.
  ConfigEditor(LeetConfig config, std::string path, std::string notice = {});

  ConfigEditorAction Handle(const InputEvent& event);
  // Keeps the selected row in view (the scroll position is kept for the next frame).
  CellGrid Render(int width, int height);

  const LeetConfig& draft() const { return draft_; }
  bool dirty() const { return !(draft_ == original_); }
  size_t selected() const { return selected_; }
  // Saving failed: the editor stays open with `message` in its status line.
  void SaveFailed(const std::string& message);

 private:
  enum class Mode { kBrowse, kChoose, kType };

  ConfigEditorAction HandleBrowse(const InputEvent& event);
  ConfigEditorAction HandleChoose(const InputEvent& event);
  ConfigEditorAction HandleType(const InputEvent& event);
  ConfigEditorAction Quit();
  ConfigEditorAction Activate();
  const LeetConfigField& field() const;

  void RenderTable(CellGrid& grid, Rect area);
  void RenderFooter(CellGrid& grid, Rect area) const;
  void RenderChooser(CellGrid& grid) const;
  void RenderInput(CellGrid& grid) const;

  LeetConfig original_;
  LeetConfig draft_;
  std::string path_;
  std::string status_;
  Mode mode_ = Mode::kBrowse;
  size_t selected_ = 0;
  size_t scroll_ = 0;
  size_t choice_ = 0;  // kChoose: the option under the cursor
  std::string input_;  // kType: what was typed
  std::string input_error_;
  bool confirm_quit_ = false;
};

}  // namespace runmon::tui
