// Pure parsers for what a process table shows about a process beyond its counters: its owner (the real
// uid in /proc/PID/status, named through an /etc/passwd text), its command line (/proc/PID/cmdline, made
// safe to print) and its command name (stat's comm, for processes without a command line: kernel threads,
// zombies), and the rule that recognises a `runmon run` process. None touches the filesystem; each has a
// fuzz target (fuzz/process_identity_fuzz.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.hpp"

namespace runmon {

// /proc/PID/status "Uid:\tREAL\tEFFECTIVE\tSAVED\tFS": the real uid (who started it, as ps shows it).
Result<unsigned> ParsePidStatusRealUid(std::string_view status);

// /etc/passwd "name:password:uid:gid:gecos:home:shell" lines: uid -> name. Comments, NIS "+"/"-" entries and
// malformed lines are skipped; the first entry of a uid wins (as getpwuid answers); names longer than 64
// bytes or holding control characters are skipped.
std::unordered_map<unsigned, std::string> ParsePasswdNames(std::string_view passwd);

// The arguments of a /proc/PID/cmdline (each ended by a NUL; the last one may lack it), at most `max_args`.
std::vector<std::string_view> SplitCmdline(std::string_view cmdline, size_t max_args = 1024);

// A command line as one printable line of at most about `max_bytes` bytes: NULs between arguments become
// spaces (trailing NULs dropped), '\\' becomes "\\\\", tab, newline and carriage return "\\t", "\\n", "\\r",
// other ASCII controls and bytes that are not valid UTF-8 "\\xNN", C1 controls and the bidirectional
// overrides and isolates (which reorder what follows them on screen) "\\u{NNNN}". Cut at a character
// boundary, ending in "…" when it was cut.
std::string FormatCommandLine(std::string_view cmdline, size_t max_bytes);

// The command name in a /proc/PID/stat text: between the first '(' and the last ')'.
Result<std::string_view> ParsePidStatComm(std::string_view stat);

// The rule for a `runmon run` process: argv[0]'s last path component is `runmon` and argv[1] is `run`
// (runmon has no options before its subcommand). A runmon binary renamed, or started through an
// interpreter or a wrapper that leaves itself in argv[0], is not recognised.
bool IsRunmonRunCommand(const std::vector<std::string_view>& argv);

}  // namespace runmon
