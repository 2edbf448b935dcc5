// The process tree's CPU bookkeeping (see process_cpu_ledger.hpp).
#include "collectors/linux/process_cpu_ledger.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace runmon {
namespace {

// stat's utime and stime are each truncated to a tick, and schedstat lags by up to a scheduler tick.
constexpr double kQuantumTicks = 3;

// What has been counted for the process in all (its own and its reaped children's time, with schedstat's
// refinement), in ticks: what its reaper's reaped time will grow by, up to what it uses after this.
double CountedTicks(const LedgerEntry& entry, double ticks_per_second) {
  return static_cast<double>(entry.self_ticks) + static_cast<double>(entry.child_ticks) +
         entry.refinement_seconds * ticks_per_second;
}

void SetBaseline(LedgerEntry& entry, const PidStat& stat) {
  entry.has_baseline = true;
  entry.self_ticks = stat.CpuTicks();
  entry.child_ticks = stat.children_cpu_ticks;
  entry.threads = stat.num_threads;
  entry.window_seconds = 0;
}

// schedstat's correction of a single-threaded process's tick count since its last schedstat reading (the
// mark), kept within kQuantumTicks overall; returns by how much the correction changed. A process that is
// not single-threaded loses its mark: schedstat covers its main thread alone.
double Refine(LedgerEntry& entry, const PidStat& stat, std::optional<uint64_t> runtime_ns, double tps) {
  if (stat.num_threads != 1) {
    entry.runtime_ns.reset();
    return 0;
  }
  if (!runtime_ns) return 0;  // not read this time: the mark stays
  double change = 0;
  if (entry.runtime_ns && *runtime_ns >= *entry.runtime_ns && stat.CpuTicks() >= entry.runtime_mark_ticks) {
    const double precise = static_cast<double>(*runtime_ns - *entry.runtime_ns) * 1e-9;
    const double ticks = static_cast<double>(stat.CpuTicks() - entry.runtime_mark_ticks) / tps;
    const double quantum = kQuantumTicks / tps;
    const double refinement = std::clamp(entry.refinement_seconds + precise - ticks, -quantum, quantum);
    change = refinement - entry.refinement_seconds;
    entry.refinement_seconds = refinement;
  }
  entry.runtime_ns = runtime_ns;
  entry.runtime_mark_ticks = stat.CpuTicks();
  return change;
}

}  // namespace

std::optional<std::string> CpuLedger::Implausible(const PidStat& stat, double age_seconds) const {
  const double tps = limits_.ticks_per_second;
  const double total =
      (static_cast<double>(stat.CpuTicks()) + static_cast<double>(stat.children_cpu_ticks)) / tps;
  const double possible = (std::max(age_seconds, 0.0) + kQuantumTicks / tps) * limits_.logical_cpus;
  if (total > possible) {
    return fmt::format("{:.6g} s of CPU time in {:.6g} s of life on {} CPUs cannot be true", total,
                       std::max(age_seconds, 0.0), limits_.logical_cpus);
  }
  return std::nullopt;
}

std::optional<std::string> CpuLedger::Start(LedgerEntry& entry, const PidStat& stat,
                                            std::optional<uint64_t> runtime_ns, double age_seconds) {
  if (auto why = Implausible(stat, age_seconds)) return why;
  SetBaseline(entry, stat);
  if (runtime_ns && stat.num_threads == 1) {
    // Its own time to the nanosecond rather than stat's two truncated tick counts.
    const double quantum = kQuantumTicks / limits_.ticks_per_second;
    const double ticks = static_cast<double>(stat.CpuTicks()) / limits_.ticks_per_second;
    entry.refinement_seconds = std::clamp(static_cast<double>(*runtime_ns) * 1e-9 - ticks, -quantum, quantum);
    entry.runtime_ns = runtime_ns;
    entry.runtime_mark_ticks = stat.CpuTicks();
  }
  return std::nullopt;
}

std::optional<double> CpuLedger::LifetimePercent(const std::vector<const LedgerEntry*>& entries,
                                                 const LedgerEntry& root, double root_age_seconds) const {
  if (!root.has_baseline || root_age_seconds <= 0) return std::nullopt;
  double ticks = 0;
  for (const LedgerEntry* entry : entries) {
    if (entry->has_baseline) ticks += std::max(0.0, CountedTicks(*entry, limits_.ticks_per_second));
  }
  const double seconds = ticks / limits_.ticks_per_second;
  return std::min(100.0, 100.0 * seconds / (root_age_seconds * limits_.available_cpus));
}

