#!/usr/bin/env bash
# Reproduce the X-FTL curve of docs/results/x-ftl.md: the synthetic workload (Table 1's) for k = 1..20
# pages per transaction, fresh and at 30 / 50 / 70 % GC validity, in delete, wal and xftl mode,
# every row on one device profile (galaxy-s5, or $JOJ_DEVICE). Prints one table per validity and
# keeps every JSON document.
# Usage: [JOJ_DEVICE=openssd] [JOJ_COMPARE_ARGS="--sync-call fsync --pace"] \
#        scripts/xftltable.sh [output-dir] [k-list] [validity-list]
#        (needs root; about 20 min on galaxy-s5, 12 min on openssd; paced, about the modeled time)
# JOJ_COMPARE_ARGS: more options for every `joj compare` (split on spaces).
set -euo pipefail
cd "$(dirname "$0")/.."
device=${JOJ_DEVICE:-galaxy-s5}
read -r -a extra <<<"${JOJ_COMPARE_ARGS:-}"
out=${1:-joj-out/xftl}
ks=${2:-"$(seq -s ' ' 1 20)"}
validities=${3:-"fresh 30 50 70"}
mkdir -p "$out"
joj=./target/release/joj
[ -x "$joj" ] || cargo build --release --locked -p joj-cli
for v in $validities; do
  aging=()
  [ "$v" = fresh ] || aging=(--gc-validity "$v")
  for k in $ks; do
    doc="$out/v$v-k$k.json"
    [ -s "$doc" ] && continue
    echo "validity $v, k = $k" >&2
    "$joj" compare --fs ext4 --device "$device" --workload xftl-synthetic --pages-per-txn "$k" \
      --page-size 8192 -n 1000 --modes delete,wal,xftl "${aging[@]}" "${extra[@]}" --json >"$doc.part" 2>"$out/v$v-k$k.log"
    mv "$doc.part" "$doc"
  done
done
python3 - "$out" "$ks" "$validities" <<'PY'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("hostpages", "scripts/hostpages.py")
hostpages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hostpages)
out, ks, vs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
for v in vs:
    print(f"\n#### GC validity: {v if v == 'fresh' else v + ' %'}\n")
    print("| k | delete txn/s | wal txn/s | xftl txn/s | wal / xftl time | delete / xftl time "
          "| xftl / wal host writes | same, paper count | GC runs d / w / x |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for k in ks:
        rows = {r["mode"]: r for r in json.load(open(f"{out}/v{v}-k{k}.json"))["rows"]}
        dev = {m: rows[m]["device"] for m in ("delete", "wal", "xftl")}
        t = {m: dev[m]["modeled_s"] for m in dev}
        h = {m: dev[m]["host_write_bytes"] for m in dev}
        c = {m: sum(hostpages.counts(rows[m])[:2]) for m in dev}
        print(f"| {k} | {dev['delete']['modeled_ops_per_sec']:.0f} | {dev['wal']['modeled_ops_per_sec']:.0f} "
              f"| {dev['xftl']['modeled_ops_per_sec']:.0f} | {t['wal'] / t['xftl']:.2f} "
              f"| {t['delete'] / t['xftl']:.2f} | {h['xftl'] / h['wal']:.2f} | {c['xftl'] / c['wal']:.2f} "
              f"| {dev['delete']['gc_runs']} / {dev['wal']['gc_runs']} / {dev['xftl']['gc_runs']} |")
PY
