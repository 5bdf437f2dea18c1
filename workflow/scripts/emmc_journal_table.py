#!/usr/bin/env python3
"""The eMMC paper's optimized journal table of docs/results/: each ext4 trace replayed
through galaxy-s5 plainly (baseline) and as the optimized journal issues it (--emmc-journal),
beside the ext4-nojournal trace of the same workload (rules emmc_journal_cell).

Usage: emmc_journal_table.py DIR   (JOJ = the joj binary; traces DIR/{fs}-{mode}-{op}/*.trace.jsonl)
"""
import glob, json, os, subprocess, sys
J = os.environ.get("JOJ", "./target/release/joj")
D = sys.argv[1]
PROFILE = "galaxy-s5"
PAPER = {"insert": 15, "update": 28.5, "delete": 22}


def trace(fs, mode, op):
    return glob.glob(f"{D}/{fs}-{mode}-{op}/*.trace.jsonl")[0]


def tps(tr, *extra):
    out = subprocess.run(["nice", "-n", "19", J, "replay", tr, "--device", PROFILE, *extra, "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["device"]["modeled_ops_per_sec"]


print(f"Modeled TPS through {PROFILE} (transactions / modeled device time)\n")
print("| mode | op | baseline | optimized | gain (paper) | no-journal | no-journal ahead of optimized "
      "(paper: 9.3 % on average) |")
print("|---|---|---:|---:|---:|---:|---:|")
for mode in ["wal", "truncate"]:
    for op in ["insert", "update", "delete"]:
        base = tps(trace("ext4", mode, op))
        opt = tps(trace("ext4", mode, op), "--emmc-journal")
        nj = tps(trace("ext4-nojournal", mode, op))
        print(f"| {mode.upper()} | {op} | {base:.1f} | {opt:.1f} | {100 * (opt / base - 1):+.1f} % "
              f"(+{PAPER[op]} %) | {nj:.1f} | {100 * (nj / opt - 1):+.1f} % |")
