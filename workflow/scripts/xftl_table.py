#!/usr/bin/env python3
"""The X-FTL curve of docs/results/ (Figure 5): one table per GC validity from the
`joj compare --json` documents of one grid (workflow rule xftl_cell, once scripts/xftltable.sh).

Usage: xftl_table.py DIR "K-LIST" "VALIDITY-LIST"   (documents DIR/v{V}-k{K}.json)
"""
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location(
    "hostpages", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostpages.py"))
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
