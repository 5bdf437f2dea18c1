#!/usr/bin/env python3
"""Tables of the workflow's i-FTL rules (once scripts/iftltable.sh): i-FTL's Figures 7 and 8 next to the paper's figures."""
import json
import sys
from pathlib import Path

out = Path(sys.argv[1])


def load(name):
    return json.loads((out / name).read_text())


def tps(doc):
    return doc["device"]["modeled_ops_per_sec"] if doc["device"]["ops_basis"] == "transactions" \
        else doc["transactions"] / doc["device"]["modeled_s"]


def mapping(doc):
    x = doc.get("xftl") or {}
    return x.get("mapping_programs_per_host_page")


PAPER_BASE = {"insert": 2.77, "update": 2.79, "delete": 3.30}
print("Figure 7: modeled TPS on openssd-iftl (transactions / modeled device time)\n")
print("| op | baseline (ext4, journal off) | X-FTL | i-FTL | i-FTL / baseline (paper) | "
      "i-FTL / X-FTL (paper: +10 % on average) |")
print("|---|---:|---:|---:|---:|---:|")
gains = []
for op in ["insert", "update", "delete"]:
    b, x, i = (tps(load(f"fig7-{m}-{op}.json")) for m in ["baseline", "xftl", "iftl"])
    gains.append(i / x - 1)
    print(f"| {op} | {b:.1f} | {x:.1f} | {i:.1f} | {i / b:.2f}× ({PAPER_BASE[op]:.2f}×) | "
          f"{100 * (i / x - 1):+.1f} % |")
print(f"\nmean i-FTL over X-FTL: {100 * sum(gains) / len(gains):+.1f} % (target ≥ +8 %)\n")

print("Mapping: flash pages programmed for mapping per host page written\n")
print("| op | X-FTL (map pages + commit tables) | i-FTL (tables in NVM) | metadata bytes to NVM "
      "(i-FTL) |")
print("|---|---:|---:|---:|")
for op in ["insert", "update", "delete"]:
    x, i = load(f"fig7-xftl-{op}.json"), load(f"fig7-iftl-{op}.json")
    nvm = (i["xftl"].get("iftl") or {}).get("metadata_bytes_to_nvm", 0)
    print(f"| {op} | {mapping(x):.3f} | {mapping(i):.3f} | {nvm} |")

print("\nFigure 8: insert, threads 1-8 (the paper: i-FTL +8.2 % to +15.6 % over X-FTL)\n")
print("| threads | X-FTL | i-FTL | gain |")
print("|---:|---:|---:|---:|")
for t in range(1, 9):
    x, i = tps(load(f"fig8-xftl-{t}.json")), tps(load(f"fig8-iftl-{t}.json"))
    print(f"| {t} | {x:.1f} | {i:.1f} | {100 * (i / x - 1):+.1f} % |")

print("\nWithdraw/deposit: application transactions (two databases updated, a ledger record "
      "appended, one device commit each)\n")
print("| device | modeled TPS | mapping pages per host page | metadata bytes to NVM |")
print("|---|---:|---:|---:|")
wd = {}
for j, name in [("xftl", "X-FTL"), ("iftl", "i-FTL")]:
    d = load(f"wd-{j}.json")
    wd[j] = d["device"]["modeled_ops_per_sec"]
    nvm = (d["xftl"].get("iftl") or {}).get("metadata_bytes_to_nvm", "-")
    print(f"| {name} | {wd[j]:.1f} | {d['xftl']['mapping_programs_per_host_page']:.3f} | {nvm} |")
print(f"\ni-FTL / X-FTL: {wd['iftl'] / wd['xftl']:.2f}×")

i1 = tps(load("fig7-iftl-insert.json"))
print("\nSensitivity: X-FTL insert against its unsourced firmware counts (i-FTL insert "
      f"{i1:.1f})\n")
print("| commit_meta_pages | flush_meta_pages | X-FTL TPS | i-FTL / X-FTL | mapping pages per "
      "host page |")
print("|---:|---:|---:|---:|---:|")
for c in [0, 5, 10, 20]:
    for f in [0, 27]:
        d = load(f"sens-xftl-c{c}-f{f}.json")
        x = tps(d)
        print(f"| {c} | {f} | {x:.1f} | {i1 / x:.2f}× | {mapping(d):.3f} |")

print("\nSensitivity: the per-command overhead (unsourced, 30 us in the profile), insert\n")
print("| command_overhead_ns | X-FTL TPS | i-FTL TPS | i-FTL / X-FTL |")
print("|---:|---:|---:|---:|")
for o in [30000, 300000, 1000000, 3000000]:
    x, i = tps(load(f"sens-xftl-o{o}.json")), tps(load(f"sens-iftl-o{o}.json"))
    print(f"| {o} | {x:.1f} | {i:.1f} | {i / x:.2f}× |")
