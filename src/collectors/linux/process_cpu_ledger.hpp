// How the process-tree collector counts the tree's CPU time, each CPU-second exactly once. Pure
// bookkeeping over stat (and schedstat) readings; no file access, so fixture tests and the live property
// test (tests/collectors/process_tree_cpu_property_test.cpp) check it through the collector.
//
// The kernel keeps every CPU-second of a tree in exactly one live (or zombie) process: in its own
// utime + stime while it runs, and, once it has exited and been reaped, in its reaper's cutime + cstime,
// as the dead child's whole total (its own time and everything it had reaped itself). So:
//  - a process's own time counts as it grows;
//  - growth of its reaped-children time counts too (children that lived and died between two ticks are
//    only ever seen there), less what was already counted for tracked children that exited: a tracked
//    process that disappears (reaped, or its PID reused) leaves its last-seen total, with whatever its own
//    exited children left it, as a due on its parent, and the parent's next growth pays dues first. When
//    the parent is gone too, the due moves up to the nearest tracked ancestor;
//  - a zombie stays tracked with its final times until it is reaped (however late), so its due is exact.
// Readings are made parents first, so a child still there when read cannot already be in its parent's
// reaped time; a child reaped between its parent's read and its own is found in the parent's growth on
// the next tick, so an unpaid due waits one tick and is then dropped (a child reaped outside the tree: a
// double-forked orphan re-parented to init, or a parent that ignores SIGCHLD). Orphans are counted while
// they are tracked (still the run's work), which the kernel does not charge to the root.
//
// Resolution: stat's times are two truncated 10 ms tick counts. For a single-threaded process the
// nanoseconds of /proc/PID/schedstat refine them (it covers the main thread only, so it is not used while
// there are other threads: on Linux 6.18 a process with two busy threads showed 79 ms there and 968 ms in
// stat); the refinement is kept within kQuantumTicks of stat's count overall, so a schedstat that lags or
// reads 0 cannot drift the count. schedstat is read only while it can tell something (the process is
// running, has just exited, or its tick count moved): a sleeping process costs no extra read, and CPU it
// used below a tick shows when it next runs. A process cannot use more than the window x its threads (nor x
// the CPUs), and the tree no more than the window x the CPUs available: what a tick's quantisation puts above
// that is carried into the next tick, so no sample exceeds 100 and the sum over samples is kept.
//
// Readings that cannot be true are dropped for that process and tick, and the next valid one is compared
// with the last valid one: more CPU time than the process's age (or the window) x the logical CPUs, and
// counters that went backwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectors/linux/parse/procfs_parse.hpp"

namespace runmon {

struct LedgerLimits {
  double ticks_per_second = 100;
  double logical_cpus = 1;    // what is possible
  double available_cpus = 1;  // the denominator of `cpu` (cgroup quota, affinity, logical CPUs)
};

// What has been counted for one process.
struct LedgerEntry {
  bool has_baseline = false;           // a valid reading was seen
  uint64_t self_ticks = 0;             // utime + stime at the last valid reading
  uint64_t child_ticks = 0;            // cutime + cstime at the last valid reading
  std::optional<uint64_t> runtime_ns;  // schedstat's last reading, while single-threaded
  uint64_t runtime_mark_ticks = 0;     // self_ticks when it was read
  long threads = 0;
  double refinement_seconds = 0;  // schedstat's correction of the tick count, up to its last reading
  double window_seconds = 0;      // since the last valid reading, when readings were dropped
  double due_ticks = 0;           // exits of its children this tick, expected in its reaped time
  double overdue_ticks = 0;       // exits of the previous tick not yet found there
};

class CpuLedger {
 public:
  explicit CpuLedger(LedgerLimits limits) : limits_(limits) {}
  const LedgerLimits& limits() const { return limits_; }

  // A process's first reading; the reason when it cannot be true (then nothing is counted for it until a
  // reading that can be).
  std::optional<std::string> Start(LedgerEntry& entry, const PidStat& stat,
                                   std::optional<uint64_t> runtime_ns, double age_seconds);
  // The first sample: the tree's CPU time over the root's age (capped at 100); nullopt when the root's
  // reading is not valid or its age unknown.
  std::optional<double> LifetimePercent(const std::vector<const LedgerEntry*>& entries,
                                        const LedgerEntry& root, double root_age_seconds) const;

  void BeginTick(double elapsed_seconds);
  // A tracked process is gone. Call for every gone process, children before parents, before any Update;
  // `parent` is the entry of its last-seen parent, or null when that is not tracked.
  void Exit(LedgerEntry& gone, LedgerEntry* parent);
  // A process still there whose stat could not be read this tick.
  void Skip(LedgerEntry& entry);
  // A process's reading this tick; the reason when it cannot be true (then it is skipped).
  std::optional<std::string> Update(LedgerEntry& entry, const PidStat& stat,
                                    std::optional<uint64_t> runtime_ns, long threads_before,
                                    double age_seconds);
  // A process adopted this tick (after Start): what it used within the interval.
  void CountAdopted(const LedgerEntry& entry, double age_seconds);
  // This tick's `cpu`, or nullopt when it is not to be emitted (`emit` false: the root's reading was
  // dropped, or no tracked process was there); what is not emitted is carried into the next tick.
  std::optional<double> EndTick(bool emit);

 private:
  std::optional<std::string> Implausible(const PidStat& stat, double age_seconds) const;

  LedgerLimits limits_;
  double elapsed_seconds_ = 0;
  double counted_seconds_ = 0;  // this tick's, within the limits
  double excess_seconds_ = 0;   // this tick's, above what a process can use in the window
  double carry_seconds_ = 0;    // counted but not yet emitted
};

}  // namespace runmon
