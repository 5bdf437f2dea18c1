#!/usr/bin/env bash
# Reproduce the WALDIO tables of docs/results/waldio.md: stock WAL against every WALDIO mode, traced,
# on ext4 (ordered) on a loop device; insert, update and delete; fresh and steady state.
# Usage: scripts/waldiotable.sh [output-dir] [transactions]   (needs root; a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/waldio}
n=${2:-1000}
mkdir -p "$out"
joj=./target/release/joj
[ -x "$joj" ] || cargo build --release --locked -p joj-cli
modes=wal,waldio,waldio-gs,waldio-fua,waldio-fua-gs,waldio-normal,waldio-normal-gs
run() {
  local name=$1; shift
  echo "### $name"
  echo '```'
  echo "\$ joj compare $*"
  "$joj" compare "$@" --out "$out/$name" --save "$out/$name.json" --force 2>/dev/null | grep -v '^plot' | sed '/^$/d'
  echo '```'
}
for start in fresh steady; do
  for op in insert update delete; do
    run "ext4-$op-$start" --fs ext4 -n "$n" --op "$op" --start "$start" --modes "$modes"
  done
done
