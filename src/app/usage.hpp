// How runmon's command line speaks for itself. CLI11 alone exits with its own codes (100-127) and words
// (`--port: Value 70000 not in range [0 - 65535]`, help with `INT:INT in [0 - 65535]`); here every parse
// error of every command becomes one line `runmon: ...` and exit status 2, help names each value readably
// (`--port PORT (0-65535)`), integers are checked in runmon's words, and no option takes an empty value.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace runmon {

// Options in this group work but help does not list them (CLI11's hidden group would also leave them
// nameless in its error messages).
inline constexpr const char* kUnlistedOptions = "Unlisted";

// An option's value name as help prints it: "PORT (0-65535)" from CLI11's "PORT:(0-65535)".
std::string OptionValueText(const CLI::Option& option);

// A base-10 integer from `min` to `max` (CLI11 alone reads 010 as octal and 0x10 as hex); the value is
// rewritten in plain digits before CLI11 converts it. Help shows the range.
CLI::Validator IntegerIn(long long min, long long max);

// Parses the command line into `app` (its options and subcommands all declared). Returns nothing when the
// chosen command is to run, else runmon's exit status: 0 once --help or --version is printed, 2 once a
// usage error is reported on stderr.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

}  // namespace runmon
