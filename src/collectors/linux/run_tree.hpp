// Who belongs to the monitored run: the root process and, unless only the root is watched
// (--no-process-tree), every process whose parent is in the run. A process is its PID together with its
// start time, so a PID the kernel hands to another process is not the member it once was. One type answers
// this for every collector that asks (the process-tree collector, the NVIDIA collector's gpu.process.{i}.*,
// the GPU families to come), from two directions:
//   - top-down, for the process-tree collector, which finds processes in their parents' children lists:
//     Join records a child (it must still name that parent and still run) or the root, Recognizes tells
//     whether a member's PID still is that member, Leave forgets one that exited;
//   - bottom-up, for a collector handed PIDs by a driver (the processes on a GPU): Contains follows the PID's
//     parent chain through /proc/PID/stat until it reaches the root or a recorded member. The answer is kept
//     while the PID is asked about every tick (a steady run reads nothing from /proc), and forgotten once a
//     tick goes by without it (so a reused PID is looked at afresh); ancestors walked through are remembered
//     for the tick. A process whose stat cannot be read is not in the run for this tick and is decided again
//     next tick.
// Each collector has its own RunTree (collectors run in lanes of their own; nothing here is shared or
// locked).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "core/result.hpp"
#include "host/host_paths.hpp"

namespace runmon {

// A zombie has nothing left to count; but a process whose main thread exited while other threads run also
// shows 'Z' in its stat, with those threads still counted: that one has not exited.
bool HasExited(const PidStat& stat);

// PID's /proc/PID/stat, read and parsed now; nullopt when it is gone or unreadable.
std::optional<PidStat> ReadPidStat(const HostPaths& paths, long pid);

class RunTree {
 public:
  // `root` unset or <= 0: no monitored process, nothing is in the run. `whole_tree` false: the root alone.
  RunTree(HostPaths paths, std::optional<long> root, bool whole_tree);

  long root() const { return root_; }
  bool watching() const { return root_ > 0; }
  bool whole_tree() const { return whole_tree_; }

  // Top-down. Records the process `stat` describes as a member: the root when `parent` is 0 (it may
  // already be a zombie: its final times are its lifetime's), otherwise a child of the member `parent`
  // that still names it as its parent (the PID may have been reused since the children list was read) and
  // still runs (an exited child stays in its parent's children list until it is reaped). Says why not.
  Status Join(long pid, const PidStat& stat, long parent);
  // Whether `stat`, read now at a member's PID, still describes that member (the same start time).
  bool Recognizes(long pid, const PidStat& stat) const;
  void Leave(long pid) { members_.erase(pid); }

  // Bottom-up (see the header comment). BeginLookups starts a tick's questions, EndLookups forgets the
  // answers for PIDs not asked about since.
  void BeginLookups();
  bool Contains(long pid);
  void EndLookups();

 private:
  HostPaths paths_;
  long root_;
  bool whole_tree_;
  std::unordered_map<long, uint64_t> members_;          // top-down: PID -> start time
  std::unordered_map<long, bool> answers_;              // bottom-up: PIDs asked about every tick, in the run?
  std::unordered_map<long, bool> ancestors_this_tick_;  // processes walked through this tick
  std::unordered_set<long> asked_this_tick_;
};

}  // namespace runmon
