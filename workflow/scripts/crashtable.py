#!/usr/bin/env python3
"""One Markdown row per `joj crash device --json` (or `--save`) document.

Columns: workload (a canary's says whether it was caught; "NOT caught" is not met), profile
(with the aging), transactions per trial and the device commands they issue, GC runs per run,
cuts aimed right after a command that ran GC, cuts, passed and failed, cuts with a transaction
under way whose commit was found durable / gone, torn NAND pages found by the recoveries, and
the commit paths SQLite took.

Usage: workflow/scripts/crashtable.py CRASH.json [...]
"""
import json
import sys


def row(doc):
    p = doc["paths"]
    aged = f", aged {doc['aging_validity']} %" if doc.get("aging_validity") else ""
    canary = ""
    if doc["canary"]:
        # A canary must be caught: one that got through is marked, never shown as a pass.
        canary = " (canary, caught)" if doc["failed"] > 0 else \
            " (canary NOT caught: not met, the check is too weak here; more cuts)"
    return (
        f"| {doc['workload']}{canary} | {doc['profile']}{aged} | {doc['transactions']} / "
        f"{doc['commands_per_run']:,} | {doc.get('gc_runs_per_run', 0)} | "
        f"{doc.get('cuts_after_gc', 0):,} | {doc['cuts']:,} | "
        f"{doc['passed']:,} | {doc['failed']:,} | {doc['in_flight_durable']:,} / "
        f"{doc['in_flight_lost']:,} | {doc['torn_pages']:,} | {p['batch_commits']:,} / "
        f"{p['batch_commit_errors']:,} / {p['journal_opens']:,} |"
    )


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    print(
        "| workload | device | txns / commands per run | GC runs per run | cuts after GC | cuts | passed | "
        "failed | under way: durable / gone | torn pages | batch commits / failed batches / "
        "journals opened |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---|---:|---|")
    for path in paths:
        with open(path) as f:
            print(row(json.load(f)))


if __name__ == "__main__":
    main(sys.argv[1:])
