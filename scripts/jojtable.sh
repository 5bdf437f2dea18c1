#!/usr/bin/env bash
# Reproduce the JOJ tables of docs/results/measurement-stack.md: every journal mode, traced, on each filesystem.
# Usage: scripts/jojtable.sh [output-dir]   (needs root; takes a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/results}
mkdir -p "$out"
joj=./target/release/joj
[ -x "$joj" ] || cargo build --release --locked -p joj-cli
run() {
  local name=$1; shift
  echo "### $name"
  echo '```'
  echo "\$ joj compare $*"
  "$joj" compare "$@" --out "$out/$name" --save "$out/$name.json" --force 2>/dev/null | grep -v '^plot' | sed '/^$/d'
  echo '```'
}
for fs in ext4 ext4-extjournal xfs btrfs; do
  run "$fs-single" --fs "$fs" -n 1
  run "$fs-1000" --fs "$fs" -n 1000
done
run ext4-steady-1000 --fs ext4 -n 1000 --start steady
run ext4-fsync-1000 --fs ext4 -n 1000 --sync-call fsync
run ext4-fsync-single --fs ext4 -n 1 --sync-call fsync
run ext4-steady-single --fs ext4 -n 1 --start steady
