#!/usr/bin/python3
"""trace_lost_completion.py N OUT [lose]: blkparse text of N rounds of a 256 KiB write to sector 0 and
an 8-sector read; with `lose`, the first write's completion line is left out (H107)."""
import sys
n, out = int(sys.argv[1]), sys.argv[2]
lose = len(sys.argv) > 3 and sys.argv[3] == "lose"
f = open(out, "w")
seq = 0
def line(t, act, rwbs, sector, sectors, tail):
    global seq
    seq += 1
    f.write("  7,0    1 %8d %d.%09d 1234  %s %3s %d + %d [%s]\n" % (seq, t // 10**9, t % 10**9, act, rwbs, sector, sectors, tail))
for i in range(n):
    t = 1_000_000 + i * 1_000_000
    line(t, "D", "WS", 0, 512, "app")
    if not (lose and i == 0):
        line(t + 400_000, "C", "WS", 0, 512, "0")
    line(t + 500_000, "D", "R", 4096, 8, "app")
    line(t + 550_000, "C", "R", 4096, 8, "0")
