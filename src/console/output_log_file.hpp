// files/output.log as W&B's core writes it (runconsolelogs): the command's console lines, stdout's and
// stderr's interleaved in the order they started, each line's text as W&B's terminal emulation assembles
// it (a progress bar's final state, colours kept as escape codes) and a newline after it. Lines that may
// still change (TerminalLines' open lines) are written too and rewritten in place at the next update, as
// W&B rewrites the end of the file, so the file is readable while the run goes on. A write error stops the
// file (reported once); the run log still has the output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "console/terminal_lines.hpp"
#include "core/result.hpp"

namespace runmon::console {

class OutputLogFile {
 public:
  static Result<std::unique_ptr<OutputLogFile>> Create(const std::filesystem::path& path);
  ~OutputLogFile();
  OutputLogFile(const OutputLogFile&) = delete;
  OutputLogFile& operator=(const OutputLogFile&) = delete;

  // Appends the lines `lines` finished since the last update and rewrites its open lines after them.
  Status Update(TerminalLines& lines);
  // Finishes every line and writes them (the output ended).
  Status Close(TerminalLines& lines);

 private:
  explicit OutputLogFile(int fd) : fd_(fd) {}
  Status WriteAt(const std::string& text, uint64_t offset);

  int fd_;
  std::string text_;                       // what one write takes, kept for the next update
  uint64_t finished_bytes_ = 0;            // the file's finished lines: never rewritten
  uint64_t written_version_ = UINT64_MAX;  // the lines' version when the open lines were last written
  bool broken_ = false;
};

}  // namespace runmon::console
