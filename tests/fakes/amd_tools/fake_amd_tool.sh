#!/bin/sh
# A fake rocm-smi or amd-smi for the AMD family's tests (tests/collectors/amd_tool_fallback_test.cpp):
# rocm_smi/rocm-smi and amd_smi/amd-smi call this script with their own name first, so a test puts one
# directory or both on the tool's PATH. It checks its arguments are the ones runmon passes (exit 64 with a
# usage message otherwise), appends "start <tool> <pid> <args>" to $RUNMON_FAKE_AMD_LOG when set, then
# behaves as $RUNMON_FAKE_AMD_BEHAVIOUR says:
#   print (default)  prints $RUNMON_FAKE_AMD_FIXTURE (for `amd-smi list`, $RUNMON_FAKE_AMD_SMI_LIST)
#   hang             never ends (sleeps; only the runner's deadline ends it)
#   garbage          prints rocm-smi's text output, not JSON
#   fail             says why on stderr and exits 2
#   flood            prints JSON-looking lines forever (past any output cap)
#   empty            prints nothing on stdout, an error on stderr, exits 0: Debian's rocm-smi without a GPU
tool=$1
shift
case "$tool" in
  rocm-smi)
    [ "$*" = "-a --showmeminfo vram gtt --json" ] || { echo "usage: rocm-smi: unexpected arguments: $*" >&2; exit 64; } ;;
  amd-smi)
    case "$1 ${*##* }" in
      "list --json" | "metric --json") ;;
      *) echo "usage: amd-smi: unexpected arguments: $*" >&2; exit 64 ;;
    esac ;;
  *) echo "fake_amd_tool.sh: unknown tool $tool" >&2; exit 64 ;;
esac
[ -n "$RUNMON_FAKE_AMD_LOG" ] && echo "start $tool $$ $*" >> "$RUNMON_FAKE_AMD_LOG"
case "${RUNMON_FAKE_AMD_BEHAVIOUR:-print}" in
  print)
    if [ "$tool $1" = "amd-smi list" ]; then exec cat "$RUNMON_FAKE_AMD_SMI_LIST"; fi
    exec cat "$RUNMON_FAKE_AMD_FIXTURE" ;;
  hang) exec sleep 100000 ;;
  garbage) printf 'GPU[0]\t\t: GPU use (%%): 12\nGPU[0]\t\t: GPU memory use (%%): 3\n' ;;
  fail) echo "ERROR: amdgpu driver not loaded: no such device" >&2; exit 2 ;;
  flood) exec yes '{"card0": {"GPU use (%)": "1"},' ;;
  empty) echo "ERROR:root:Driver not initialized (amdgpu not found in modules)" >&2 ;;
  *) echo "fake_amd_tool.sh: unknown behaviour $RUNMON_FAKE_AMD_BEHAVIOUR" >&2; exit 64 ;;
esac
