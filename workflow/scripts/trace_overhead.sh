#!/usr/bin/env bash
# What `joj trace` costs a program (issue 34, point 7; docs/measurement.md, "Per-call costs").
#
#   trace_overhead.sh PROGRAM ROUNDS VARIANT...
#
# PROGRAM: `app MODE` (trace_overhead/app.py: 1,000 single-row commits in journal mode MODE,
# timed per commit) or `micro` (trace_overhead/micro.py: nanoseconds per call of single system
# calls). ROUNDS: 1–100. Each round runs every
# VARIANT once, in order, alternating:
#   base       the program untraced, on a fresh ext4 over a loop device on a file in /dev/shm,
#              made as joj makes its scratch ext4
#   blk        the same with the block events joj records (block_rq_issue, block_rq_complete,
#              block_bio_queue, filtered to the device) in a tracefs instance of its own
#   pid        the same with the process filter joj's syscall trace uses and no event: a tracefs
#              instance whose set_event_pid names the program (option event-fork), which hooks
#              the kernel's every context switch and wake-up
#   sys        the same with the syscall events joj's trace records (crates/joj-linux/src/
#              syscall_trace.rs: CALLS on entry and exit, the opens' exits, the closes' entries,
#              fcntl's entry filtered to its copying commands, the task events) in an instance of
#              their own, with no process filter: every task's calls of those kinds are recorded
#   sysf       the same, each event's filter listing the program (`common_pid == PID`, after
#              the event's own condition), as joj's trace filters them
#   NAME=JOJ   `JOJ trace -- python3 PROGRAM` (any joj binary, e.g. two builds to compare;
#              NAME: a-z, 0-9, _ and -, at most 32)
# AWAKE=1 holds the CPUs out of their idle states for the whole run (/dev/cpu_dma_latency 0):
# on this VM a halted CPU's wake-up is most of a sync's latency, and moves between runs.
# Prints the medians of every figure the program reports, and the ratio to `base` (and for blk,
# sys and sysf the events the instance recorded in each run); the runs stay
# in the work directory it names. Root; everything else it makes it removes, also when a run
# fails. Arguments are checked before it makes anything.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)/trace_overhead
refuse() { echo "trace_overhead: $1" >&2; exit 2; }
[ $# -ge 3 ] || refuse "usage: trace_overhead.sh app MODE|micro ROUNDS VARIANT..."
prog=$1; shift
args=()
case $prog in
  app)
    [[ "$1" =~ ^(delete|truncate|persist|wal|off|memory)$ ]] \
      || refuse "MODE is one of delete, truncate, persist, wal, off, memory, not '$1'"
    args=("$1"); shift;;
  micro) ;;
  *) refuse "PROGRAM is app or micro, not '$prog'";;
esac
[ $# -ge 2 ] || refuse "give ROUNDS and at least one VARIANT"
rounds=$1; shift
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 100 ] \
  || refuse "ROUNDS is 1–100, not '$rounds'"
