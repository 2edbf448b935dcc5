// ProcessTablePane (symon's GPU process table): golden frames at a wide, a medium and a narrow size, the
// unavailable and empty states, sorting by every column both ways (unknown values last), the keys that
// move the sort column and reverse it, scrolling, and the style of rows in a `runmon run` tree.
#include "tui/process_table.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/golden.hpp"

namespace runmon::tui {
namespace {

std::filesystem::path Golden(const std::string& name) {
  return std::filesystem::path(RUNMON_FIXTURES_DIR) / "tui" / (name + ".txt");
}

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

GpuProcessSnapshot Snapshot() {
  GpuProcessSnapshot snapshot;
  snapshot.available = true;
  snapshot.rows = {
      {0, 4242, "alice", 38 * kGiB, 95, 101.5, 3 * kGiB, "python train.py --lr 3e-4", true, 4242,
       "python train.py --lr 3e-4"},
      {0, 4250, "alice", 2 * kGiB, std::nullopt, 12.25, 900 * kMiB, "python -m torch.worker --rank 1", true,
       4242, "python train.py --lr 3e-4"},
      {1, 777, "bob", 512 * kMiB, 3, 0, 200 * kMiB, "/usr/bin/Xorg :0 \\x1B[2J", false, 0, ""},
      {1, 31337, "1001", std::nullopt, 40, std::nullopt, std::nullopt, "[ollama]", false, 0, ""},
  };
  snapshot.problems = {"GPU 2: NVML cannot list its processes: Unknown Error"};
  return snapshot;
}

std::string Frame(ProcessTablePane& pane, const GpuProcessSnapshot* snapshot, int width, int height,
                  bool focused = true) {
  CellGrid grid(width, height);
  pane.Render(grid, grid.bounds(), snapshot, focused);
  return grid.ToString();
}

std::vector<long> Pids(const std::vector<const GpuProcessRow*>& rows) {
  std::vector<long> pids;
  for (const auto* row : rows) pids.push_back(row->pid);
  return pids;
}

TEST(ProcessTableTest, Goldens) {
  const GpuProcessSnapshot snapshot = Snapshot();
  ProcessTablePane pane;
  test::ExpectGolden(Golden("process-table-160x12"), Frame(pane, &snapshot, 160, 12));
  test::ExpectGolden(Golden("process-table-80x8"), Frame(pane, &snapshot, 80, 8));
  test::ExpectGolden(Golden("process-table-40x8"), Frame(pane, &snapshot, 40, 8));
  Frame(pane, &snapshot, 100, 8);  // the sort column moves among the columns shown: all of them here
  pane.ReverseSort();
  pane.MoveSortColumn(1);
  pane.MoveSortColumn(1);
  pane.MoveSortColumn(1);  // GPU MEM, descending
  test::ExpectGolden(Golden("process-table-sorted-100x8"), Frame(pane, &snapshot, 100, 8));
}

TEST(ProcessTableTest, StatesWithoutRows) {
  ProcessTablePane pane;
  GpuProcessSnapshot unavailable;
  unavailable.unavailable_reason = "no NVIDIA GPU";
  GpuProcessSnapshot empty;
  empty.available = true;
  test::ExpectGolden(Golden("process-table-states-60x5"), Frame(pane, nullptr, 60, 5) + "\n" +
                                                              Frame(pane, &unavailable, 60, 5) + "\n" +
                                                              Frame(pane, &empty, 60, 5, false));
}

TEST(ProcessTableTest, ColumnsGiveWayInOrder) {
  const GpuProcessSnapshot snapshot = Snapshot();
  ProcessTablePane pane;
  using C = ProcessColumn;
  Frame(pane, &snapshot, 200, 8);
  EXPECT_EQ(pane.shown_columns().size(), kProcessColumnCount);
  Frame(pane, &snapshot, 60, 8);  // the user shrunk and RSS gone, so that the command keeps 12 columns
  EXPECT_EQ(pane.shown_columns(),
            (std::vector<C>{C::kGpu, C::kPid, C::kUser, C::kGpuMemory, C::kSm, C::kCpu, C::kCommand}));
  Frame(pane, &snapshot, 48, 8);
  EXPECT_EQ(pane.shown_columns(), (std::vector<C>{C::kGpu, C::kPid, C::kUser, C::kGpuMemory, C::kCommand}));
  Frame(pane, &snapshot, 20, 8);
  EXPECT_EQ(pane.shown_columns(), (std::vector<C>{C::kGpu, C::kPid}));
}

TEST(ProcessTableTest, SortsByEveryColumnBothWays) {
  const GpuProcessSnapshot snapshot = Snapshot();
  using C = ProcessColumn;
  const auto sorted = [&](C column, bool descending) {
    return Pids(ProcessTablePane::Sorted(snapshot.rows, column, descending));
  };
  EXPECT_EQ(sorted(C::kGpu, false), (std::vector<long>{4242, 4250, 777, 31337}));
  EXPECT_EQ(sorted(C::kGpu, true), (std::vector<long>{777, 31337, 4242, 4250}));  // ties stay by PID
  EXPECT_EQ(sorted(C::kPid, false), (std::vector<long>{777, 4242, 4250, 31337}));
  EXPECT_EQ(sorted(C::kPid, true), (std::vector<long>{31337, 4250, 4242, 777}));
  EXPECT_EQ(sorted(C::kUser, false), (std::vector<long>{31337, 4242, 4250, 777}));
  EXPECT_EQ(sorted(C::kUser, true), (std::vector<long>{777, 4242, 4250, 31337}));
  // Unknown values last, whichever the direction.
  EXPECT_EQ(sorted(C::kGpuMemory, false), (std::vector<long>{777, 4250, 4242, 31337}));
  EXPECT_EQ(sorted(C::kGpuMemory, true), (std::vector<long>{4242, 4250, 777, 31337}));
  EXPECT_EQ(sorted(C::kSm, false), (std::vector<long>{777, 31337, 4242, 4250}));
  EXPECT_EQ(sorted(C::kSm, true), (std::vector<long>{4242, 31337, 777, 4250}));
  EXPECT_EQ(sorted(C::kCpu, false), (std::vector<long>{777, 4250, 4242, 31337}));
  EXPECT_EQ(sorted(C::kCpu, true), (std::vector<long>{4242, 4250, 777, 31337}));
  EXPECT_EQ(sorted(C::kRss, true), (std::vector<long>{4242, 4250, 777, 31337}));
  EXPECT_EQ(sorted(C::kRss, false), (std::vector<long>{777, 4250, 4242, 31337}));
  EXPECT_EQ(sorted(C::kCommand, false), (std::vector<long>{777, 31337, 4250, 4242}));
  EXPECT_EQ(sorted(C::kCommand, true), (std::vector<long>{4242, 4250, 31337, 777}));
}

TEST(ProcessTableTest, SortKeys) {
  const GpuProcessSnapshot snapshot = Snapshot();
  ProcessTablePane pane;
  Frame(pane, &snapshot, 160, 12);
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kGpu);
  EXPECT_FALSE(pane.sort_descending());
  EXPECT_TRUE(pane.Handle(CharacterEvent(U'>')));
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kPid);
  EXPECT_TRUE(pane.Handle(CharacterEvent(U'<')));
  EXPECT_TRUE(pane.Handle(CharacterEvent(U'<')));  // wraps to the last column
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kCommand);
  EXPECT_TRUE(pane.Handle(CharacterEvent(U'v')));
  EXPECT_TRUE(pane.sort_descending());
  EXPECT_FALSE(pane.Handle(CharacterEvent(U'x')));
  // On a narrow table the sort column moves among the columns shown.
  Frame(pane, &snapshot, 20, 8);
  pane.Handle(CharacterEvent(U'>'));
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kGpu);
  pane.Handle(CharacterEvent(U'>'));
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kPid);
  pane.Handle(CharacterEvent(U'>'));
  EXPECT_EQ(pane.sort_column(), ProcessColumn::kGpu);
}

