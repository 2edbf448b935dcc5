#!/usr/bin/env bash
# Captures, from the running machine, exactly the kernel files runmon's Linux collectors read, into a
# fixture tree DIR/{proc,sys,etc} that HostPaths::Under(DIR) can point at (tests/fixtures/hosts/...):
#
#   proc/{stat,meminfo,diskstats,cpuinfo,loadavg,uptime}, proc/net/dev, proc/self/{mountinfo,statm} (regular files
#     under a real proc/self/ directory; uptime is not read by runmon, tests use it as the boot clock)
#   proc/PID/{stat,statm,status,cgroup,mountinfo} and proc/PID/task/TID/children for PID and every
#     descendant (found through the children files, or by scanning /proc/*/stat where the kernel has none)
#   sys/devices/system/cpu/online, sys/devices/system/cpu/cpuN/topology/{core_cpus_list,thread_siblings_list}
#   sys/block/NAME/ for every block device, with NAME/device/ (holding an empty .keep so git stores it)
#     where the kernel has one: the marker the disk collector uses to tell physical disks
#   the cgroup files along PID's cgroup chains, from the leaf up to each hierarchy's mount point:
#     v2 memory.max memory.current cpu.max cpu.stat memory.events; v1 memory.limit_in_bytes
#     memory.usage_in_bytes memory.oom_control cpu.cfs_quota_us cpu.cfs_period_us cpu.stat
#   etc/os-release
#
# and a README.md in DIR saying how, when and on which kernel it was captured. With -t N a second reading
# is taken N seconds later into DIR/t1/ (same layout), for tests of rates and of processes that come and
# go between two samples.
#
# Usage: tools/capture_fixture.sh [-p PID] [-t SECONDS] DIR
#   -p PID      root of the process tree to capture (default: this script's parent process)
#   -t SECONDS  also take a second reading into DIR/t1 after SECONDS (may be fractional)
# DIR must not exist or be empty. Nothing outside DIR is written. Files of processes that exit during the
# capture are skipped silently.
set -euo pipefail

usage() {
  sed -n 's/^# \{0,1\}//; /^Usage:/,/^DIR must/p' "$0" >&2
  exit 2
}

command_line="$0 $*"
pid=$PPID
second_reading=""
while getopts "p:t:h" opt; do
  case $opt in
    p) pid=$OPTARG ;;
    t) second_reading=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 ]] || usage
