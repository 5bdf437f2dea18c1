#!/usr/bin/env bash
# Replay fidelity (issue 22, docs/results/measurement-stack.md "Replaying recorded system calls"): record a traced
# `joj bench` run under strace (`joj syscalls record --bench-window`), replay the recording on a
# fresh scratch filesystem of the same kind (`joj syscalls replay`), and print the recorded run's
# own per-transaction figures beside the replay's: KiB of data, metadata and FS journal, and
# flushes. A row holds when each differs by at most 5 % (figures under 0.1 are compared absolutely).
# Usage: scripts/replayfidelity.sh [output-dir] [transactions] [timing]
#   (needs root and strace; JOJ=path/to/joj to use another build; about 6 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/replay-fidelity}
n=${2:-300}
timing=${3:-recorded}
mkdir -p "$out/traces"
joj=${JOJ:-./target/release/joj}
[ -x "$joj" ] || cargo build --release --locked -p joj-cli
# row FS NAME TRANSACTIONS BENCH-ARGS…: TRANSACTIONS is what the run counts (a file workload's
# are its records: --file-kib / --record-kib).
row() {
  local fs=$1 name=$2 txns=$3; shift 3
  echo "== $fs $name" >&2
  "$joj" syscalls record -o "$out/$fs-$name.jsonl" --force --bench-window --transactions "$txns" \
    -- "$joj" bench --fs "$fs" --trace --json --out "$out/traces" "$@" \
    > "$out/$fs-$name.bench.json"
  "$joj" syscalls replay "$out/$fs-$name.jsonl" --fs "$fs" --timing "$timing" --json \
    --out "$out/traces" > "$out/$fs-$name.replay.json"
}
for fs in ext4 xfs; do
  row "$fs" wal-insert "$n" -n "$n" -j wal --op insert
  row "$fs" delete-insert "$n" -n "$n" -j delete --op insert
  row "$fs" truncate-update "$n" -n "$n" -j truncate --op update
  row "$fs" persist-insert "$n" -n "$n" -j persist --op insert
  row "$fs" truncate-insert-2threads "$n" -n "$n" --threads 2 -j truncate --op insert
  row "$fs" file-fsync-randwrite 256 --op randwrite --file-sync fsync --file-kib 1024 --record-kib 4
done
python3 scripts/replayfidelity_table.py "$out"
