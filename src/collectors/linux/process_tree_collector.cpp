// The monitored process and its descendants: cpu, proc.cpu.threads, proc.memory.rssMB,
// proc.memory.percent.
//
// Cost matters most here (a sample every 0.1 s of a tree of hundreds of processes), so:
//  - each tracked process keeps its stat, statm and main-thread children files open (within the
//    process-wide descriptor budget, see file_reader.hpp); every tick re-reads them with pread from offset
//    0 into one shared buffer (no open/close, no directory scans, no memory per process beyond its
//    descriptors);
//  - RSS comes from statm (the stat field lags) and CPU, threads, ppid and start time from stat; status is
//    never read per tick;
//  - descendants are found by walking children lists (/proc/PID/task/TID/children), never by scanning every
//    process. A children list is per thread, and reading only the main thread's misses processes forked
//    by other threads (a data-loader thread that spawns workers). So for multi-threaded processes every
//    thread's list is read too, on the first sample and then every kThreadScanSeconds. A process found
//    that way stays tracked from then on, so it is missed for at most that long.
//  - the children lists are walked only when /proc/loadavg's last PID has moved since the last tick (no
//    process or thread was created anywhere otherwise, so no list can have grown), and at least every
//    kThreadScanSeconds. On a quiet machine that saves a third of the reads per process (see
//    SomethingForked for when the gate is off).
//  - kernels built without CONFIG_PROC_CHILDREN have no children files; the collector then falls back to
//    one pass over every /proc/PID/stat per tick, and says so in its name.
// A PID is identified with its start time, so a reused PID is a new process and is only adopted if it is
// a child of the tree. A descendant whose parent exits stays tracked (it is still the run's work) until
// it exits. CPU of descendants that exit comes back through their parent's cutime/cstime once the
// parent reaps them, so short-lived children (never seen alive) count too; for children that were tracked
// the part already counted is subtracted (see the debts below). What a process uses between the last tick
// and its exit is lost only when its reaper is outside the tree.
#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kThreadScanSeconds = 5.0;
constexpr size_t kMaxTrackedProcesses = 65536;

struct Process {
  long pid = 0;
  long ppid = 0;
  uint64_t start_time_ticks = 0;
  uint64_t cpu_ticks = 0;        // utime + stime at the last tick
  uint64_t child_cpu_ticks = 0;  // cutime + cstime at the last tick
  long threads = 0;
  KeptOpenFile stat;
  KeptOpenFile statm;
  KeptOpenFile children;
};

class ProcessTreeCollector final : public Collector {
 public:
  explicit ProcessTreeCollector(const LinuxCollectorContext& ctx)
      : paths_(ctx.paths),
        clocks_(ctx.clocks),
        root_pid_(ctx.pid.value_or(0)),
        track_tree_(ctx.settings.track_process_tree),
        ticks_per_second_(static_cast<double>(ctx.facts.clock_ticks_per_second)),
        page_bytes_(static_cast<double>(ctx.facts.page_size_bytes)) {
    loadavg_file_ = KeptOpenFile(ctx.paths.Proc("loadavg"), Generated::kWhole);
    available_cpus_ = ctx.facts.logical_cpus > 0 ? ctx.facts.logical_cpus : 1.0;
    if (auto limit = ctx.facts.cgroup.CpuLimit(); limit && *limit < available_cpus_) available_cpus_ = *limit;
    memory_denominator_ =
        static_cast<double>(ctx.facts.cgroup.memory_limit_bytes.value_or(ctx.facts.memory_total_bytes));
  }

  std::string_view Name() const override {
    return scan_fallback_ ? "process_tree (full /proc scan)" : "process_tree";
  }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (root_pid_ <= 0) return OkStatus();
    const double now_boot = clocks_.seconds_since_boot();
    const double now_mono = clocks_.monotonic_seconds();
    const bool first = !have_previous_;
    const double elapsed = first ? 0 : now_mono - last_mono_;
    double cpu_ticks_delta = 0;

    if (first) {
      auto root = Adopt(root_pid_, /*expected_parent=*/0);
      if (!root) return Error{fmt::format("process {}: {}", root_pid_, root.error())};
      root_start_ticks_ = tracked_.at(root_pid_)->start_time_ticks;
    }