TEST(ProcessTableTest, Scrolling) {
  GpuProcessSnapshot snapshot;
  snapshot.available = true;
  for (long pid = 1; pid <= 30; ++pid)
    snapshot.rows.push_back({0, pid, "u", {}, {}, {}, {}, "cmd", false, 0, ""});
  ProcessTablePane pane;
  Frame(pane, &snapshot, 80, 12);  // 9 rows shown (box and header take 3)
  EXPECT_TRUE(pane.Handle(KeyEvent(KeyCode::kDown)));
  EXPECT_EQ(pane.top(), 1u);
  pane.Handle(KeyEvent(KeyCode::kPageDown));
  EXPECT_EQ(pane.top(), 9u);
  pane.Handle(KeyEvent(KeyCode::kEnd));
  EXPECT_EQ(pane.top(), 21u);
  pane.Handle(KeyEvent(KeyCode::kDown));
  EXPECT_EQ(pane.top(), 21u);  // not past the end
  EXPECT_NE(Frame(pane, &snapshot, 80, 12).find("[22-30 of 30]"), std::string::npos);
  pane.Handle(KeyEvent(KeyCode::kHome));
  EXPECT_EQ(pane.top(), 0u);
  pane.Handle(KeyEvent(KeyCode::kUp));
  EXPECT_EQ(pane.top(), 0u);
  EXPECT_TRUE(pane.Handle({KeyCode::kWheelDown, 0, 5, 5}));
  EXPECT_EQ(pane.top(), 3u);
  EXPECT_FALSE(pane.Handle({KeyCode::kWheelDown, 0, 100, 5})) << "the wheel outside the pane";
  EXPECT_TRUE(pane.Contains(0, 0));
  EXPECT_FALSE(pane.Contains(80, 0));
  // Fewer rows later: the position is kept within them.
  snapshot.rows.resize(5);
  Frame(pane, &snapshot, 80, 12);
  EXPECT_EQ(pane.top(), 0u);
}

TEST(ProcessTableTest, RunRowsHaveTheirOwnStyle) {
  const GpuProcessSnapshot snapshot = Snapshot();
  ProcessTablePane pane;
  CellGrid grid(160, 12);
  pane.Render(grid, grid.bounds(), &snapshot, true);
  // Rows start at y = 2 (border, header); the first two are the run's.
  EXPECT_EQ(grid.at(1, 2).code_point, U'●');
  ASSERT_EQ(grid.at(6, 2).code_point, U'0');  // the GPU column, right-aligned
  const Style run = grid.at(6, 2).style;
  const Style other = grid.at(6, 4).style;
  EXPECT_NE(run, other);
  EXPECT_EQ(grid.at(6, 3).style, run);
  EXPECT_EQ(grid.at(1, 4).code_point, U' ');
}

TEST(ProcessTableTest, TinyAreasDrawNothingAndNeverCrash) {
  const GpuProcessSnapshot snapshot = Snapshot();
  ProcessTablePane pane;
  for (int width : {0, 1, 5, 11, 12, 13, 25}) {
    for (int height : {0, 1, 2, 3, 4}) {
      CellGrid grid(width, height);
      pane.Render(grid, grid.bounds(), &snapshot, false);
      pane.Handle(KeyEvent(KeyCode::kPageDown));
    }
  }
  CellGrid grid(5, 2);
  pane.Render(grid, grid.bounds(), &snapshot, false);
  EXPECT_EQ(grid.ToString(), "     \n     ");
}

}  // namespace
}  // namespace runmon::tui
