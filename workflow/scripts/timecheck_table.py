#!/usr/bin/env python3
# Tables of issue 33's checks of modeled time (docs/results/, "Modeled time"): medians, errors,
# spreads, loads, from the records of the workflow's timecheck_run rules (one JSON document a
# run), or from a folder holding runs.jsonl (one record a line, as scripts/timecheck.py wrote
# them before the workflow).
# Usage: timecheck_table.py RECORD.json…  |  timecheck_table.py OUT-DIR
import json, os, statistics, sys
from collections import defaultdict
if len(sys.argv) == 2 and os.path.isdir(sys.argv[1]):
    runs = [json.loads(l) for l in open(f'{sys.argv[1]}/runs.jsonl')]
else:
    runs = [json.load(open(p)) for p in sys.argv[1:]]
med = statistics.median

def loads(rs):
    ls = [r['load'] for r in rs]
    return f'{min(ls):.2f}–{max(ls):.2f}'

# 0. The machine's own floor: the same CPU work timed again and again (cpu_repeat.py).
spread = lambda xs: (max(xs) - min(xs)) / med(xs) * 100
for r in runs:
    if r['tag'] == 'noise:cpu':
        xs = r['cpu_s']
        fives = [spread(xs[i:i + 5]) for i in range(len(xs) - 4)]
        threes = [med(xs[i:i + 3]) for i in range(0, len(xs) - 2, 3)]
        steps = [abs(b / a - 1) * 100 for a, b in zip(threes, threes[1:])]
        held = ', CPUs held awake' if r.get('cpus_awake') else ''
        print('this machine\'s own repeatability: the same CPU work (workflow/scripts/cpu_repeat.py), '
              f'{len(xs)} runs of {med(xs):.3f} s CPU, {r["gap_s"]:g} s apart, load {r["load"]:.2f}{held}:')
        print()
        print('| runs | CPU time, min–max | spread, all runs | spread of 5 consecutive runs, median (largest) | '
              '5 consecutive runs within 2 % | next median of 3 moves, median (largest) |')
        print('|---:|---|---:|---|---:|---|')
        print(f'| {len(xs)} | {min(xs):.3f}–{max(xs):.3f} s | {spread(xs):.1f} % | '
              + (f'{med(fives):.1f} % ({max(fives):.1f} %) | {sum(f <= 2 for f in fives)}/{len(fives)} | '
                 if fives else '– | – | ')
              + (f'{med(steps):.1f} % ({max(steps):.1f} %)' if steps else '–') + ' |')
        print()

# 1. The same command, five runs.
rep = defaultdict(list)
for r in runs:
    if r['tag'].startswith('repeat:'):
        rep[r['tag'].split(':')[1]].append(r)
if rep:
    print('| command | runs | modeled TPS (host + device), each run | spread | device-only TPS, each run | spread | load |')
    print('|---|---:|---|---:|---|---:|---|')
    for tag, rs in rep.items():
        m = [r['modeled']['modeled_ops_per_sec'] for r in rs]
        d = [r['device']['modeled_ops_per_sec'] for r in rs]
        sp = lambda xs: (max(xs) - min(xs)) / med(xs) * 100
        print(f'| {tag} | {len(rs)} | {", ".join(f"{x:.1f}" for x in m)} | {sp(m):.1f} % | '
              f'{", ".join(f"{x:.1f}" for x in d)} | {sp(d):.1f} % | {loads(rs)} |')
    print()

# 1b. The same runs with the host's waits replaced by a fixed cost per sync call
# (host.sync_wait_ns): the modeled figure then depends on the run's CPU time and counts only.
if rep:
    costs = [0, 100_000, 500_000, 1_000_000]
    print('| command | waits as measured | ' + ' | '.join(f'sync_wait_ns = {c // 1000} µs' for c in costs) + ' |')
    print('|---|---|' + '---|' * len(costs))
    for tag, rs in rep.items():
        cols = []
        for c in [None] + costs:
            xs = []
            for r in rs:
                m, h = r['modeled'], r['host']
                # The host's CPU as joj composes it: the workload threads' less joj's measuring
                # on them, and the journal thread's (joj-experiment/src/host.rs, work_cpu_s).
                own = max(h['cpu_s'] - h.get('overhead_s', 0.0), 0.0)
                cpu = min((own + h['journal_thread_cpu_s']) / h['threads'], h['host_s'])
                waits = h['host_s'] - cpu if c is None else h['sync_calls'] * c / 1e9
                xs.append(m['ops'] / (m['cpu_factor'] * cpu + waits + m['device_s']))
            sp = (max(xs) - min(xs)) / med(xs) * 100
            cols.append(f'{med(xs):.1f} (spread {sp:.1f} %)')
        print(f'| {tag} | ' + ' | '.join(cols) + ' |')
    print()

# 2. and 5. Measured against modeled, per cell.
for kind, title in [('host', 'zero-latency device: modeled (host alone) against measured on the memory loop device'),
                    ('disk', 'calibrated disk: modeled against measured on ext4 over a direct-I/O loop device on the disk')]:
    cells = defaultdict(lambda: {'measured': [], 'modeled': []})
    for r in runs:
        p = r['tag'].split(':')
        if p[0] == kind:
            cells[(p[2], p[3])][p[1]].append(r)
    if not cells:
        continue
    print(f'{title}:')
    print()
    each = max(len(c['measured']) for c in cells.values())
    print(f'| mode | op | measured TPS (median of {each}) | modeled TPS (median of {each}) | host share | error | load |')
    print('|---|---|---:|---:|---:|---:|---|')
    errs = []
    for (mode, op), c in cells.items():
        if not c['measured'] or not c['modeled']:
            continue
        a = med([r['ops_per_sec'] for r in c['measured']])
        b = med([r['modeled']['modeled_ops_per_sec'] for r in c['modeled']])
        share = med([r['modeled']['host_share'] for r in c['modeled']])
        e = (b - a) / a * 100
        errs.append(abs(e))
        print(f'| {mode} | {op} | {a:.1f} | {b:.1f} | {share*100:.0f} % | {e:+.1f} % | {loads(c["measured"] + c["modeled"])} |')
    print()
    print(f'median |error| {med(errs):.1f} %, largest {max(errs):.1f} %, cells within 15 %: '
          f'{sum(e <= 15 for e in errs)}/{len(errs)}, within 20 %: {sum(e <= 20 for e in errs)}/{len(errs)}, '
          f'within 10 %: {sum(e <= 10 for e in errs)}/{len(errs)}')
    print()
