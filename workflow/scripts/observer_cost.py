#!/usr/bin/env python3
# What watching a run costs its host time (issue 33, point 2; docs/results/measurement-stack.md,
# "What the modeled runs' lean is made of"): one `joj bench` cell (ext4 on joj's memory loop
# device, --cpus-awake, N transactions) run in alternating rounds as
#   untraced   nothing watches but the VFS's own counters
#   outside    untraced, while a tracefs instance of this script's records the three block
#              events joj's tracer enables (issue, complete, bio queue; no filter), no joj part
#   trace      --trace: joj's block tracer and the extent snapshots at each sync call
#   modeled    --device zero-latency: the tracer, the snapshots and the pacer's feed and model
#   unpaced    --device zero-latency --no-pace: the tracer and the snapshots, no pacer
# (each round starting one variant later than the one before), and prints, per cell and variant, the median host TPS (transactions over the result's
# `host.host_s`: joj's timed measuring, run-queue delays and pacing's sleeps taken out) against
# the untraced median, and for the two modeled variants the modeled TPS. Root.
# Usage: observer_cost.py JOJ ROUNDS N MODE:OP…   (e.g. target/release/joj 5 2000 persist:insert)
import json, os, re, statistics, subprocess, sys

MODES = {'delete', 'truncate', 'persist', 'wal', 'waldio', 'off'}
OPS = {'insert', 'update', 'delete'}
EVENTS = ['block_rq_issue', 'block_rq_complete', 'block_bio_queue']
VARIANTS = {'untraced': [], 'outside': [], 'trace': ['--trace'],
            'modeled': ['--device', 'zero-latency'], 'unpaced': ['--device', 'zero-latency', '--no-pace']}

USAGE = 'usage: observer_cost.py JOJ ROUNDS N MODE:OP…'


def refuse(why):
    sys.exit(f'observer_cost: {why}\n{USAGE}')


if len(sys.argv) < 5:
    refuse('too few arguments')
joj, rounds, n = sys.argv[1], sys.argv[2], sys.argv[3]
if not (os.path.isfile(joj) and os.access(joj, os.X_OK)):
    refuse(f'JOJ is the joj binary (an executable file), not {joj!r}')
if not (re.fullmatch('[0-9]{1,3}', rounds) and 1 <= int(rounds) <= 100):
    refuse(f'ROUNDS is 1–100, not {rounds!r}')
if not (re.fullmatch('[0-9]{1,7}', n) and 1 <= int(n) <= 1_000_000):
    refuse(f'N is 1–1000000 transactions, not {n!r}')
cells = [c.split(':') for c in sys.argv[4:]]
for c in cells:
    if len(c) != 2 or c[0] not in MODES or c[1] not in OPS:
        refuse(f'a cell is MODE:OP, MODE one of {sorted(MODES)} and OP one of {sorted(OPS)}, not {":".join(c)!r}')
if os.geteuid() != 0:
    refuse('needs root (joj bench on a scratch filesystem, tracefs)')
inst = f'/sys/kernel/tracing/instances/joj-observer-{os.getpid()}'


def outside(on):
    if on:
        os.mkdir(inst)
        for e in EVENTS:
            with open(f'{inst}/events/block/{e}/enable', 'w') as f:
                f.write('1')
    elif os.path.isdir(inst):
        # Removing an instance turns its events off with it.
        os.rmdir(inst)


runs = {}
try:
    names = list(VARIANTS)
    for round_no in range(int(rounds)):
        for mode, op in cells:
            # Each round starts one variant later, so that no variant always follows another.
            k = round_no % len(names)
            for v in names[k:] + names[:k]:
                extra = VARIANTS[v]
                outside(v == 'outside')
                args = [joj, 'bench', '--fs', 'ext4', '-j', mode, '--op', op, '-n', n, '--cpus-awake', '--json', *extra]
                run = subprocess.run(args, capture_output=True, text=True)
                outside(False)
                if run.returncode != 0:
                    sys.exit(f'observer_cost: {" ".join(args)} failed ({run.returncode}): {run.stderr[-2000:]}')
                r = json.loads(run.stdout)
                host = int(n) / r['host']['host_s']
                modeled = (r.get('modeled') or {}).get('modeled_ops_per_sec')
                runs.setdefault((mode, op), {}).setdefault(v, []).append((host, modeled))
                print(f'{mode} {op} {v}: host {host:.0f} TPS' + (f', modeled {modeled:.0f}' if modeled else ''), flush=True)
finally:
    outside(False)

for (mode, op), vs in runs.items():
    base = statistics.median(h for h, _ in vs['untraced'])
    parts = [f'{mode} {op}: untraced {base:.0f}']
    for v in list(VARIANTS)[1:]:
        h = statistics.median(x for x, _ in vs[v])
        parts.append(f'{v} {h:.0f} ({(h / base - 1) * 100:+.1f} %)')
        mods = [m for _, m in vs[v] if m]
        if mods:
            parts[-1] += f' [modeled {statistics.median(mods):.0f}]'
    print(' | '.join(parts))
