#!/usr/bin/env bash
# The i-FTL paper's Figures 7 and 8 on the openssd-iftl profile, in one command: every mode on
# the same profile — i-FTL (`-j iftl`), X-FTL (`-j xftl`) and the paper's baseline (SQLite journal
# off on ext4 ordered, its block trace replayed through the profile) — for insert, update and
# delete; i-FTL and X-FTL at 1-8 threads; the withdraw/deposit application transactions; X-FTL's unsourced per-commit and per-flush map-page
# counts swept (sensitivity). Then the tables (scripts/iftltable.py).
# Usage: scripts/iftltable.sh [output-dir] [transactions]   (needs root for the ext4 baseline;
#   default 10,000 transactions, the paper's)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-joj-out/iftl}
n=${2:-10000}
joj=${JOJ:-./target/release/joj}
profile=crates/joj-device/profiles/openssd-iftl.json
mkdir -p "$out"
for op in insert update delete; do
  for j in iftl xftl; do
    echo "fig7 $j $op (n=$n)" >&2
    "$joj" bench -j "$j" --device "$profile" -n "$n" --op "$op" --json > "$out/fig7-$j-$op.json"
  done
  echo "fig7 baseline (ext4, journal off) $op (n=$n)" >&2
  "$joj" bench --fs ext4 -j off --device "$profile" -n "$n" --op "$op" --json \
    > "$out/fig7-baseline-$op.json"
done
for t in 1 2 3 4 5 6 7 8; do
  for j in iftl xftl; do
    echo "fig8 $j threads=$t (n=$n in all)" >&2
    "$joj" bench -j "$j" --device "$profile" -n "$n" -t "$t" --op insert --json \
      > "$out/fig8-$j-$t.json"
  done
done
# The paper's withdraw/deposit: application transactions over two databases and a ledger file.
for j in iftl xftl; do
  echo "withdraw/deposit $j (n=$n)" >&2
  "$joj" apptxn -j "$j" --device "$profile" -n "$n" --json > "$out/wd-$j.json"
done
# X-FTL's firmware counts are the 8 KiB openssd profile's (unsourced for this board): sweep them.
for c in 0 5 10 20; do
  for f in 0 27; do
    p=$out/openssd-iftl-commit$c-flush$f.json
    python3 - "$profile" "$p" "$c" "$f" <<'PY'
import json, sys
src, dst, c, f = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = json.load(open(src))
p["name"] = f"openssd-iftl-commit{c}-flush{f}"
p["ftl"]["commit_meta_pages"] = c
p["ftl"]["flush_meta_pages"] = f
json.dump(p, open(dst, "w"), indent=1)
PY
    echo "sensitivity xftl commit_meta_pages=$c flush_meta_pages=$f" >&2
    "$joj" bench -j xftl --device "$p" -n "$n" --op insert --json > "$out/sens-xftl-c$c-f$f.json"
  done
done
# The per-command overhead (30 us, not measured for the Barefoot controller) for both devices.
for o in 30000 300000 1000000 3000000; do
  p=$out/openssd-iftl-overhead$o.json
  python3 - "$profile" "$p" "$o" <<'PY'
import json, sys
src, dst, o = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = json.load(open(src))
p["name"] = f"openssd-iftl-overhead{o}"
p["timing"]["command_overhead_ns"] = o
json.dump(p, open(dst, "w"), indent=1)
PY
  for j in iftl xftl; do
    echo "sensitivity $j command_overhead_ns=$o" >&2
    "$joj" bench -j "$j" --device "$p" -n "$n" --op insert --json > "$out/sens-$j-o$o.json"
  done
done
python3 scripts/iftltable.py "$out"