variants=("$@")
declare -A named=()
for i in "${!variants[@]}"; do
  v=${variants[$i]}
  name=${v%%=*}
  if [[ $v == *=* ]]; then
    [[ "$name" =~ ^[a-z0-9_-]{1,32}$ ]] || refuse "a variant's NAME is a-z, 0-9, _ and -, at most 32: '$name'"
    [[ "$name" =~ ^(base|blk|pid|sys|sysf)$ ]] && refuse "'$name' names an untraced variant, not a joj"
    [ -f "${v#*=}" ] && [ -x "${v#*=}" ] || refuse "$name: '${v#*=}' is not an executable file"
    variants[$i]="$name=$(realpath "${v#*=}")"
  else
    [[ "$v" =~ ^(base|blk|pid|sys|sysf)$ ]] || refuse "unknown variant '$v' (base, blk, pid, sys, sysf or NAME=JOJ)"
  fi
  [ -z "${named[$name]:-}" ] || refuse "the variant '$name' is named twice"
  named[$name]=1
done
[ "$(id -u)" = 0 ] || refuse "runs as root (loop devices, mounts, tracefs)"
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/joj-overhead.XXXXXX")
img=$(mktemp /dev/shm/joj-overhead.XXXXXX)
out=$work/runs.jsonl; mnt=$work/mnt; mkdir -p "$mnt"
inst=/sys/kernel/tracing/instances/joj-overhead-$$
events=(block_rq_issue block_rq_complete block_bio_queue)
# The syscall events of joj's trace (crates/joj-linux/src/syscall_trace.rs): entry and exit,
# exit only, entry only.
calls=(fsync fdatasync sync_file_range syncfs sync write pwrite64 writev pwritev pwritev2
  sendfile64 copy_file_range splice dup dup2 dup3 fcntl ftruncate)
exit_only=(openat open creat openat2)
enter_only=(close close_range)
fcntl_own='cmd == 0 || cmd == 2 || cmd == 1030'
awake=""; loop=""; rundir=""
# Everything is tried, whatever fails (set -e is off here): a program still in the mount when
# a signal came is killed first, so the mount can go.
cleanup() {
  set +e
  [ -n "$awake" ] && kill "$awake" 2>/dev/null
  # -M: only when it is a mount point (else -m means the filesystem holding it: /tmp's).
  mountpoint -q "$mnt" && fuser -k -M -m "$mnt" > /dev/null 2>&1
  if [ -d "$inst" ]; then
    echo 0 > "$inst/events/enable"
    rmdir "$inst"
  fi
  mountpoint -q "$mnt" && umount "$mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -f "$img"
  [ -n "$rundir" ] && rm -rf "$rundir"
  rmdir "$mnt" 2>/dev/null
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ "${AWAKE:-0}" = 1 ]; then
  $py -c 'import os, struct, signal; fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY); os.write(fd, struct.pack("i", 0)); signal.pause()' &
  awake=$!
  sleep 0.3
  kill -0 "$awake" 2>/dev/null || refuse "AWAKE=1: could not hold /dev/cpu_dma_latency at 0"
fi
# Enable the syscall events in $inst, each filtered to the program $1 for sysf ($v).
syscall_events() {
  local c own f prog_pid=$1
  echo 8192 > "$inst/buffer_size_kb"; echo mono > "$inst/trace_clock"
  en() {  # en EVENT OWN-CONDITION
    [ -d "$inst/events/$1" ] || return 0
    f=$2
    if [ "$v" = sysf ]; then f=${2:+($2) && }"(common_pid == $prog_pid)"; fi
    [ -z "$f" ] || echo "$f" > "$inst/events/$1/filter"
    echo 1 > "$inst/events/$1/enable"
  }
  for c in "${calls[@]}"; do
    own=""; [ "$c" = fcntl ] && own=$fcntl_own
    en "syscalls/sys_enter_$c" "$own"; en "syscalls/sys_exit_$c" ""
  done
  for c in "${exit_only[@]}"; do en "syscalls/sys_exit_$c" ""; done
  for c in "${enter_only[@]}"; do en "syscalls/sys_enter_$c" ""; done
  en task/task_newtask ""; en sched/sched_process_exec ""
}
one() {
  local v=$1 res=$work/one.json el
  rm -f "$res"
  if [[ $v == *=* ]]; then
    local joj=${v#*=}
    rundir=$(mktemp -d "${TMPDIR:-/tmp}/joj-overhead-run.XXXXXX")
    cp "$here/$prog.py" "$rundir/"
    (cd "$rundir" && "$joj" trace --json --out "$rundir/out" -- $py "$rundir/$prog.py" "${args[@]}" "$res" > "$rundir/j.json")
    el=$($py -c "import json; print(int(json.load(open('$rundir/j.json'))['elapsed_s'] * 1000))")
    rm -rf "$rundir"; rundir=""
  else
    truncate -s 1G "$img"  # made by mktemp above, after the arguments were checked
    mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$img"
    loop=$(losetup -f --show "$img"); mount "$loop" "$mnt"; cp "$here/$prog.py" "$mnt/"
    if [ "$v" = blk ]; then
      local maj min
      mkdir "$inst"; read -r maj min < <(stat -c '%t %T' "$loop")
      echo 8192 > "$inst/buffer_size_kb"; echo mono > "$inst/trace_clock"
      for e in "${events[@]}"; do
        echo "dev == $(( (16#$maj << 20) | 16#$min ))" > "$inst/events/block/$e/filter"
        echo 1 > "$inst/events/block/$e/enable"
      done
    fi
    local s e; s=$(date +%s%N)
    if [[ "$v" =~ ^(pid|sys|sysf)$ ]]; then
      # The program, stopped before it runs until the instance names it.
      local p
      (cd "$mnt" && kill -STOP "$BASHPID" && exec $py "$prog.py" "${args[@]}" "$res") &
      p=$!
      until [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = T ]; do sleep 0.01; done
      mkdir "$inst"
      if [ "$v" = pid ]; then
        echo "$p" > "$inst/set_event_pid"; echo 1 > "$inst/options/event-fork"
      else
        syscall_events "$p"
      fi
      s=$(date +%s%N); kill -CONT "$p"; wait "$p"
    else
      (cd "$mnt" && $py "$prog.py" "${args[@]}" "$res")
    fi
    e=$(date +%s%N); el=$(( (e - s) / 1000000 ))
    if [ -d "$inst" ]; then
      echo 0 > "$inst/events/enable"
      [ "$v" = pid ] || echo "$v: $(awk '/^entries/ {n += $2} END {print n}' "$inst"/per_cpu/cpu*/stats) events recorded"
      rmdir "$inst"
    fi
    umount "$mnt"; losetup -d "$loop"; loop=""; : > "$img"
  fi
  $py -c "import json; j = json.loads(open('$res').read().splitlines()[-1]); j['variant'] = '${v%%=*}'; j['el_ms'] = $el; print(json.dumps(j))" >> "$out"
  echo "${v%%=*} $el ms"
}
for _ in $(seq "$rounds"); do for v in "${variants[@]}"; do one "$v"; done; done
$py - "$out" <<'PY'
import collections, json, statistics, sys
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line); by[r.pop('variant')].append(r)
keys = list(next(iter(by.values()))[0])
base = {k: statistics.median(r[k] for r in by['base']) for k in keys} if 'base' in by else None
print('variant runs ' + ' '.join(keys))
for v, rs in by.items():
    cells = []
    for k in keys:
        m = statistics.median(r[k] for r in rs)
        rel = f' ({(m / base[k] - 1) * 100:+.0f} %)' if base and base[k] else ''
        cells.append(f'{m:.0f}{rel}')
    print(v, len(rs), ' '.join(cells))
PY
echo "runs: $out"
