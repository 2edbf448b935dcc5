// `leet symon`'s process table, as nvitop shows it: who uses the GPUs, one row per (GPU, process) with the
// GPU's index, PID, user, GPU memory, SM % (since the previous listing), host CPU % (of one core), RSS and
// the command line. Processes of a `runmon run` tree are marked ("●" in the first column) and drawn in a
// style of their own; below the run's child they also name the run's command ("⟵ run: CMD").
//
// Keys, while the pane has the focus: up/down scroll a row, page up/down a page, home/end the top/bottom,
// the wheel (over the pane) three rows; `<` and `>` move the sort column left and right, `v` reverses the
// order. The header marks the sort column with ▲ (ascending) or ▼ (descending). Rows start sorted by GPU,
// then PID; equal values keep that order, and a value not known sorts last either way.
//
// On a narrow area the command column shrinks first (to 12 columns), then columns drop, RSS first, then
// CPU %, SM %, GPU memory, user, and the command last; GPU and PID always stay. The pane keeps nothing of
// the snapshot between frames, so the app may replace the snapshot at any time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tui/cell_grid.hpp"
#include "tui/input.hpp"

namespace runmon::tui {

struct GpuProcessRow {
  unsigned gpu = 0;
  long pid = 0;
  std::string user;  // empty: unknown
  std::optional<uint64_t> gpu_memory_bytes;
  std::optional<double> sm_percent;
  std::optional<double> cpu_percent;  // of one core
  std::optional<uint64_t> rss_bytes;
  std::string command;  // printable already (escaped by the reader)
  bool in_run = false;  // a `runmon run` is among its ancestors
  long run_child_pid = 0;
  std::string run_command;  // the run's child's command line, when in_run
};

// What the app knows about the GPUs' processes at one listing.
struct GpuProcessSnapshot {
  bool available = false;          // false: listing does not work at all, see `unavailable_reason`
  std::string unavailable_reason;  // "no NVIDIA GPU", "NVML cannot list processes: ..."
  std::vector<GpuProcessRow> rows;
  std::vector<std::string> problems;  // devices whose lists failed this time ("GPU 2: ...")
};

enum class ProcessColumn : uint8_t { kGpu, kPid, kUser, kGpuMemory, kSm, kCpu, kRss, kCommand };
inline constexpr size_t kProcessColumnCount = 8;

class ProcessTablePane {
 public:
  // Draws the table into `area` (a box with the title and the header inside). `snapshot` may be null
  // (nothing listed yet).
  void Render(CellGrid& grid, Rect area, const GpuProcessSnapshot* snapshot, bool focused);
  // From the last render:
  const Rect& area() const { return area_; }
  bool Contains(int x, int y) const;
  void NotDrawn() { area_ = {}; }  // no room for it in this frame
  // The columns shown in the last render, left to right.
  const std::vector<ProcessColumn>& shown_columns() const { return shown_; }

  // Input. Handle takes the pane's keys (see the header comment) and the wheel over the pane; true when the
  // event was the pane's (then the frame should be redrawn).
  bool Handle(const InputEvent& event);
  void Scroll(int64_t rows);  // negative: up
  void Page(int pages) { Scroll(static_cast<int64_t>(pages) * std::max(1, body_rows_ - 1)); }
  void Home() { top_ = 0; }
  void End();
  void MoveSortColumn(int direction);  // <0: left, >0: right (wrapping)
  void ReverseSort() { descending_ = !descending_; }
  ProcessColumn sort_column() const { return sort_; }
  bool sort_descending() const { return descending_; }
  size_t top() const { return top_; }

  // The rows in display order for a sort column and direction.
  static std::vector<const GpuProcessRow*> Sorted(const std::vector<GpuProcessRow>& rows,
                                                  ProcessColumn column, bool descending);

 private:
  ProcessColumn sort_ = ProcessColumn::kGpu;
  bool descending_ = false;
  size_t top_ = 0;
  // From the last render:
  Rect area_{};
  int body_rows_ = 1;
  size_t row_count_ = 0;
  std::vector<ProcessColumn> shown_;
};

}  // namespace runmon::tui
