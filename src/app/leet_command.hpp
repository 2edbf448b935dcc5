// `runmon leet [PATH]`: the terminal UI over run logs (src/tui). PATH is a wandb directory (a workspace of
// runs), a run directory, a .wandb file, or nothing (./wandb with its latest run open). The loop does a
// slice of loading, draws a frame when something changed (or each second, for a running run's runtime)
// and waits for input; while a run is still loading it does not wait, so a large log loads at full speed
// between frames. --print-frame draws one frame of the fully loaded run as text, without a terminal.
// `runmon leet symon [--interval D]` runs the same loop over runmon's own sampler instead of a run log.
// Both start with the settings of leet's config file (`runmon leet config`, leet_config_command.hpp).
#pragma once

#include <optional>
#include <string>

namespace runmon {

struct LeetOptions {
  std::optional<std::string> path;
  std::string print_frame;  // "WIDTHxHEIGHT": print one frame and exit
  bool print_keys = false;  // print the key table (key_table.hpp) as Markdown and exit
  bool symon = false;       // `leet symon`: this machine, live, with no run (symon_source.hpp)
  std::string symon_interval;
  std::optional<std::string> config_path;  // --config: leet's settings file (leet_config_command.hpp)
};

int RunLeetCommand(const LeetOptions& options);

}  // namespace runmon