dir=$1
[[ $pid =~ ^[0-9]+$ ]] || { echo "capture_fixture: bad PID '$pid'" >&2; exit 2; }
[[ -d /proc/$pid ]] || { echo "capture_fixture: no process $pid" >&2; exit 1; }
if [[ -n $second_reading && ! $second_reading =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "capture_fixture: bad -t '$second_reading'" >&2
  exit 2
fi
if [[ -e $dir && -n $(ls -A "$dir" 2>/dev/null) ]]; then
  echo "capture_fixture: $dir exists and is not empty" >&2
  exit 1
fi

# copy SRC DST: a kernel file's current bytes (cat, since /proc and cgroup files report size 0).
copy() {
  local src=$1 dst=$2
  [[ -r $src ]] || return 0
  mkdir -p -- "$(dirname -- "$dst")"
  if cat -- "$src" >"$dst.part" 2>/dev/null; then
    mv -f -- "$dst.part" "$dst"
  else
    rm -f -- "$dst.part"
  fi
}

# The PID and its descendants, breadth first.
tree_pids() {
  local -a queue=("$1")
  local -a children
  local have_children_files=1
  [[ -e /proc/$1/task/$1/children ]] || have_children_files=0
  while ((${#queue[@]} > 0)); do
    local p=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -d /proc/$p ]] || continue
    echo "$p"
    children=()
    if ((have_children_files)); then
      local f
      for f in /proc/"$p"/task/*/children; do
        # shellcheck disable=SC2207
        children+=($(cat -- "$f" 2>/dev/null || true))
      done
    else
      local s
      for s in /proc/[0-9]*/stat; do
        local line rest
        line=$(cat -- "$s" 2>/dev/null) || continue
        rest=${line##*) }  # fields after the command name: state ppid ...
        read -r _ ppid _ <<<"$rest"
        [[ $ppid == "$p" ]] && children+=("$(basename -- "$(dirname -- "$s")")")
      done
    fi
    queue+=("${children[@]}")
  done
}

# Directories from the leaf up to the mount point, leaf first, for cgroup path CG in a hierarchy mounted
# at MP whose mount root is ROOT (a bind-mounted sub-tree in containers).
cgroup_chain() {
  local cg=$1 root=$2 mp=$3 rel
  if [[ $root == / ]]; then
    rel=$cg
  elif [[ $cg == "$root" ]]; then
    rel=/
  elif [[ $cg == "$root"/* ]]; then
    rel=${cg#"$root"}
  else
    return 0
  fi
  rel=${rel%/}
  while :; do
    echo "$mp$rel"
    [[ -z $rel ]] && break
    rel=${rel%/*}
  done
}

# Unescapes mountinfo's octal escapes (\040 for a space).
unescape() { printf '%b' "${1//\\/\\0}"; }

capture_cgroups() {
  local out=$1 p=$2
  local mountinfo=/proc/$p/mountinfo
  [[ -r /proc/$p/cgroup && -r $mountinfo ]] || return 0
  local id controllers path
  while IFS=: read -r id controllers path; do
    local -a files=()
    local want_type="" want_controller=""
    if [[ $id == 0 && -z $controllers ]]; then
      want_type=cgroup2
      files=(memory.max memory.current cpu.max cpu.stat memory.events)
    else
      case ",$controllers," in
        *,memory,*) files+=(memory.limit_in_bytes memory.usage_in_bytes memory.oom_control) ;;
      esac
      case ",$controllers," in
        *,cpu,*) files+=(cpu.cfs_quota_us cpu.cfs_period_us cpu.stat) ;;
      esac
      ((${#files[@]} > 0)) || continue
      want_type=cgroup
      want_controller=${controllers%%,*}
    fi
    # The first matching mount: "id parent maj:min root mount_point options [optional...] - type source super".
    local line found=""
    while read -r line; do
      local -a f
      read -r -a f <<<"$line"
      local i=6
      while ((i < ${#f[@]})) && [[ ${f[i]} != - ]]; do i=$((i + 1)); done
      [[ ${f[i + 1]:-} == "$want_type" ]] || continue
      if [[ -n $want_controller && ",${f[i + 3]:-}," != *",$want_controller,"* ]]; then continue; fi
      found="$(unescape "${f[3]}") $(unescape "${f[4]}")"
      break
    done <"$mountinfo"
    [[ -n $found ]] || continue
    local mount_root=${found%% *} mount_point=${found#* }
    if [[ $mount_point != /sys/* ]]; then
      echo "capture_fixture: cgroup mount $mount_point is outside /sys; skipped" >&2
      continue
    fi
    local d name
    while read -r d; do
      [[ -n $d ]] || continue
      for name in "${files[@]}"; do copy "$d/$name" "$out/sys/${d#/sys/}/$name"; done
    done < <(cgroup_chain "$path" "$mount_root" "$mount_point")
  done </proc/"$p"/cgroup
}

# One reading of everything into OUT.
capture() {
  local out=$1
  mkdir -p -- "$out/proc" "$out/sys" "$out/etc"
  local f
  for f in stat meminfo diskstats cpuinfo loadavg uptime net/dev; do copy "/proc/$f" "$out/proc/$f"; done
  # proc/self in the tree is a directory (in the kernel's proc it is a link to the reader's own PID).
  copy /proc/$$/mountinfo "$out/proc/self/mountinfo"
  copy /proc/$$/statm "$out/proc/self/statm"

  local p t
  captured_pids=()
  for p in $(tree_pids "$pid"); do
    for f in stat statm status cgroup mountinfo; do copy "/proc/$p/$f" "$out/proc/$p/$f"; done
    [[ -e $out/proc/$p/stat ]] || continue  # gone while we looked
    captured_pids+=("$p")
    for t in /proc/"$p"/task/*; do
      t=${t##*/}
      if [[ -e /proc/$p/task/$t/children ]]; then
        copy "/proc/$p/task/$t/children" "$out/proc/$p/task/$t/children"
      else
        mkdir -p -- "$out/proc/$p/task/$t"
      fi
    done
  done

  local cpu=/sys/devices/system/cpu
  copy "$cpu/online" "$out/sys/devices/system/cpu/online"
  for f in "$cpu"/cpu[0-9]*; do
    [[ -d $f/topology ]] || continue
    local n=${f##*/}
    copy "$f/topology/core_cpus_list" "$out/sys/devices/system/cpu/$n/topology/core_cpus_list"
    copy "$f/topology/thread_siblings_list" "$out/sys/devices/system/cpu/$n/topology/thread_siblings_list"
  done
  for f in /sys/block/*; do
    [[ -e $f ]] || continue
    local b=${f##*/}
    mkdir -p -- "$out/sys/block/$b"
    if [[ -e $f/device ]]; then
      mkdir -p -- "$out/sys/block/$b/device"
      : >"$out/sys/block/$b/device/.keep"
    fi
  done

  capture_cgroups "$out" "$pid"
  copy /etc/os-release "$out/etc/os-release"
}

declare -a captured_pids
mkdir -p -- "$dir"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
capture "$dir"
t0_pids="${captured_pids[*]}"
t1_note=""
if [[ -n $second_reading ]]; then
  sleep "$second_reading"
  capture "$dir/t1"
  t1_note="Second reading: t1/, $second_reading s later; processes ${captured_pids[*]}."
fi

cat >"$dir/README.md" <<EOF
# Captured fixture tree

Captured by \`tools/capture_fixture.sh\` (command: \`$command_line\`, tree root PID $pid)
on $started, kernel \`$(uname -r)\` ($(uname -m)), $(nproc) CPUs online.

Process tree rooted at PID $pid: processes $t0_pids.
$t1_note

Layout: \`proc/\`, \`sys/\` and \`etc/\` hold what runmon's collectors read (see the header of
tools/capture_fixture.sh); \`proc/uptime\` is the boot clock at capture time, for tests' injected clocks.
EOF
echo "captured into $dir"
