#!/usr/bin/env python3
# How much the same CPU work's time moves between runs on this machine: the floor under issue
# 33's checks of modeled time (docs/results/measurement-stack.md, "This machine's own
# repeatability"). A modeled figure composes the CPU time measured in the run, so no model can
# repeat more closely than the CPU does. One fixed piece of work (a linear congruential
# generator walking a 4 MiB list: integer code and cache misses, no system calls) is timed RUNS
# times in thread CPU time and wall time, GAP_S seconds apart, as the checks' runs are; its size
# is fixed once, by a probe, to about SECONDS of CPU. With --cpus-awake it holds the CPUs out of
# idle states as the checks' runs then do (a PM QoS CPU latency request of 0 µs on
# /dev/cpu_dma_latency, kept open; joj's --cpus-awake). Writes one JSON record (tag `noise:cpu`)
# that timecheck_table.py reads beside the checks.
# Usage: cpu_repeat.py OUT.json RUNS SECONDS GAP_S [--cpus-awake]
import json, os, stat, struct, sys, time

USAGE = ('cpu_repeat: usage: cpu_repeat.py OUT.json RUNS SECONDS GAP_S [--cpus-awake] '
         '(RUNS 5–1000, SECONDS 0.01–60, GAP_S 0–60)')
args = sys.argv[1:]
awake = '--cpus-awake' in args
if awake:
    args.remove('--cpus-awake')
try:
    out, runs, seconds, gap_s = args[0], int(args[1]), float(args[2]), float(args[3])
except (IndexError, ValueError):
    sys.exit(USAGE)
if len(args) != 4 or not (5 <= runs <= 1000 and 0.01 <= seconds <= 60 and 0 <= gap_s <= 60):
    sys.exit(USAGE)
if os.path.lexists(out) and not stat.S_ISREG(os.lstat(out).st_mode):
    sys.exit(f'cpu_repeat: {out} exists and is not a regular file; give a file path')
if awake:
    dev = '/dev/cpu_dma_latency'
    try:
        if not stat.S_ISCHR(os.stat(dev).st_mode):
            sys.exit(f'cpu_repeat: {dev} is not a character device; fix: run without --cpus-awake')
        request = os.open(dev, os.O_WRONLY | os.O_CLOEXEC)  # held until this process exits
        os.write(request, struct.pack('i', 0))
    except OSError as e:
        sys.exit(f'cpu_repeat: cannot hold the CPUs awake ({dev}: {e}); fix: run as root, or without --cpus-awake')
SLOTS = 1 << 20
table = list(range(SLOTS))


def work(steps, seed):
    x = seed
    t = table
    for _ in range(steps):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        t[x >> 12] ^= x
    return x


probe = 200_000
t0 = time.thread_time()
work(probe, 1)
steps = max(int(probe * seconds / max(time.thread_time() - t0, 1e-6)), 1000)
cpu, wall = [], []
for i in range(runs):
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    work(steps, i)
    cpu.append((time.thread_time_ns() - c0) / 1e9)
    wall.append((time.perf_counter_ns() - w0) / 1e9)
    time.sleep(gap_s)
load = float(open('/proc/loadavg').read().split()[0])
# Written beside and renamed over OUT: a reader never sees half a record.
tmp = f'{out}.tmp-{os.getpid()}'
with open(tmp, 'x') as f:
    json.dump({'tag': 'noise:cpu', 'load': load, 'steps': steps, 'gap_s': gap_s,
               'cpus_awake': awake, 'cpu_s': cpu, 'wall_s': wall}, f)
    f.write('\n')
os.replace(tmp, out)