void CpuLedger::BeginTick(double elapsed_seconds) {
  elapsed_seconds_ = std::max(elapsed_seconds, 0.0);
  counted_seconds_ = 0;
}

void CpuLedger::Exit(LedgerEntry& gone, LedgerEntry* parent) {
  if (parent == nullptr) return;  // reaped outside the tree: nothing of it comes back
  double total = gone.due_ticks + gone.overdue_ticks;
  if (gone.has_baseline) total += CountedTicks(gone, limits_.ticks_per_second);
  parent->due_ticks += std::max(0.0, total);
}

void CpuLedger::Skip(LedgerEntry& entry) {
  // Its exits wait for a reading that shows them.
  entry.overdue_ticks += entry.due_ticks;
  entry.due_ticks = 0;
  entry.window_seconds += elapsed_seconds_;
}

std::optional<std::string> CpuLedger::Update(LedgerEntry& entry, const PidStat& stat,
                                             std::optional<uint64_t> runtime_ns, long threads_before,
                                             double age_seconds) {
  const double tps = limits_.ticks_per_second;
  auto why = Implausible(stat, age_seconds);
  if (!why && entry.has_baseline &&
      (stat.CpuTicks() < entry.self_ticks || stat.children_cpu_ticks < entry.child_ticks)) {
    why = fmt::format("CPU time went backwards (utime + stime {} -> {}, cutime + cstime {} -> {})",
                      entry.self_ticks, stat.CpuTicks(), entry.child_ticks, stat.children_cpu_ticks);
  }
  const double window = entry.window_seconds + elapsed_seconds_;
  const double self_ticks =
      entry.has_baseline ? static_cast<double>(stat.CpuTicks()) - static_cast<double>(entry.self_ticks) : 0;
  if (!why && self_ticks / tps > window * limits_.logical_cpus + kQuantumTicks / tps) {
    why = fmt::format("{:.6g} s of CPU time in {:.6g} s on {} CPUs cannot be true", self_ticks / tps, window,
                      limits_.logical_cpus);
  }
  if (why) {
    Skip(entry);
    return why;
  }
  if (!entry.has_baseline) {
    // Its first valid reading: counted from here on. Exits it was due are in what it reports now.
    entry.due_ticks = 0;
    entry.overdue_ticks = 0;
    SetBaseline(entry, stat);
    entry.runtime_ns.reset();
    Refine(entry, stat, runtime_ns, tps);
    return std::nullopt;
  }

  // Its own time, refined by schedstat while single-threaded.
  const double self_seconds = std::max(0.0, self_ticks / tps + Refine(entry, stat, runtime_ns, tps));
  const double threads = static_cast<double>(std::max({threads_before, stat.num_threads, 1L}));
  const double most = window * std::min(threads, limits_.logical_cpus);
  counted_seconds_ += std::min(self_seconds, most);
  excess_seconds_ += std::max(0.0, self_seconds - most);

  // Its reaped children's time, less the dues of tracked children that exited.
  const double growth = static_cast<double>(stat.children_cpu_ticks) - static_cast<double>(entry.child_ticks);
  const double expected = entry.due_ticks + entry.overdue_ticks;
  const double paid = std::min(growth, expected);
  counted_seconds_ += (growth - paid) / tps;
  entry.overdue_ticks = std::min(expected - paid, entry.due_ticks);  // older unpaid dues are dropped
  entry.due_ticks = 0;
  SetBaseline(entry, stat);
  return std::nullopt;
}

void CpuLedger::CountAdopted(const LedgerEntry& entry, double age_seconds) {
  if (!entry.has_baseline) return;
  const double tps = limits_.ticks_per_second;
  const double self = std::max(0.0, static_cast<double>(entry.self_ticks) / tps + entry.refinement_seconds);
  if (age_seconds <= elapsed_seconds_ || age_seconds <= 0) {
    // Started within the interval: all of its time, its reaped children's too, is new.
    counted_seconds_ += self + static_cast<double>(entry.child_ticks) / tps;
  } else {
    counted_seconds_ += self * elapsed_seconds_ / age_seconds;
  }
}

std::optional<double> CpuLedger::EndTick(bool emit) {
  const double pending = carry_seconds_ + counted_seconds_;
  counted_seconds_ = 0;
  const double capacity = elapsed_seconds_ * limits_.available_cpus;
  const double excess = excess_seconds_;
  excess_seconds_ = 0;
  if (!emit || capacity <= 0) {
    carry_seconds_ = pending + excess;
    return std::nullopt;
  }
  const double emitted = std::clamp(pending, 0.0, capacity);
  carry_seconds_ = pending - emitted + excess;
  return 100.0 * emitted / capacity;
}

}  // namespace runmon
