#!/usr/bin/python3
"""Saved results with figures no run makes, for `joj report`.

usage: report_extreme_floats.py BENCH.json COMPARE.json OUTDIR

Writes OUTDIR/bench-1e308.json (BENCH with host.elapsed_s = 1e308, or host.cpu_s = -1e308 in
bench-neg.json) and OUTDIR/compare-tiny.json (COMPARE with rows[0].block_per_txn.write_bytes
= 5e-324). `joj report OUTDIR -o p.html` writes the page (exit 0) and shows "inf µs run-queue
delay" / "-inf" and an `inf` ratio in the comparison's text, where H6 refuses such figures
before the compare plot ("not a figure between 0 and …").
"""
import json
import os
import sys

bench, compare, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
b = json.load(open(bench))
b["host"]["elapsed_s"] = 1e308
json.dump(b, open(os.path.join(out, "bench-1e308.json"), "w"))
b = json.load(open(bench))
b["host"]["cpu_s"] = -1e308
json.dump(b, open(os.path.join(out, "bench-neg.json"), "w"))
c = json.load(open(compare))
c["rows"][0]["block_per_txn"]["write_bytes"] = 5e-324
json.dump(c, open(os.path.join(out, "compare-tiny.json"), "w"))
