#!/usr/bin/python3
"""trace_far_future.py N jsonl|blkparse OUT: N writes, each completing 1000 s after its issue
(after every later issue): the replay's dependency heap holds them all (H106)."""
import sys
n, fmt, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = open(out, "w", buffering=1 << 20)
if fmt == "jsonl":
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":'
            '[{"dev":"7:0","role":"main","name":"/dev/loop0"}],"source":"tracefs","meta":{}}\n' % n)
for i in range(n):
    t = 1_000_000 + i * 50_000
    done = t + 1000 * 10**9
    sector = (i * 8) % (1 << 20)
    if fmt == "jsonl":
        f.write('{"time_ns":%d,"dev":"7:0","op":"write","preflush":false,"fua":false,"sync":true,'
                '"meta":false,"sector":%d,"sectors":8,"comm":"x","class":"unknown","complete_ns":%d}\n'
                % (t, sector, done))
    else:
        f.write("  7,0    1 %8d %d.%09d 1234  D  WS %d + 8 [x]\n" % (i + 1, t // 10**9, t % 10**9, sector))
        f.write("  7,0    0 %8d %d.%09d     0  C  WS %d + 8 [0]\n" % (i + 1, done // 10**9, done % 10**9, sector))
