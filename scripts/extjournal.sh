#!/usr/bin/env bash
# Capture the eight traced runs of the ATC'13 external-journal (E) table of docs/results/atc13.md:
# ext4 and ext4-extjournal, fsync and fdatasync, insert and update, TRUNCATE, 1,000 transactions.
# Usage: scripts/extjournal.sh [output-dir]   (needs root; a few minutes on 2 cores)
# Then: python3 scripts/extjournal_table.py OUTPUT-DIR [PROFILE]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/extjournal}
joj=${JOJ:-./target/debug/joj}
for fs in ext4 ext4-extjournal; do
  for call in fsync fdatasync; do
    for op in insert update; do
      d=$out/$fs-$call-$op
      mkdir -p "$d"
      "$joj" bench --fs "$fs" --op "$op" -j truncate --sync-call "$call" -n 1000 --trace \
        --out "$d" --json > "$d/run.json"
    done
  done
done
