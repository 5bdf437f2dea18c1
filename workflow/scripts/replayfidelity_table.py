#!/usr/bin/env python3
"""Print the replay-fidelity table from the JSON documents of the workflow's fidelity rules (once scripts/replayfidelity.sh).

Each row: a recorded `joj bench` run's own per-transaction figures (its trace) beside the replay
of its system calls. A figure holds when it differs by at most 5 %, or, for figures under 0.1
(KiB or flushes), by at most 0.1 absolutely. Usage: replayfidelity_table.py DIR
"""
import json
import os
import sys

LIMIT = 0.05
SMALL = 0.1


def per_txn(doc, txns):
    """Per transaction of the recorded run (its own count, for both documents)."""
    b = doc["block"]
    return [
        b["data_bytes"] / 1024 / txns,
        b["metadata_bytes"] / 1024 / txns,
        b["fs_journal_bytes"] / 1024 / txns,
        b["flushes"] / txns,
    ]


def dev(a, b):
    """Relative difference of b from a, or None where both are small."""
    if abs(a) < SMALL and abs(b) < SMALL:
        return None
    if abs(a) < SMALL:
        return float("inf")
    return (b - a) / a


def main(d):
    names = sorted(f[: -len(".bench.json")] for f in os.listdir(d) if f.endswith(".bench.json"))
    print("| fs | workload | recorded: data / meta / FS jrnl KiB, flushes per txn | "
          "replayed: data / meta / FS jrnl KiB, flushes per txn | largest difference | within 5 % |")
    print("|---|---|---|---|---|---|")
    failed = 0
    for name in names:
        rep = os.path.join(d, name + ".replay.json")
        if not os.path.exists(rep):
            continue
        with open(os.path.join(d, name + ".bench.json")) as f:
            bench = json.load(f)
        txns = bench["transactions"]
        a = per_txn(bench, txns)
        with open(rep) as f:
            b = per_txn(json.load(f), txns)
        devs = [dev(x, y) for x, y in zip(a, b)]
        worst = max((abs(x) for x in devs if x is not None), default=0.0)
        ok = worst <= LIMIT
        failed += not ok
        fs, _, wl = name.partition("-")
        fmt = lambda v: "{:.1f} / {:.1f} / {:.1f}, {:.2f}".format(*v)
        print(f"| {fs} | {wl} | {fmt(a)} | {fmt(b)} | {100 * worst:.1f} % | {'yes' if ok else 'no'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
