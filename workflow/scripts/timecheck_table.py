#!/usr/bin/env python3
# Tables of issue 33's checks of modeled time (docs/results/, "Modeled time"): medians, errors,
# spreads, loads, from the records of the workflow's timecheck_run rules (one JSON document a
# run), or from a folder holding runs.jsonl (one record a line, as scripts/timecheck.py wrote
# them before the workflow).
# Usage: timecheck_table.py RECORD.json…  |  timecheck_table.py OUT-DIR
import json, math, os, stat, statistics, sys
from collections import defaultdict

# Records may come from someone else's results folder: each is a regular file of at most
# MAX_BYTES, read with that limit (a FIFO, a device or a huge file is refused, not read).
MAX_BYTES = 16 << 20


def read_text(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as e:
        sys.exit(f'timecheck_table: cannot open {path}: {e.strerror} (a record is a regular file, not a symlink)')
    with os.fdopen(fd, 'rb') as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            sys.exit(f'timecheck_table: {path} is not a regular file')
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        sys.exit(f'timecheck_table: {path} is larger than {MAX_BYTES >> 20} MiB; a record is a few KiB')
    try:
        return data.decode()
    except UnicodeDecodeError:
        sys.exit(f'timecheck_table: {path} is not UTF-8 text')


def parse(text, where):
    try:
        r = json.loads(text)
    except json.JSONDecodeError as e:
        sys.exit(f'timecheck_table: {where} is not JSON: {e}')
    except RecursionError:
        sys.exit(f'timecheck_table: {where} nests too deeply to be a record')
    except ValueError as e:  # an integer of more digits than Python converts (4300)
        sys.exit(f'timecheck_table: {where} is not a record: {e}')
    if not isinstance(r, dict) or not isinstance(r.get('tag'), str):
        sys.exit(f'timecheck_table: {where} is not a record (an object with a "tag")')
    p = r['tag'].split(':')
    if p[0] in ('host', 'disk') and (len(p) not in (4, 5) or p[1] not in ('measured', 'modeled')):
        sys.exit(f'timecheck_table: {where}: tag {r["tag"]!r} is not {p[0]}:measured|modeled:MODE:OP[:RUN]')
    if p[0] == 'repeat' and (len(p) < 2 or not p[1]):
        sys.exit(f'timecheck_table: {where}: tag {r["tag"]!r} is not repeat:COMMAND[:RUN]')
    if p[0] != 'noise':
        load = number(r.get('load'))
        if load is None or load < 0:
            sys.exit(f'timecheck_table: {where}: load is not a number of at least 0')
    return r


def number(x):
    """x as a finite float, or None: a bool (which Python counts as an int), a text, a number too
    large for a float, NaN or an infinity is no figure."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        x = float(x)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def figure(r, *keys, low=0.0, high=math.inf):
    """r[keys[0]][keys[1]]… as a number in (low, high], or exit naming the record."""
    x = r
    for k in keys:
        x = x.get(k) if isinstance(x, dict) else None
    v = number(x)
    if v is None or not low < v <= high:
        sys.exit(f'timecheck_table: {r["tag"]}: {".".join(keys)} is not a number in ({low:g}, {high:g}]')
    return v


if len(sys.argv) == 2 and os.path.isdir(sys.argv[1]):
    path = f'{sys.argv[1]}/runs.jsonl'
    runs = [parse(l, f'{path} line {i + 1}') for i, l in enumerate(read_text(path).splitlines()) if l.strip()]
else:
    runs = [parse(read_text(p), p) for p in sys.argv[1:]]
med = statistics.median


def noise_record(r):
    """A cpu_repeat.py record as the table reads it, or exit naming what is wrong."""
    xs = r.get('cpu_s')
    ok = (isinstance(xs, list) and 5 <= len(xs) <= 1000
          and all(number(x) is not None and x > 0 for x in xs)
          and all(number(r.get(k)) is not None and r[k] >= 0 for k in ('gap_s', 'load')))
    if not ok:
        sys.exit('timecheck_table: a noise:cpu record needs cpu_s (5–1000 positive numbers), '
                 'gap_s and load (numbers); this one has not')
    return xs

def loads(rs):
    ls = [r['load'] for r in rs]
    return f'{min(ls):.2f}–{max(ls):.2f}'

# 0. The machine's own floor: the same CPU work timed again and again (cpu_repeat.py).
spread = lambda xs: (max(xs) - min(xs)) / med(xs) * 100
for r in runs:
    if r['tag'] == 'noise:cpu':
        xs = noise_record(r)
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
        m = [figure(r, 'modeled', 'modeled_ops_per_sec') for r in rs]
        d = [figure(r, 'device', 'modeled_ops_per_sec') for r in rs]
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
                h = lambda k, low=-1e-9: figure(r, 'host', k, low=low)
                m = lambda k, low=-1e-9: figure(r, 'modeled', k, low=low)
                # The host's CPU as joj composes it: the workload threads' less joj's measuring
                # on them, and the journal thread's (joj-experiment/src/host.rs, work_cpu_s).
                overhead = h('overhead_s') if isinstance(r.get('host'), dict) and 'overhead_s' in r['host'] else 0.0
                own = max(h('cpu_s') - overhead, 0.0)
                cpu = min((own + h('journal_thread_cpu_s')) / h('threads', low=0.5), h('host_s'))
                waits = h('host_s') - cpu if c is None else h('sync_calls') * c / 1e9
                t = m('cpu_factor', low=0.0) * cpu + waits + m('device_s')
                if t <= 0:
                    sys.exit(f'timecheck_table: {r["tag"]}: its host and device times add up to nothing')
                xs.append(m('ops', low=0.0) / t)
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
    # Only cells with both sides make a row.
    cells = {k: c for k, c in cells.items() if c['measured'] and c['modeled']}
    if not cells:
        print('no cell has both measured and modeled runs: no error to summarise')
        print()
        continue
    def each(side):
        ns = sorted({len(c[side]) for c in cells.values()})
        return f'median of {ns[0]}' if len(ns) == 1 else f'median of {ns[0]}–{ns[-1]}'
    # The disk's own writes in the measured runs (records made since 2026-11-27 have them): the
    # image files' metadata, a cost of the loop-over-a-file rig that no device has
    # (docs/measurement.md, "Known limits").
    def own(rs):
        out = []
        for r in rs:
            b = r.get('backing')
            # An auxiliary figure: one that is not a count of bytes is left out, and a table
            # whose runs have none shows no column.
            x = number(b.get('own_bytes_per_txn')) if isinstance(b, dict) else None
            if x is not None and x >= 0:
                out.append(x)
        return out
    with_own = any(own(c['measured']) for c in cells.values())
    extra = ' the disk\'s own KiB per commit (measured) |' if with_own else ''
    # The measured runs' own spread ((max − min) / median, two runs at least): how much the
    # measured side moves by itself, to read each error against.
    print(f'| mode | op | measured TPS ({each("measured")}) | modeled TPS ({each("modeled")}) | host share | error | '
          f'measured spread | load |{extra}')
    print('|---|---|---:|---:|---:|---:|---:|---|' + ('---:|' if with_own else ''))
    errs = []
    for (mode, op), c in cells.items():
        ms = [figure(r, 'ops_per_sec') for r in c['measured']]
        a = med(ms)
        b = med([figure(r, 'modeled', 'modeled_ops_per_sec') for r in c['modeled']])
        share = med([figure(r, 'modeled', 'host_share', low=-1e-9, high=1.0) for r in c['modeled']])
        e = (b - a) / a * 100
        errs.append(abs(e))
        sp = f'{spread(ms):.1f} %' if len(ms) > 1 else '–'
        o = own(c['measured'])
        cell = (f' {med(o) / 1024:.1f} |' if o else ' – |') if with_own else ''
        print(f'| {mode} | {op} | {a:.1f} | {b:.1f} | {share*100:.0f} % | {e:+.1f} % | {sp} | '
              f'{loads(c["measured"] + c["modeled"])} |{cell}')
    print()
    print(f'median |error| {med(errs):.1f} %, largest {max(errs):.1f} %, cells within 15 %: '
          f'{sum(e <= 15 for e in errs)}/{len(errs)}, within 20 %: {sum(e <= 20 for e in errs)}/{len(errs)}, '
          f'within 10 %: {sum(e <= 10 for e in errs)}/{len(errs)}')
    print()
