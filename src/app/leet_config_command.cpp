// `runmon leet config` and the settings `runmon leet` starts with. See leet_config_command.hpp. --set's
// assignments are all checked before the file is read, so a typo is a usage error (2) even when the file
// is damaged; a damaged file is never overwritten by --set or the editor (only --reset replaces it), so a
// hand edit with a missing comma is not lost.
#include "app/leet_config_command.hpp"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "modules/module_loader.hpp"
#include "tui/config_editor.hpp"
#include "tui/terminal.hpp"

namespace runmon {
namespace {

std::optional<std::string> Environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Result<std::filesystem::path> ConfigPath(const std::optional<std::string>& flag) {
  return tui::LeetConfigPath(
      {flag, Environment("RUNMON_CONFIG_DIR"), Environment("XDG_CONFIG_HOME"), Environment("HOME")});
}

void WarnAll(const std::filesystem::path& path, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) Warn(fmt::format("{}: {}", path.string(), warning));
}

// The editor in the terminal, until the user quits or saves.
int RunEditor(const std::filesystem::path& path) {
  if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDOUT_FILENO) == 0) {
    Warn("leet config: the editor needs a terminal; use --print, --path, --set KEY=VALUE or --reset");
    return 2;
  }
  auto loaded = tui::LoadLeetConfigFile(path);
  if (!loaded) {
    Warn(fmt::format("{}; fix it, or run `runmon leet config --reset` to start again from the defaults",
                     loaded.error()));
    return 1;
  }
  const auto& warnings = loaded->parsed.warnings;
  std::string notice;
  if (!warnings.empty()) {
    notice = warnings.front() + (warnings.size() > 1 ? fmt::format(" ({} more)", warnings.size() - 1) : "");
  }
  auto terminal_module = LoadModule<tui::TerminalModule>();
  if (!terminal_module) {
    Warn(terminal_module.error());
    return 1;
  }
  bool saved = false;
  {
    auto terminal = (*terminal_module)->start();
    if (!terminal) {
      Warn(terminal.error());
      return 1;
    }
    tui::Terminal& screen = **terminal;
    tui::ConfigEditor editor(loaded->parsed.config, path.string(), notice);
    bool dirty = true;
    while (!saved) {
      if (dirty) screen.Draw(editor.Render(screen.width(), screen.height()));
      dirty = false;
      const auto event = screen.Read(-1);
      if (!event) continue;
      const auto action = editor.Handle(*event);
      if (action == tui::ConfigEditorAction::kQuit) return 0;
      if (action == tui::ConfigEditorAction::kSave) {
        auto status = tui::SaveLeetConfigFile(path, editor.draft());
        saved = status.ok();
        if (!saved) editor.SaveFailed(status.error());
      }
      dirty = action != tui::ConfigEditorAction::kNone;
    }
  }  // the terminal is restored here, before the line below
  fmt::print("leet config saved to {}\n", path.string());
  return 0;
}

}  // namespace

int RunLeetConfigCommand(const LeetConfigOptions& options) {
  // Every assignment is checked first: a bad key or value is a usage error whatever the file holds.
  tui::LeetConfig scratch;
  for (const std::string& assignment : options.assignments) {
    if (auto status = tui::ApplyLeetConfigAssignment(assignment, scratch); !status) {
      Warn(fmt::format("--set: {}", status.error()));
      return 2;
    }
  }
  auto path = ConfigPath(options.config_path);
  if (!path) {
    Warn(path.error());
    return 1;
  }
  const bool writes = options.reset || !options.assignments.empty();
  if (!writes && !options.print && !options.path) return RunEditor(*path);

  tui::LeetConfig config;
  auto loaded = tui::LoadLeetConfigFile(*path);
  if (loaded) {
    WarnAll(*path, loaded->parsed.warnings);
    config = loaded->parsed.config;
  } else if (!options.reset) {
    Warn(fmt::format("{}; fix it, or run `runmon leet config --reset` to start again from the defaults",
                     loaded.error()));
    return 1;
  }
  if (options.reset) {
    tui::LeetConfig defaults;
    defaults.other_keys_json = config.other_keys_json;  // keys runmon does not know are not its to reset
    config = defaults;
  }
  for (const std::string& assignment : options.assignments) {
    (void)tui::ApplyLeetConfigAssignment(assignment, config);  // checked above
  }
  if (writes) {
    if (auto saved = tui::SaveLeetConfigFile(*path, config); !saved) {
      Warn(saved.error());
      return 1;
    }
  }
  if (options.path) fmt::print("{}\n", path->string());
  if (options.print) fmt::print("{}", tui::SerializeLeetConfig(config));
  return 0;
}

tui::LeetConfig LoadLeetConfigForView(const std::optional<std::string>& config_path) {
  auto path = ConfigPath(config_path);
  if (!path) return {};  // no HOME and nothing else: nowhere a file could be
  auto loaded = tui::LoadLeetConfigFile(*path);
  if (!loaded) {
    Warn(fmt::format("{}; leet uses the default settings", loaded.error()));
    return {};
  }
  if (!loaded->exists && config_path) {
    Warn(fmt::format("{}: no such file; leet uses the default settings", path->string()));
  }
  WarnAll(*path, loaded->parsed.warnings);
  return loaded->parsed.config;
}

LeetLayoutKeeper::LeetLayoutKeeper(const std::optional<std::string>& config_path,
                                   const tui::LeetViewSettings& started)
    : kept_(started) {
  if (auto path = ConfigPath(config_path)) path_ = *path;
}

std::optional<std::string> LeetLayoutKeeper::Keep(const tui::LeetViewSettings& now) {
  if (!path_ || now == kept_) return std::nullopt;
  kept_ = now;
  auto loaded = tui::LoadLeetConfigFile(*path_);
  if (!loaded) return fmt::format("layout not saved: {}", loaded.error());
  tui::LeetConfig config = loaded->parsed.config;
  tui::ApplyViewSettings(now, config);
  if (auto saved = tui::SaveLeetConfigFile(*path_, config); !saved) {
    return fmt::format("layout not saved: {}", saved.error());
  }
  return std::string();
}

}  // namespace runmon
