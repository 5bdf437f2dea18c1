#!/usr/bin/python3
"""A joj-trace file for `joj replay --emmc-journal` (robustness H119).

ejournal_many_discards.py M N OUT  -- M deferred metadata writes of 64 MiB each (the most a
replayed request carries), side by side, then N one-sector discards (M = 100, N = 16000: 2.5 MB)."""
import sys
m, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
S = 131072
with open(out, "w", buffering=1 << 20) as f:
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":[{"dev":"7:0","role":"main","name":"a"}],"source":"tracefs"}\n' % (m + n))
    for j in range(m):
        f.write('{"time_ns":%d,"dev":"7:0","op":"write","preflush":false,"fua":false,"sync":false,"meta":true,"sector":%d,"sectors":%d,"comm":"x","class":"metadata"}\n' % (j, j * S, S))
    for i in range(n):
        f.write('{"time_ns":%d,"dev":"7:0","op":"discard","preflush":false,"fua":false,"sync":false,"meta":false,"sector":%d,"sectors":1,"comm":"x","class":"unknown"}\n' % (m + i, 16 * (i % 1000)))
