#!/usr/bin/env bash
# Reproduce the crash-state table of docs/results/measurement-stack.md: `joj crash --fs` for every journal mode on
# ext4 (ordered) with at least 10,000 crash states each, and at least 2,000 each on
# ext4-writeback, ext4-datajournal, xfs and btrfs (and ext4-nojournal, an extra); the stock modes at synchronous=NORMAL and
# the waldio modes with a window; then the canaries and controls.
# Usage: scripts/crashstates.sh [output-dir] [ext4-states] [other-states]
#   (needs root; about an hour on 2 cores; one JSON document per row in output-dir)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/crash-states}
big=${2:-10000}
small=${3:-2000}
mkdir -p "$out"
joj=./target/release/joj
[ -x "$joj" ] || cargo build --release --locked -p joj-cli
run() {
  local fs=$1 name=$2 states=$3; shift 3
  echo "== $fs $name" >&2
  # A violation or an uncaught canary exits non-zero; the row is kept and the table shows it.
  "$joj" crash --fs "$fs" --states "$states" --seed 42 --json --save "$out/$fs-$name.json" \
    --force --save-dir "$out/violations" "$@" > /dev/null || echo "   (exit $?)" >&2
}
for mode in wal delete truncate persist waldio waldio-fua; do
  run ext4 "$mode" "$big" -j "$mode" -n 300
done
run ext4 delete-extra "$big" -j delete --synchronous extra -n 300
for mode in waldio-gs waldio-normal; do
  run ext4 "$mode" "$small" -j "$mode" -n 300
done
for mode in wal delete truncate persist; do
  run ext4 "$mode-normal" "$small" -j "$mode" --synchronous normal -n 300
done
for fs in ext4-writeback ext4-datajournal xfs btrfs; do
  for mode in wal delete truncate persist waldio waldio-fua; do
    run "$fs" "$mode" "$small" -j "$mode" -n 150
  done
done
# The no-journal line (an extra: without a journal, crash consistency is fsck's job).
for mode in wal waldio; do
  run ext4-nojournal "$mode" "$small" -j "$mode" -n 150
done
run ext4 canary-skip-sync "$small" -j waldio --fs-canary skip-sync -n 100
run ext4 canary-fallocate-flush-only "$small" -j waldio --fs-canary fallocate-flush-only -n 100
run ext4 canary-sync-off "$small" -j wal --fs-canary sync-off -n 100
run ext4 control-fallocate-only "$small" -j waldio --fs-canary fallocate-only -n 100
run ext4 control-flush-only "$small" -j waldio --fs-canary flush-only -n 100
python3 scripts/crashstates_table.py "$out"/*.json
