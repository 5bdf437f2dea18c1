#!/usr/bin/env bash
# The ATC'13 optimization matrix (Table 2 of "I/O Stack Optimization for Smartphones") in one
# command: every traced SQLite run the matrix needs, on this machine's loop devices, then the table
# (measured TPS and TPS modeled through the device profiles, each relative to Baseline, the
# paper's figure beside it) from scripts/atc13matrix_table.py.
# Usage: scripts/atc13matrix.sh [output-dir] [transactions]   (needs root; default 1,000 transactions)
#   Baseline = TRUNCATE journal + fsync; F = fdatasync; E = ext4's journal on a second loop device
#   (ext4-extjournal; modeled: data sdcard-2013, journal galaxy-s5); P = polled completion (model
#   only: joj replay --completion poll); W = WAL. xfs has no external-journal kind in joj.
# Each run is modeled as it runs (--device: host time measured in the run plus the device model,
# the kernel paced at the device's speed; --journal-device for ext4-extjournal, unpaced: the pacer
# models one device). A run already in the output dir (run.json and trace present) is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/atc13matrix}
n=${2:-1000}
joj=${JOJ:-./target/release/joj}
# fs:sync-call:journal-mode runs; each with --op insert and --op update.
runs=(
  ext4:fsync:truncate ext4:fdatasync:truncate ext4:fsync:wal
  ext4-extjournal:fsync:truncate ext4-extjournal:fdatasync:truncate ext4-extjournal:fdatasync:wal
  xfs:fsync:truncate xfs:fdatasync:truncate xfs:fsync:wal xfs:fdatasync:wal
)
for r in "${runs[@]}"; do
  IFS=: read -r fs call jm <<< "$r"
  for op in insert update; do
    d=$out/$fs-$call-$jm-$op
    if [[ -s $d/run.json ]] && compgen -G "$d/*.trace.jsonl" > /dev/null; then
      echo "have $d" >&2; continue
    fi
    rm -rf "$d"; mkdir -p "$d"
    echo "run $fs $call $jm $op (n=$n)" >&2
    dev=(--device sdcard-2013)
    [[ $fs == ext4-extjournal ]] && dev+=(--journal-device galaxy-s5)
    "$joj" bench --fs "$fs" --op "$op" -j "$jm" --sync-call "$call" -n "$n" --trace \
      "${dev[@]}" --out "$d" --json > "$d/run.json"
  done
done
JOJ=$joj python3 scripts/atc13matrix_table.py "$out" | tee "$out/table.md"
