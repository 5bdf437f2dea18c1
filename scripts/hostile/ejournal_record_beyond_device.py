#!/usr/bin/python3
"""A joj-trace of one device whose last write ends past emmc5's end (sector 15679631 + 8).

usage: ejournal_record_beyond_device.py OUT.jsonl

`joj replay OUT.jsonl` names record 2 ("… end beyond the emulated device's 8027971584 bytes …;
fix: check the trace …"). `joj replay OUT.jsonl --emmc-journal` instead blames the journal
region: "the journal region (256 MiB above byte 8028946432) ends beyond the device's
8027971584 bytes; fix: a smaller `--journal-region-mib` or a larger profile" — a region that
starts past the device's end fits at no size, and the record at fault is not named.
"""
import json
import sys

recs = [
    dict(time_ns=0, op="write", sector=5000, sectors=8, cls="fs_journal"),
    dict(time_ns=1000, op="write", sector=64, sectors=8, cls="metadata"),
    dict(time_ns=2000, op="write", sector=15679631, sectors=8, cls="metadata"),
]
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"format": "joj-trace", "version": 1, "records": len(recs), "clock": "relative",
                        "devices": [{"dev": "7:0", "role": "main", "name": "/dev/loop0"}],
                        "source": "tracefs", "meta": {}}) + "\n")
    for r in recs:
        f.write(json.dumps({"time_ns": r["time_ns"], "dev": "7:0", "op": r["op"], "preflush": False,
                            "fua": False, "sync": True, "meta": False, "sector": r["sector"],
                            "sectors": r["sectors"], "comm": "x", "class": r["cls"]}) + "\n")
