// runmon's man pages, written from the CLI::App tree that parses the command line (commands.cpp), so their
// commands, options, value names, checks and descriptions are the ones --help prints and cannot go stale:
// runmon(1), and runmon-COMMAND(1) for each command (runmon-leet-config(1) for a nested one). The build
// writes them with `runmon --generate-man-pages DIR` (cmake/RunmonManPages.cmake); help does not list it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace runmon {

// The flag commands.cpp answers, before parsing, when it is runmon's only argument with a directory.
inline constexpr std::string_view kGenerateManPagesFlag = "--generate-man-pages";

struct ManPage {
  std::string file_name;  // runmon-run.1
  std::string text;       // roff, for the man macros
};

// One page for `app` and one for each of its commands, nested ones included; `version` is what
// --version prints ("runmon 0.1.0").
std::vector<ManPage> RenderManPages(const CLI::App& app, std::string_view version);

// Writes RenderManPages' pages into `directory` (made if missing). Returns runmon's exit status: 0, or 1
// with a message when a page cannot be written.
int WriteManPages(const CLI::App& app, std::string_view version, const std::string& directory);

}  // namespace runmon
