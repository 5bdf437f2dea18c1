#!/usr/bin/python3
"""A joj-trace holding one jbd2 journal transaction larger than X-FTL's 1,000-entry table.

usage: ejournal_big_transaction.py OUT.jsonl [PAGES]

One fs_journal write of PAGES 8 KiB pages (default 1001; with its commit block more than 1,000
entries from 1,000 pages on, 999 replays; at most 8192 fit the 64 MiB a request
may carry), then its commit block. `joj replay OUT.jsonl --emmc-journal` (emmc5):
"trace record 0: the X-L2P table is full (1000 entries of active transactions): commit or abort
a transaction, or give the device a larger `xl2p_entries`" — the X-FTL API's message: a trace
cannot commit or abort, and `xl2p_entries` is not said to be the profile's `ftl.xl2p_entries`.
A profile with `"xl2p_entries": 0` is accepted and fails every run so
(`joj bench -j xftl --device P`: "formatting the file layer: the X-L2P table is full (0 …").
"""
import json
import sys

pages = int(sys.argv[2]) if len(sys.argv) > 2 else 1001
sectors = pages * 16
recs = [
    dict(time_ns=0, sector=8000, sectors=sectors, cls="fs_journal", fua=False, preflush=False),
    dict(time_ns=1000, sector=8000 + sectors, sectors=8, cls="fs_journal", fua=True, preflush=True),
]
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"format": "joj-trace", "version": 1, "records": len(recs), "clock": "relative",
                        "devices": [{"dev": "7:0", "role": "main", "name": "/dev/loop0"}],
                        "source": "tracefs", "meta": {}}) + "\n")
    for r in recs:
        f.write(json.dumps({"time_ns": r["time_ns"], "dev": "7:0", "op": "write", "preflush": r["preflush"],
                            "fua": r["fua"], "sync": True, "meta": False, "sector": r["sector"],
                            "sectors": r["sectors"], "comm": "jbd2/loop0-8", "class": r["cls"]}) + "\n")
