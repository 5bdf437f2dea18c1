#!/usr/bin/env bash
# What `joj trace`'s surroundings cost a program before any of its observers acts (issue 34,
# point 7; docs/measurement.md, "Cost of watching"): an app (1,000 single-row commits from
# Python, APP) runs untraced on a fresh ext4 over a loop device in /dev/shm, with one part of
# those surroundings added at a time, in alternating rounds:
#   base    nothing added
#   ovl     the command in an overlay whose upper layer is on the ext4 (as joj trace runs it)
#   blk     the block events joj trace records (issue, complete, bio queue) on the loop device
#   poll1   a process waking every 1 ms to read a tracefs file, as joj trace's events thread
#   poll10  the same every 10 ms
#   bpf     a BPF observer (bpf_observer/): BPF programs on the syscall tracepoints record the
#           app's opens and unlinks with their paths, writes, syncs and closes, and ext4's
#           ext4_remove_blocks of the scratch filesystem, into a ring buffer drained every 20 ms
#           — what `joj trace` stops for or records for this app's calls, seen without stopping
#           it (needs clang, libbpf-dev); a run whose app fails stops the script
#   bpfblk  the same observer also taking the block events (use without blk)
#   bpfoff  the observer's loader with no program: the app timed as the bpf parts time it
#   all     ovl + blk + poll1;  all10: ovl + blk + poll10;  pairs: ovl+blk, ovl+poll1, blk+poll1,
#           ovl+blk+bpf, ovl+bpfblk, …
# Prints one line a run (variant, milliseconds) and the medians; with an observer, what it
# received in its last run (events by kind, paths that came out empty, events lost for want of
# room). Root; changes nothing it does not remove.
# Usage: trace_floor.sh APP.py [MODE] [ROUNDS] [VARIANTS…]
set -euo pipefail
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: trace_floor.sh APP.py [MODE] [ROUNDS] [VARIANTS…] (APP.py a file)" >&2; exit 2; }
app=$(realpath "$1"); mode=${2:-delete}; rounds=${3:-6}; shift $(( $# < 3 ? $# : 3 ))
variants=("$@"); [ ${#variants[@]} -gt 0 ] || variants=(base ovl blk poll1 poll10 all)
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 100 ] \
  || { echo "trace_floor: ROUNDS is 1–100, not '$rounds'" >&2; exit 2; }
[[ "$mode" =~ ^(delete|truncate|persist|wal|off|memory)$ ]] \
  || { echo "trace_floor: MODE is a journal mode (delete, truncate, persist, wal, off, memory), not '$mode'" >&2; exit 2; }
for v in "${variants[@]}"; do
  [[ "$v" =~ ^(base|all|all10|(ovl|blk|poll1|poll10|bpf|bpfblk|bpfoff)(\+(ovl|blk|poll1|poll10|bpf|bpfblk|bpfoff))*)$ ]] \
    || { echo "trace_floor: unknown variant '$v'" >&2; exit 2; }
  [[ "$v" =~ (^|\+)poll1(\+|$) && "$v" =~ (^|\+)poll10(\+|$) ]] && { echo "trace_floor: '$v' has two readers" >&2; exit 2; }
  [ "$(tr + '\n' <<< "$v" | sort | uniq -d)" = "" ] || { echo "trace_floor: '$v' names a part twice" >&2; exit 2; }
  [ "$(grep -o bpf <<< "$v" | wc -l)" -le 1 ] || { echo "trace_floor: '$v' has two observers" >&2; exit 2; }
  [[ "$v" =~ (^|\+)blk(\+|$) && "$v" == *bpfblk* ]] && { echo "trace_floor: '$v' takes the block events twice" >&2; exit 2; }
  if [[ "$v" == *bpf* ]]; then
    for t in clang:clang /usr/include/bpf/libbpf.h:libbpf-dev; do
      command -v "${t%%:*}" >/dev/null 2>&1 || [ -e "${t%%:*}" ] \
        || { echo "trace_floor: '$v' needs ${t##*:} (apt-get install ${t##*:})" >&2; exit 2; }
    done
  fi
done
[ "$(id -u)" = 0 ] || { echo "trace_floor: needs root (loop devices, mounts, tracefs)" >&2; exit 2; }
work=$(mktemp -d /tmp/joj-floor.XXXXXX)
img=/dev/shm/joj-floor-$$.img; mnt=$work/mnt; low=$work/lower; ov=$work/ovl
inst=/sys/kernel/tracing/instances/joj-floor-$$
# Everything a run makes is found again here, also after a failed run (whose shell variables
# are gone): the reader by its pid file, the loop device by its image.
cleanup() {
  set +e
  [ -s "$work/poll.pid" ] && kill "$(cat "$work/poll.pid")" 2>/dev/null
  mountpoint -q "$ov" && umount "$ov"; mountpoint -q "$mnt" && umount "$mnt"
  [ -e "$img" ] && losetup -j "$img" -O NAME -n | xargs -r -n1 losetup -d
  [ -d "$inst" ] && { for e in block_rq_issue block_rq_complete block_bio_queue; do
    echo 0 > "$inst/events/block/$e/enable"; done; rmdir "$inst"; }
  rm -rf "$work" "$img"
}
trap cleanup EXIT
mkdir -p "$mnt" "$low" "$ov"; cp "$app" "$low/"
cat > "$work/poll.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int c, char **v) {
    long us = atol(v[1]);
    int fd = open("/sys/kernel/tracing/per_cpu/cpu0/stats", O_RDONLY);
    if (fd < 0) { perror("poll: /sys/kernel/tracing/per_cpu/cpu0/stats"); return 1; }
    char b[4096];
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    for (;;) {
        nanosleep(&t, 0);
        for (int i = 0; i < 2; i++) {
            lseek(fd, 0, SEEK_SET);
            if (read(fd, b, sizeof b) < 0) return 1;
        }
    }
}
EOF
cc -O2 -o "$work/poll" "$work/poll.c"
here=$(dirname "$(realpath "$0")")
if [[ " ${variants[*]} " == *bpf* ]]; then
  clang -O2 -g -target bpf -I"/usr/include/$(cc -print-multiarch)" -c "$here/bpf_observer/observer.bpf.c" -o "$work/observer.bpf.o"
  cc -O2 -Wall -pthread -o "$work/observer" "$here/bpf_observer/observer.c" -lbpf
fi
events=(block_rq_issue block_rq_complete block_bio_queue)
parts() { case $1 in all) echo "ovl blk poll1";; all10) echo "ovl blk poll10";; *) echo "${1//+/ }";; esac; }
has() { case " $(parts "$2") " in *" $1 "*) return 0;; *) return 1;; esac; }
one() {
  local v=$1 dir=$mnt loop
  truncate -s 1G "$img"
  mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$img"
  loop=$(losetup -f --show "$img"); mount "$loop" "$mnt"
  if has poll1 "$v"; then "$work/poll" 1000 & echo $! > "$work/poll.pid"; fi
  if has poll10 "$v"; then "$work/poll" 10000 & echo $! > "$work/poll.pid"; fi
  if has ovl "$v"; then
    mkdir -p "$mnt/upper" "$mnt/work"
    mount -t overlay overlay -o "lowerdir=$low,upperdir=$mnt/upper,workdir=$mnt/work" "$ov"; dir=$ov
  fi
  if has blk "$v"; then
    mkdir "$inst"; read -r maj min < <(stat -c '%t %T' "$loop")
    local kd=$(( (16#$maj << 20) | 16#$min ))
    echo 8192 > "$inst/buffer_size_kb"
    for e in "${events[@]}"; do echo "dev == $kd" > "$inst/events/block/$e/filter"; echo 1 > "$inst/events/block/$e/enable"; done
  fi
  local s e
  if [[ "$v" == *bpf* ]]; then
    # the observer starts the app once its programs are attached, and times it itself; it fails
    # (and so does this script) when the app fails
    local what=calls out; has bpfoff "$v" && what=off; has bpfblk "$v" && what=blocks
    out=$("$work/observer" "$what" $(( (16#$(stat -c %t "$loop") << 20) | 16#$(stat -c %T "$loop") )) \
      "$dir" /usr/bin/python3 "$app" "$mode")
    s=0; e=$(( $(head -1 <<< "$out") * 1000000 )); tail -1 <<< "$out" > "$work/observed.$v"
  else
    s=$(date +%s%N); (cd "$dir" && /usr/bin/python3 "$app" "$mode"); e=$(date +%s%N)
  fi
  if [ -s "$work/poll.pid" ]; then
    kill "$(cat "$work/poll.pid")"; wait "$(cat "$work/poll.pid")" 2>/dev/null || true; : > "$work/poll.pid"
  fi
  if [ -d "$inst" ]; then
    for ev in "${events[@]}"; do echo 0 > "$inst/events/block/$ev/enable"; done; rmdir "$inst"
  fi
  mountpoint -q "$ov" && umount "$ov"
  umount "$mnt"; losetup -d "$loop"; rm -f "$img"
  echo "$v $(( (e - s) / 1000000 ))"
}
# Not piped: each run's shell is this one, so a failed run stops here and cleanup finds its parts.
for _ in $(seq 1 "$rounds"); do for v in "${variants[@]}"; do one "$v" >> "$work/runs"; tail -1 "$work/runs"; done; done
python3 - "$work/runs" <<'EOF'
import statistics, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, ms = line.split()
    runs[v].append(int(ms))
base = statistics.median(runs['base']) if 'base' in runs else None
for v, ms in runs.items():
    m = statistics.median(ms)
    rel = f' ({(m / base - 1) * 100:+.1f} % against base)' if base else ''
    print(f'{v}: median {m:.0f} ms of {len(ms)}{rel}')
EOF
for f in "$work"/observed.*; do if [ -e "$f" ]; then echo "${f##*/observed.}, events of its last run: $(cat "$f")"; fi; done
