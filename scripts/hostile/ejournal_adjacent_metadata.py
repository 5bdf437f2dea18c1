#!/usr/bin/python3
"""A joj-trace file for `joj replay --emmc-journal` (robustness H118).

ejournal_adjacent_metadata.py N OUT  -- N metadata writes of 4 KiB side by side (N = 20000:
78 MiB), all deferred to one checkpoint."""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":[{"dev":"7:0","role":"main","name":"a"}],"source":"tracefs"}\n' % n)
    for j in range(n):
        f.write('{"time_ns":%d,"dev":"7:0","op":"write","preflush":false,"fua":false,"sync":false,"meta":true,"sector":%d,"sectors":8,"comm":"kworker","class":"metadata"}\n' % (j, j * 8))