    // Refresh what is tracked; drop what exited or was replaced under the same PID. A process that is
    // gone leaves a debt with its parent: the CPU already counted for it, which reappears in the
    // parent's cutime/cstime when the parent reaps it. Parents' reaped-children time is only read after
    // every debt of this tick is known (second pass).
    auto& alive = alive_;
    alive.clear();
    for (auto it = tracked_.begin(); it != tracked_.end();) {
      Process& p = *it->second;
      auto text = p.stat.Read(scratch_);
      std::optional<PidStat> stat;
      if (text) {
        if (auto parsed = ParsePidStat(*text); parsed && parsed->start_time_ticks == p.start_time_ticks) {
          stat = *parsed;
        }
      }
      if (!stat) {
        AddDebt(p.ppid, static_cast<double>(p.cpu_ticks + p.child_cpu_ticks), now_mono);
        it = tracked_.erase(it);
        continue;
      }
      // A zombie still shows its final times; it is counted with the living (below), after every debt of
      // this tick is known, and dropped then.
      alive.push_back({&p, *stat, Exited(*stat)});
      ++it;
    }
    const auto count = [&](Process& p, const PidStat& stat) {
      const uint64_t cpu = stat.utime_ticks + stat.stime_ticks;
      if (!first) {
        cpu_ticks_delta += Increase(cpu, p.cpu_ticks);
        // Children reaped since the last tick, less what was already counted while they were tracked:
        // short-lived children (a `date` in a shell loop) are never seen alive, and are counted here.
        double reaped = Increase(stat.children_cpu_ticks, p.child_cpu_ticks);
        if (auto debt = debts_.find(p.pid); debt != debts_.end()) {
          const double paid = std::min(debt->second.ticks, reaped);
          reaped -= paid;
          debt->second.ticks -= paid;
          if (debt->second.ticks <= 0) debts_.erase(debt);
        }
        cpu_ticks_delta += reaped;
      }
      p.cpu_ticks = cpu;
      p.child_cpu_ticks = stat.children_cpu_ticks;
      p.threads = stat.num_threads;
      p.ppid = stat.ppid;
    };
    // Zombies first: their debts must be known before their parents' reaped time is read, in case a
    // parent reaped one between the two stat reads of the first pass.
    bool zombie_counted = false;
    for (const auto& [process, stat, exited] : alive) {
      if (!exited) continue;
      zombie_counted = true;
      count(*process, stat);
      // Its time comes back in its parent's cutime/cstime when the parent reaps it.
      AddDebt(process->ppid, static_cast<double>(process->cpu_ticks + process->child_cpu_ticks), now_mono);
    }
    for (const auto& [process, stat, exited] : alive) {
      if (!exited) count(*process, stat);
    }
    for (const auto& [process, stat, exited] : alive) {
      if (exited) tracked_.erase(process->pid);
    }
    // A debt is paid when the parent reaps; a parent that is gone, or one that never reaps into its
    // counters (SIGCHLD ignored), would otherwise hold it against later children.
    std::erase_if(debts_, [&](const auto& entry) {
      return tracked_.count(entry.first) == 0 || now_mono - entry.second.since > kThreadScanSeconds;
    });

    if (track_tree_ && !tracked_.empty()) {
      const bool thread_scan = first || now_mono - last_thread_scan_ >= kThreadScanSeconds;
      if (thread_scan) last_thread_scan_ = now_mono;
      const size_t before = tracked_.size();
      // Read before the walk, so a fork during the walk is seen next time.
      const bool forked = SomethingForked();
      if (thread_scan || forked) Discover(thread_scan);
      // Processes adopted this tick: count the CPU they used within the interval.
      if (!first && tracked_.size() != before) {
        for (long pid : adopted_this_tick_) {
          const Process& p = *tracked_.at(pid);
          const double cpu = static_cast<double>(p.cpu_ticks);
          const double age = now_boot - static_cast<double>(p.start_time_ticks) / ticks_per_second_;
          if (age <= elapsed || age <= 0) {
            // Started within the interval: all of its time, its reaped children's too, is new.
            cpu_ticks_delta += cpu + static_cast<double>(p.child_cpu_ticks);
          } else {
            cpu_ticks_delta += cpu * elapsed / age;
          }
        }
      }
    }

    have_previous_ = true;
    last_mono_ = now_mono;
    if (tracked_.empty()) {
      // The run's processes are gone; host metrics carry on. When the last of them was still seen as a
      // zombie, its last interval of CPU time is known and reported (`runmon run` takes its final sample
      // while the command is a zombie); processes that vanished unseen leave no value, never a made-up 0.
      if (zombie_counted && !first && elapsed > 0) {
        out.Add("cpu", 100.0 * cpu_ticks_delta / ticks_per_second_ / (elapsed * available_cpus_));
      }
      return OkStatus();
    }

