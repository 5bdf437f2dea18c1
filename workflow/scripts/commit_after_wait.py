#!/usr/bin/env python3
# The CPU time of the same SQLite commit back to back against right after a wait of the length
# a paced run waits for its device (docs/device-model.md, "A commit after a wait"). A paced run
# (`--device P`, the default) sleeps the device's modeled time after each sync; an unpaced one
# runs its commits back to back; the modeled host time scales the commits' CPU time by the
# profile's cpu_factor. Blocks of 100 commits alternate: back to back, after a sleep of WAIT_MS,
# after a busy wait (spin) of WAIT_MS; each commit's thread CPU time is taken around the commit
# alone. Run it in a directory on a fresh ext4 (the commits are WAL, synchronous=FULL).
# Usage: commit_after_wait.py [WAIT_MS] [BLOCKS]   (WAIT_MS 0.1–100, default 1.5; BLOCKS 3–300, default 30)
import sqlite3, sys, time

try:
    wait_ms = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 30
except ValueError:
    sys.exit('commit_after_wait: usage: commit_after_wait.py [WAIT_MS 0.1–100] [BLOCKS 3–300]')
if not (0.1 <= wait_ms <= 100 and 3 <= blocks <= 300):
    sys.exit('commit_after_wait: usage: commit_after_wait.py [WAIT_MS 0.1–100] [BLOCKS 3–300]')
wait = wait_ms / 1000
db = sqlite3.connect('commit_after_wait.db', isolation_level=None)
db.execute('PRAGMA journal_mode=WAL')
db.execute('PRAGMA synchronous=FULL')
db.execute('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)')
kinds = ('back to back', f'after a {wait_ms} ms sleep', f'after a {wait_ms} ms spin')
cpu = {k: [] for k in kinds}
for block in range(blocks):
    kind = kinds[block % 3]
    for _ in range(100):
        if kind.startswith('after a') and kind.endswith('sleep'):
            time.sleep(wait)
        elif kind.endswith('spin'):
            end = time.perf_counter() + wait
            while time.perf_counter() < end:
                pass
        c0 = time.thread_time_ns()
        db.execute('BEGIN')
        db.execute('INSERT INTO t(v) VALUES (?)', ('x' * 100,))
        db.execute('COMMIT')
        cpu[kind].append(time.thread_time_ns() - c0)
base = sorted(cpu[kinds[0]])[len(cpu[kinds[0]]) // 2]
for k in kinds:
    v = sorted(cpu[k])
    med = v[len(v) // 2]
    print(f'{k}: {len(v)} commits, CPU per commit median {med / 1000:.1f} µs '
          f'(p10 {v[len(v) // 10] / 1000:.1f}, p90 {v[9 * len(v) // 10] / 1000:.1f}), '
          f'{med / base:.2f}× back to back')
