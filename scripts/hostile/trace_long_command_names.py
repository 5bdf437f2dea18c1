#!/usr/bin/python3
"""A joj-trace file for `joj replay --emmc-journal` (robustness H121).

trace_long_command_names.py N LEN OUT  -- N writes, each with a command name LEN bytes long
(N = 500000, LEN = 1100: 628 MB)."""
import sys
n, clen, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
comm = "c" * clen
with open(out, "w", buffering=1 << 20) as f:
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":[{"dev":"7:0","role":"main","name":"a"}],"source":"tracefs"}\n' % n)
    for i in range(n):
        f.write('{"time_ns":%d,"dev":"7:0","op":"write","preflush":false,"fua":false,"sync":true,"meta":false,"sector":%d,"sectors":8,"comm":"%s","class":"unknown"}\n' % (i * 1000, (i % 100000) * 8, comm))
