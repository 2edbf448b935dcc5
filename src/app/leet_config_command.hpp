// `runmon leet config`: leet's settings file (src/tui/leet_config.hpp). In a terminal, with no flag, the
// editor (src/tui/config_editor.hpp); scripted: --print (the settings in effect, as JSON), --path (where
// the file is), --set KEY=VALUE (repeatable) and --reset (every key runmon knows back to its default,
// the others kept), which save the file. The file is --config PATH, else $RUNMON_CONFIG_DIR/leet.json,
// else $XDG_CONFIG_HOME/runmon/leet.json, else ~/.config/runmon/leet.json: this is where the environment
// is read. Also what `runmon leet` and `runmon leet symon` start with (LoadLeetConfigForView) and where
// they keep the layout their user leaves (LeetLayoutKeeper).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tui/leet_config.hpp"

namespace runmon {

struct LeetConfigOptions {
  std::optional<std::string> config_path;  // --config
  bool print = false;
  bool path = false;
  bool reset = false;
  std::vector<std::string> assignments;  // --set KEY=VALUE
};

// Exit status: 0, 1 when the file cannot be read, parsed or written, 2 for a bad key or value (or no
// terminal for the editor).
int RunLeetConfigCommand(const LeetConfigOptions& options);

// The settings leet starts with. A file that cannot be read or parsed, and each bad value in it, is
// warned about on stderr (before the screen starts) and the defaults are used for it.
tui::LeetConfig LoadLeetConfigForView(const std::optional<std::string>& config_path);

// Writes the layout a leet user leaves (grid sizes, panes shown, guides, dragged pane sizes) back into
// the config file when it changes, as W&B's LEET does: the file is read again first, so what another
// program wrote meanwhile (`runmon leet config`) is kept but for these keys, and a file that cannot be
// read or parsed is left alone. Nowhere to keep a file (no HOME): nothing is written.
class LeetLayoutKeeper {
 public:
  LeetLayoutKeeper(const std::optional<std::string>& config_path, const tui::LeetViewSettings& started);
  // Nothing when the layout is as kept; else "" when it was saved, or why it could not be.
  std::optional<std::string> Keep(const tui::LeetViewSettings& now);

 private:
  std::optional<std::filesystem::path> path_;
  tui::LeetViewSettings kept_;
};

}  // namespace runmon
