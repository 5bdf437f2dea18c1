#!/usr/bin/python3
"""Synthetic block traces for memory measurements: a WAL-mode SQLite workload on ext4.

synthetic_trace.py N jsonl|blkparse OUT   -- N records (requests); deterministic (seed 1).
What docs/robustness.md H70-H75 measured `joj trace plot` and `joj replay` on.
Per commit: WAL append (8-16 sectors, sequential), FS journal write (24 sectors) +
commit block with preflush/fua, a flush; every 50 commits a checkpoint writes database pages
and metadata; a read now and then. blkparse form: a D and a C line per request.
"""
import random, sys

n, fmt, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(1)
DEV = "7:0"
t = 1_000_000
wal = 274432
jnl = 526336
recs = 0
f = open(out, "w", buffering=1 << 20)

def rec(op, sector, sectors, cls, file=None, preflush=False, fua=False, comm="python3"):
    global t, recs
    t += rng.randint(20_000, 120_000)
    done = t + rng.randint(30_000, 200_000)
    if fmt == "jsonl":
        fl = f',"file":"{file}"' if file else ""
        f.write(f'{{"time_ns":{t},"dev":"{DEV}","op":"{op}","preflush":{str(preflush).lower()},'
                f'"fua":{str(fua).lower()},"sync":true,"meta":false,"sector":{sector},'
                f'"sectors":{sectors},"comm":"{comm}","class":"{cls}"{fl},"complete_ns":{done}}}\n')
    else:
        rwbs = {"write": "W", "read": "R", "flush": "N", "discard": "D"}[op]
        if op == "flush":
            rwbs = "FN"
        else:
            rwbs = ("F" if preflush else "") + rwbs + ("F" if fua else "") + "S"
        rng_part = "" if op == "flush" else f" {sector} + {sectors}"
        s = f"{t // 10**9}.{t % 10**9:09d}"
        c = f"{done // 10**9}.{done % 10**9:09d}"
        f.write(f"  7,0    1 {recs+1:8d} {s} 1234  D {rwbs:>3}{rng_part} [{comm}]\n")
        f.write(f"  7,0    0 {recs+1:8d} {c}     0  C {rwbs:>3}{rng_part} [0]\n")
    recs += 1

if fmt == "jsonl":
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":'
            '[{"dev":"7:0","role":"main","name":"/dev/loop0"}],"source":"tracefs","meta":'
            '{"transactions":%d}}\n' % (n, n // 6))
c = 0
while recs < n:
    k = rng.choice([8, 8, 16])
    if wal + k > 274432 + 65536:
        wal = 274432
    rec("write", wal, k, "data", "wal"); wal += k
    if recs >= n: break
    if jnl + 32 > 526336 + 262144:
        jnl = 526336
    rec("write", jnl, 24, "fs_journal", comm="jbd2/loop0-8"); jnl += 24
    if recs >= n: break
    rec("write", jnl, 8, "fs_journal", preflush=True, fua=True, comm="jbd2/loop0-8"); jnl += 8
    if recs >= n: break
    rec("flush", 0, 0, "flush", comm="python3")
    c += 1
    if c % 50 == 0:
        for _ in range(min(n - recs, 6)):
            rec("write", 2048 + 8 * rng.randint(0, 4000), 8, "data", "database")
        if recs < n: rec("write", 8 + 8 * rng.randint(0, 200), 8, "metadata", comm="kworker")
    if recs < n and rng.random() < 0.05:
        rec("read", 2048 + 8 * rng.randint(0, 4000), 8, "data", "database")
f.close()
