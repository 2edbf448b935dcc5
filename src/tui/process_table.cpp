// `leet symon`'s process table (see process_table.hpp). Column widths are fixed except the user's and the
// command's, so a table keeps its shape from frame to frame while values change; a value wider than its
// column ends in "…" (CellGrid::PutText).
#include "tui/process_table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tui/value_format.hpp"

namespace runmon::tui {
namespace {

constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kHeaderStyle{kDefaultColor, kDefaultColor, kBold};
constexpr Style kSortHeaderStyle{kDefaultColor, kDefaultColor, kBold | kReverse};
constexpr Style kRunStyle{81, kDefaultColor, kBold};
constexpr Style kProblemStyle{214, kDefaultColor, kNoAttributes};
constexpr int kMinCommandWidth = 12;
constexpr int kMinUserWidth = 6;
constexpr int kWheelRows = 3;

struct ColumnSpec {
  ProcessColumn column;
  const char* title;
  int width;  // the command's is what is left
  bool right_aligned;
};

constexpr std::array<ColumnSpec, kProcessColumnCount> kColumns{{
    {ProcessColumn::kGpu, "GPU", 4, true},
    {ProcessColumn::kPid, "PID", 8, true},
    {ProcessColumn::kUser, "USER", 10, false},
    {ProcessColumn::kGpuMemory, "GPU MEM", 9, true},
    {ProcessColumn::kSm, "SM%", 5, true},
    {ProcessColumn::kCpu, "CPU%", 6, true},
    {ProcessColumn::kRss, "RSS", 9, true},
    {ProcessColumn::kCommand, "COMMAND", 0, false},
}};
// The order columns give way in when the area is narrow; GPU and PID never do.
constexpr std::array<ProcessColumn, 6> kDropOrder{ProcessColumn::kRss,  ProcessColumn::kCpu,
                                                  ProcessColumn::kSm,   ProcessColumn::kGpuMemory,
                                                  ProcessColumn::kUser, ProcessColumn::kCommand};

const ColumnSpec& Spec(ProcessColumn column) {
  return kColumns[static_cast<size_t>(column)];
}

std::string Percent(const std::optional<double>& value, bool decimals) {
  if (!value || !std::isfinite(*value)) return "-";
  if (!decimals || *value >= 999.95) return fmt::format("{:.0f}", *value);
  return fmt::format("{:.1f}", *value);
}

std::string Bytes(const std::optional<uint64_t>& value) {
  return value ? FormatValue(static_cast<double>(*value), "bytes") : "-";
}

std::string CellText(const GpuProcessRow& row, ProcessColumn column) {
  switch (column) {
    case ProcessColumn::kGpu:
      return fmt::format("{}", row.gpu);
    case ProcessColumn::kPid:
      return fmt::format("{}", row.pid);
    case ProcessColumn::kUser:
      return row.user.empty() ? "?" : row.user;
    case ProcessColumn::kGpuMemory:
      return Bytes(row.gpu_memory_bytes);
    case ProcessColumn::kSm:
      return Percent(row.sm_percent, false);
    case ProcessColumn::kCpu:
      return Percent(row.cpu_percent, true);
    case ProcessColumn::kRss:
      return Bytes(row.rss_bytes);
    case ProcessColumn::kCommand:
      if (row.in_run && row.run_child_pid != row.pid && !row.run_command.empty()) {
        return row.command + "  ⟵ run: " + row.run_command;
      }
      return row.command;
  }
  return {};
}

// -1, 0, 1 for a before, equal to, after b in ascending order; a missing value after any known one.
template <typename T>
int CompareOptional(const std::optional<T>& a, const std::optional<T>& b, bool descending) {
  if (!a || !b) return a ? -1 : (b ? 1 : 0);
  if (*a == *b) return 0;
  return (*a < *b) != descending ? -1 : 1;
}

template <typename T>
int CompareValues(const T& a, const T& b, bool descending) {
  if (a == b) return 0;
  return (a < b) != descending ? -1 : 1;
}

int Compare(const GpuProcessRow& a, const GpuProcessRow& b, ProcessColumn column, bool descending) {
  switch (column) {
    case ProcessColumn::kGpu:
      return CompareValues(a.gpu, b.gpu, descending);
    case ProcessColumn::kPid:
      return CompareValues(a.pid, b.pid, descending);
    case ProcessColumn::kUser:
      return CompareValues(a.user, b.user, descending);
    case ProcessColumn::kGpuMemory:
      return CompareOptional(a.gpu_memory_bytes, b.gpu_memory_bytes, descending);
    case ProcessColumn::kSm:
      return CompareOptional(a.sm_percent, b.sm_percent, descending);
    case ProcessColumn::kCpu:
      return CompareOptional(a.cpu_percent, b.cpu_percent, descending);
    case ProcessColumn::kRss:
      return CompareOptional(a.rss_bytes, b.rss_bytes, descending);
    case ProcessColumn::kCommand:
      return CompareValues(a.command, b.command, descending);
  }
  return 0;
}

struct Layout {
  std::vector<ProcessColumn> columns;
  int user_width = 0;
  int command_width = 0;
};

// The columns that fit in `width` columns (after the marker), per the header comment's rules.
Layout ChooseColumns(int width) {
  std::vector<ProcessColumn> shown;
  for (const auto& spec : kColumns) shown.push_back(spec.column);
  int user_width = Spec(ProcessColumn::kUser).width;
  const auto has = [&](ProcessColumn column) { return std::count(shown.begin(), shown.end(), column) > 0; };
  const auto fixed_width = [&] {
    int total = 0;
    for (ProcessColumn column : shown) {
      if (column == ProcessColumn::kCommand) continue;
      total += (column == ProcessColumn::kUser ? user_width : Spec(column).width) + 1;
    }
    return total;
  };
  size_t next_drop = 0;
  for (;;) {
    const int left = width - fixed_width();
    if (!has(ProcessColumn::kCommand) ? left >= 0 : left >= kMinCommandWidth) {
      return {shown, user_width, has(ProcessColumn::kCommand) ? left : 0};
    }
    if (has(ProcessColumn::kUser) && user_width > kMinUserWidth) {
      user_width = kMinUserWidth;
      continue;
    }
    if (next_drop == kDropOrder.size()) return {shown, user_width, 0};
    std::erase(shown, kDropOrder[next_drop++]);
  }
}

}  // namespace

std::vector<const GpuProcessRow*> ProcessTablePane::Sorted(const std::vector<GpuProcessRow>& rows,
                                                           ProcessColumn column, bool descending) {
  std::vector<const GpuProcessRow*> sorted;
  sorted.reserve(rows.size());
  for (const auto& row : rows) sorted.push_back(&row);
  std::stable_sort(sorted.begin(), sorted.end(), [](const GpuProcessRow* a, const GpuProcessRow* b) {
    return a->gpu != b->gpu ? a->gpu < b->gpu : a->pid < b->pid;
  });
  std::stable_sort(sorted.begin(), sorted.end(), [&](const GpuProcessRow* a, const GpuProcessRow* b) {
    return Compare(*a, *b, column, descending) < 0;
  });
  return sorted;
}

bool ProcessTablePane::Contains(int x, int y) const {
  return x >= area_.x && x < area_.x + area_.width && y >= area_.y && y < area_.y + area_.height;
}

void ProcessTablePane::Scroll(int64_t rows) {
  const auto visible = static_cast<size_t>(std::max(1, body_rows_));
  const size_t last_top = row_count_ > visible ? row_count_ - visible : 0;
  const int64_t top = std::clamp<int64_t>(static_cast<int64_t>(std::min(top_, last_top)) + rows, 0,
                                          static_cast<int64_t>(last_top));
  top_ = static_cast<size_t>(top);
}

void ProcessTablePane::End() {
  const auto visible = static_cast<size_t>(std::max(1, body_rows_));
  top_ = row_count_ > visible ? row_count_ - visible : 0;
}

void ProcessTablePane::MoveSortColumn(int direction) {
  std::vector<ProcessColumn> candidates = shown_;
  if (candidates.empty()) {
    for (const auto& spec : kColumns) candidates.push_back(spec.column);
  }
  const auto count = static_cast<int>(candidates.size());
  const auto at = std::find(candidates.begin(), candidates.end(), sort_);
  int index = 0;
  if (at == candidates.end()) {  // sorted by a column that gave way: start at the edge
    index = direction < 0 ? count - 1 : 0;
  } else {
    index = static_cast<int>(at - candidates.begin());
    index = ((index + (direction < 0 ? -1 : 1)) % count + count) % count;
  }
  sort_ = candidates[static_cast<size_t>(index)];
  top_ = 0;
}

bool ProcessTablePane::Handle(const InputEvent& event) {
  switch (event.code) {
    case KeyCode::kUp:
      Scroll(-1);
      return true;
    case KeyCode::kDown:
      Scroll(1);
      return true;
    case KeyCode::kPageUp:
      Page(-1);
      return true;
    case KeyCode::kPageDown:
      Page(1);
      return true;
    case KeyCode::kHome:
      Home();
      return true;
    case KeyCode::kEnd:
      End();
      return true;
    case KeyCode::kWheelUp:
    case KeyCode::kWheelDown:
      if (!Contains(event.x, event.y)) return false;
      Scroll(event.code == KeyCode::kWheelUp ? -kWheelRows : kWheelRows);
      return true;
    case KeyCode::kCharacter:
      if (event.character == U'<' || event.character == U'>') {
        MoveSortColumn(event.character == U'<' ? -1 : 1);
        return true;
      }
      if (event.character == U'v') {
        ReverseSort();
        return true;
      }
      return false;
    default:
      return false;
  }
}

void ProcessTablePane::Render(CellGrid& grid, Rect area, const GpuProcessSnapshot* snapshot, bool focused) {
  area_ = area;
  shown_.clear();
  if (area.width < 12 || area.height < 3) return;
  const Style border = focused ? Style{75, kDefaultColor, kBold} : kDimStyle;
  const Rect inner{area.x + 1, area.y + 1, area.width - 2, area.height - 2};
  const size_t rows = snapshot != nullptr && snapshot->available ? snapshot->rows.size() : 0;
  const size_t in_run = snapshot == nullptr
                            ? 0
                            : static_cast<size_t>(std::count_if(snapshot->rows.begin(), snapshot->rows.end(),
                                                                [](const auto& row) { return row.in_run; }));
  std::string title = "GPU Processes";
  if (rows > 0) title += fmt::format(" • {} process{} • {} in a run", rows, rows == 1 ? "" : "es", in_run);
  grid.DrawBox(area, border, title);

  if (snapshot != nullptr && !snapshot->problems.empty()) {
    std::string problem = " ! " + snapshot->problems.front();
    if (snapshot->problems.size() > 1) problem += fmt::format(" (+{} more)", snapshot->problems.size() - 1);
    problem += " ";
    grid.PutText(area.x + 2, area.y + area.height - 1, problem, kProblemStyle, area.width - 4);
  }

  const Layout layout = ChooseColumns(inner.width - 2);
  shown_ = layout.columns;
  body_rows_ = std::max(1, inner.height - 1);
  row_count_ = rows;
  const auto width_of = [&](ProcessColumn column) {
    if (column == ProcessColumn::kUser) return layout.user_width;
    if (column == ProcessColumn::kCommand) return layout.command_width;
    return Spec(column).width;
  };
  // One line of cells: the marker, then each column in its width and alignment.
  const auto put_line = [&](int y, const std::string& marker, Style marker_style, auto&& text_of,
                            auto&& style_of) {
    grid.PutText(inner.x, y, marker, marker_style, 1);
    int x = inner.x + 2;
    for (ProcessColumn column : layout.columns) {
      const int width = width_of(column);
      const std::string text = TruncateToWidth(text_of(column), width);
      const int text_width = DisplayWidth(text);
      const int offset = Spec(column).right_aligned ? width - text_width : 0;
      grid.PutText(x + offset, y, text, style_of(column), width - offset);
      x += width + 1;
    }
  };
  put_line(
      inner.y, " ", kHeaderStyle,
      [&](ProcessColumn column) {
        std::string name = Spec(column).title;
        if (column == sort_) name += descending_ ? "▼" : "▲";
        return name;
      },
      [&](ProcessColumn column) { return column == sort_ ? kSortHeaderStyle : kHeaderStyle; });

  if (snapshot == nullptr || !snapshot->available || rows == 0) {
    const std::string message = snapshot == nullptr    ? "listing the GPUs' processes…"
                                : !snapshot->available ? snapshot->unavailable_reason
                                                       : "no processes on the GPUs";
    grid.PutText(inner.x + 2, inner.y + 1, message, kDimStyle, inner.width - 2);
    top_ = 0;
    return;
  }
  const auto visible = static_cast<size_t>(body_rows_);
  top_ = std::min(top_, rows > visible ? rows - visible : 0);
  const std::vector<const GpuProcessRow*> sorted = Sorted(snapshot->rows, sort_, descending_);
  for (size_t i = 0; i < std::min(visible, rows - top_); ++i) {
    const GpuProcessRow& row = *sorted[top_ + i];
    const Style style = row.in_run ? kRunStyle : Style{};
    put_line(
        inner.y + 1 + static_cast<int>(i), row.in_run ? "●" : " ", style,
        [&](ProcessColumn column) { return CellText(row, column); }, [&](ProcessColumn) { return style; });
  }
  if (rows > visible) {
    const std::string position =
        fmt::format(" [{}-{} of {}] ", top_ + 1, std::min(rows, top_ + visible), rows);
    const int position_width = DisplayWidth(position);
    if (position_width + DisplayWidth(title) + 6 < area.width) {
      grid.PutText(area.x + area.width - 1 - position_width, area.y, position, border, position_width);
    }
  }
}

}  // namespace runmon::tui