    double rss_pages = 0;
    double threads = 0;
    double total_cpu_ticks = 0;
    for (auto& [pid, p] : tracked_) {
      threads += static_cast<double>(p->threads);
      total_cpu_ticks += static_cast<double>(p->cpu_ticks + p->child_cpu_ticks);
      if (auto text = p->statm.Read(scratch_)) {
        if (auto pages = ParsePidStatmResidentPages(*text)) rss_pages += static_cast<double>(*pages);
      }
    }
    const double rss_bytes = rss_pages * page_bytes_;

    if (first) {
      const double age = now_boot - static_cast<double>(root_start_ticks_) / ticks_per_second_;
      if (age > 0) out.Add("cpu", 100.0 * total_cpu_ticks / ticks_per_second_ / (age * available_cpus_));
    } else if (elapsed > 0) {
      out.Add("cpu", 100.0 * cpu_ticks_delta / ticks_per_second_ / (elapsed * available_cpus_));
    }
    out.Add("proc.cpu.threads", threads);
    out.Add("proc.memory.rssMB", rss_bytes / kMiB);
    if (memory_denominator_ > 0) out.Add("proc.memory.percent", rss_bytes / memory_denominator_ * 100.0);
    return OkStatus();
  }

 private:
  std::string PidPath(long pid, std::string_view file) const {
    return fmt::format("{}/{}/{}", paths_.proc.string(), pid, file);
  }

  // Starts tracking `pid`; when expected_parent > 0 the process must still be its child (PID reuse guard).
  Status Adopt(long pid, long expected_parent) {
    auto process = std::make_unique<Process>();
    process->pid = pid;
    process->stat = KeptOpenFile(PidPath(pid, "stat"), Generated::kWhole);
    auto text = process->stat.Read(scratch_);
    if (!text) return Error{text.error()};
    auto stat = ParsePidStat(*text);
    if (!stat) return Error{stat.error()};
    if (expected_parent > 0 && stat->ppid != expected_parent) return Error{"no longer a child"};
    // An exited child stays in its parent's children list until it is reaped.
    if (Exited(*stat)) return Error{"exited"};
    process->start_time_ticks = stat->start_time_ticks;
    process->cpu_ticks = stat->utime_ticks + stat->stime_ticks;
    process->child_cpu_ticks = stat->children_cpu_ticks;
    process->ppid = stat->ppid;
    process->threads = stat->num_threads;
    process->statm = KeptOpenFile(PidPath(pid, "statm"), Generated::kWhole);
    process->children = KeptOpenFile(fmt::format("{}/{}/task/{}/children", paths_.proc.string(), pid, pid),
                                     Generated::kShortRecords);
    tracked_.emplace(pid, std::move(process));
    return OkStatus();
  }

  static double Increase(uint64_t now, uint64_t before) {
    return now >= before ? static_cast<double>(now - before) : 0.0;
  }

  void AddDebt(long parent, double ticks, double now_mono) {
    if (tracked_.count(parent) == 0 || ticks <= 0) return;  // reaped outside the tree: nothing comes back
    auto& debt = debts_[parent];
    debt.ticks += ticks;
    debt.since = now_mono;
  }

  // A zombie has nothing left to count; but a process whose main thread exited while other threads run
  // also shows 'Z' in its stat, with those threads still counted.
  static bool Exited(const PidStat& stat) {
    return (stat.state == 'Z' || stat.state == 'X') && stat.num_threads <= 1;
  }

  // Whether any process or thread may have been created since the last look: /proc/loadavg's last PID
  // moves with every fork and clone of the reader's PID namespace. When it has not moved, no children list
  // can have grown and the walk is skipped (a third of the reads per process). A PID is handed out just
  // before the child is linked to its parent, so after a move the next tick walks too. The gate is off
  // when runmon does not share the monitored process's PID namespace (the host's /proc seen from a
  // container), and when loadavg cannot be read.
  bool SomethingForked() {
    if (!gate_checked_) {
      gate_checked_ = true;
      std::error_code own_error, root_error;
      const auto own = std::filesystem::read_symlink(paths_.Proc("self/ns/pid"), own_error);
      const auto root = std::filesystem::read_symlink(PidPath(root_pid_, "ns/pid"), root_error);
      gate_usable_ = !own_error && !root_error && own == root;
    }
    if (!gate_usable_) return true;
    auto text = loadavg_file_.Read(scratch_);
    if (!text) return true;
    auto last = ParseLoadavgLastPid(*text);
    if (!last) return true;
    const bool moved = *last != last_pid_;
    last_pid_ = *last;
    const bool walk = moved || moved_last_tick_;
    moved_last_tick_ = moved;
    return walk;
  }

  void AdoptChildren(long parent, const std::vector<long>& children, std::deque<long>& queue) {
    for (long child : children) {
      if (tracked_.size() >= kMaxTrackedProcesses) return;
      if (tracked_.count(child) != 0) continue;
      if (Adopt(child, parent).ok()) {
        adopted_this_tick_.push_back(child);
        queue.push_back(child);
      }
    }
  }

  void Discover(bool thread_scan) {
    adopted_this_tick_.clear();
    std::deque<long> queue;
    for (const auto& [pid, p] : tracked_) queue.push_back(pid);
    if (scan_fallback_) {
      DiscoverByScanning(queue);
      return;
    }
    while (!queue.empty()) {
      const long pid = queue.front();
      queue.pop_front();
      auto it = tracked_.find(pid);
      if (it == tracked_.end()) continue;
      Process& p = *it->second;
      auto text = p.children.Read(scratch_);
      if (!text) {
        // Still alive after its children file was found missing: the kernel has no CONFIG_PROC_CHILDREN.
        // (A process that exited in between fails this second stat read.)
        if (pid == root_pid_ && IsGoneErrno(p.children.last_errno()) && p.stat.Read(scratch_).ok()) {
          scan_fallback_ = true;
          for (const auto& [other, unused] : tracked_) queue.push_back(other);
          DiscoverByScanning(queue);
          return;
        }
        continue;
      }
      if (auto children = ParseChildrenList(*text)) AdoptChildren(pid, *children, queue);
      if (thread_scan && p.threads > 1) {
        auto tids = ListDirectory(PidPath(pid, "task"));
        if (!tids) continue;
        for (const auto& tid : *tids) {
          if (tid == std::to_string(pid)) continue;
          auto list = ReadFileToString(fmt::format("{}/{}/task/{}/children", paths_.proc.string(), pid, tid));
          if (!list) continue;
          if (auto children = ParseChildrenList(*list)) AdoptChildren(pid, *children, queue);
        }
      }
    }
  }

  // Without children files: read every process's stat once and follow parent links.
  void DiscoverByScanning(std::deque<long>& queue) {
    auto entries = ListDirectory(paths_.proc);
    if (!entries) return;
    std::unordered_map<long, std::vector<long>> children_of;
    for (const auto& name : *entries) {
      if (name.empty() ||
          !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        continue;
      }
      auto text = ReadFileToString(paths_.proc / name / "stat");
      if (!text) continue;
      if (auto stat = ParsePidStat(*text)) children_of[stat->ppid].push_back(stat->pid);
    }
    while (!queue.empty()) {
      const long pid = queue.front();
      queue.pop_front();
      if (auto it = children_of.find(pid); it != children_of.end()) AdoptChildren(pid, it->second, queue);
    }
  }

  HostPaths paths_;
  Clocks clocks_;
  long root_pid_;
  bool track_tree_;
  double ticks_per_second_;
  double page_bytes_;
  double available_cpus_ = 1;
  double memory_denominator_ = 0;
  std::unordered_map<long, std::unique_ptr<Process>> tracked_;
  std::vector<long> adopted_this_tick_;
  struct Debt {
    double ticks = 0;  // CPU already counted for exited children, due back in the parent's cutime
    double since = 0;  // monotonic seconds of the last exit added
  };
  std::unordered_map<long, Debt> debts_;  // by parent PID
  struct Refreshed {
    Process* process;
    PidStat stat;
    bool exited;  // a zombie: counted once more, then dropped
  };
  std::vector<Refreshed> alive_;  // the refresh's first pass, kept to reuse its memory
  KeptOpenFile loadavg_file_;
  long last_pid_ = -1;
  bool moved_last_tick_ = true;
  bool gate_checked_ = false;
  bool gate_usable_ = false;
  std::string scratch_;  // one read buffer for every file of every process (a tree can be thousands)
  uint64_t root_start_ticks_ = 0;
  bool have_previous_ = false;
  bool scan_fallback_ = false;
  double last_mono_ = 0;
  double last_thread_scan_ = 0;
};

}  // namespace

std::unique_ptr<Collector> MakeProcessTreeCollector(const LinuxCollectorContext& ctx) {
  return std::make_unique<ProcessTreeCollector>(ctx);
}

}  // namespace runmon
