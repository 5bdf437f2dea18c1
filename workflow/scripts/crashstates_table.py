#!/usr/bin/env python3
"""One Markdown row per `joj crash fs --fs … --json` document (the workflow's crash_merge rules, once scripts/crashstates.sh).

Columns: filesystem, mode (synchronous level; canary), transactions recorded, writes / flushes
logged and whether tracefs saw the same, states explored (exhaustive?), distinct images
checked, the mode's window, violations (lost acknowledged / broken / unmountable), fsck
failures, largest loss, states per second.

Usage: workflow/scripts/crashstates_table.py CRASH.json [...]
       workflow/scripts/crashstates_table.py --kinds CRASH.json [...]   # the states by kind and coverage
"""
import json
import sys


def row(d):
    log = d["log"]
    same = (log.get("traced_write_bytes") == log["write_bytes"]
            and log.get("traced_flushes") == log["flushes"])
    window = d["window"]
    w = "durable" if window["kind"] == "durable" else f"≤ {window['transactions']} txn"
    canary = f"; {d['canary']}" if d.get("canary") else ""
    return (
        f"| {d['fs']} | {d['mode']} ({d['synchronous']}{canary}) | {d['transactions']} | "
        f"{log['writes']:,} / {log['flushes']:,} {'= tracefs' if same else '≠ tracefs'} | "
        f"{d['states_explored']:,}{' (all)' if d['exhaustive'] else ''} | "
        f"{d['images_checked']:,} | {w} | {d['violations']:,} ({d['lost_acknowledged']:,} / "
        f"{d['broken']:,} / {d['unmountable']:,}) | {d['fsck_failures']:,} | "
        f"{d['largest_loss']} | {d['states_per_s']:.0f} |"
    )


def kinds_row(d):
    k = d["states_by_kind"]
    c = d.get("coverage") or {}
    in_flight = k["subset"] + k["torn"]
    total = sum(k.values())
    return (
        f"| {d['fs']} | {d['mode']} ({d['synchronous']}) | {d['log']['epochs']:,} | "
        f"{k['flush_boundary']:,} / {k['after_flush']:,} | {k['prefix']:,} | "
        f"{k['subset']:,} / {k['torn']:,} ({100 * in_flight / max(total, 1):.0f} %) | "
        f"{c.get('epochs_checked', 0):,} / {c.get('epochs_with_in_flight_checked', 0):,} of "
        f"{c.get('epochs_with_writes', 0):,} | {100 * c.get('share_median', 0):.2g} % |"
    )


if sys.argv[1:2] == ["--kinds"]:
    print("| FS | mode | epochs | flush boundary / after flush | prefix | subset / torn (in flight) | "
          "epochs with a state / with one in flight, of those with writes | median share of an "
          "epoch's states |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for path in sys.argv[2:]:
        with open(path) as f:
            print(kinds_row(json.load(f)))
    sys.exit(0)

print("| FS | mode | txns | writes / flushes logged | states explored | images checked | "
      "window | violations (lost / broken / unmountable) | fsck failures | largest loss | "
      "states/s |")
print("|---|---|---:|---|---:|---:|---|---|---:|---:|---:|")
for path in sys.argv[1:]:
    with open(path) as f:
        print(row(json.load(f)))
