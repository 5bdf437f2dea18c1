#!/usr/bin/env python3
# Issue 33's checks of modeled time, each run as a separate joj process, every figure a median of
# repeated runs, the machine's load recorded with each run (docs/results.md, "Modeled time").
# Usage: scripts/timecheck.py OUT-DIR [repeat|host|disk|all]   (root; JOJ = joj binary)
#   repeat: one command, 5 runs each: modeled TPS spread (ATC'13 baseline on sdcard-2013, paced
#           and --no-pace; WAL insert on galaxy-s5)
#   host:   6 modes x insert/update/delete on ext4: measured on the memory loop device (3 runs)
#           against modeled on zero-latency (3 runs): host time alone
#   disk:   joj device calibrate on a directory of this machine's disk, then the same cells
#           measured on ext4 on a direct-I/O loop device backed by that disk (3 runs) against
#           modeled from the calibrated profile (3 runs, memory loop device, paced)
# Before each run it waits up to WAIT seconds (default 60) for /proc/loadavg's 1-minute figure to
# fall below 1.2, and records the figure it ran at.
import json, os, statistics, subprocess, sys, time
J = os.environ.get('JOJ', './target/release/joj')
OUT = sys.argv[1]
WHAT = sys.argv[2] if len(sys.argv) > 2 else 'all'
WAIT = float(os.environ.get('WAIT', '60'))
N = os.environ.get('N', '1000')
DISK = os.environ.get('DISK_DIR', '/var/tmp/joj-timecheck')
MODES = ['delete', 'truncate', 'persist', 'wal', 'waldio', 'off']
OPS = ['insert', 'update', 'delete']
os.makedirs(OUT, exist_ok=True)
# A run already in OUT/runs.jsonl (same tag) is kept, not repeated: an interrupted check resumes.
DONE = set()
if os.path.exists(f'{OUT}/runs.jsonl'):
    DONE = {json.loads(l)['tag'] for l in open(f'{OUT}/runs.jsonl')}

def load():
    return float(open('/proc/loadavg').read().split()[0])

def run(tag, args):
    if tag in DONE:
        return None
    t0 = time.time()
    while load() >= 1.2 and time.time() - t0 < WAIT:
        time.sleep(2)
    l = load()
    out = subprocess.run([J, *args, '--json'], capture_output=True, text=True)
    if out.returncode != 0:
        print(f'FAILED {tag}: {out.stderr[-500:]}', file=sys.stderr)
        return None
    r = json.loads(out.stdout)
    rec = {'tag': tag, 'args': args, 'load': l, 'ops_per_sec': r['ops_per_sec'],
           'modeled': r.get('modeled'), 'device': r.get('device'), 'host': r.get('host'),
           'block_per_txn': r.get('block_per_txn')}
    with open(f'{OUT}/runs.jsonl', 'a') as f:
        f.write(json.dumps(rec) + '\n')
    return rec

def med(xs):
    return statistics.median(xs) if xs else float('nan')

def repeat():
    cmds = {
        'atc13-baseline-paced': ['bench', '--fs', 'ext4', '--op', 'insert', '-j', 'truncate',
                                 '--sync-call', 'fsync', '-n', '300', '--device', 'sdcard-2013',
                                 '--out', f'{OUT}/traces'],
        'atc13-baseline-nopace': ['bench', '--fs', 'ext4', '--op', 'insert', '-j', 'truncate',
                                  '--sync-call', 'fsync', '-n', '300', '--device', 'sdcard-2013',
                                  '--no-pace', '--out', f'{OUT}/traces'],
        'wal-galaxy-s5': ['bench', '--fs', 'ext4', '-j', 'wal', '-n', N, '--device', 'galaxy-s5',
                          '--out', f'{OUT}/traces'],
    }
    for tag, args in cmds.items():
        for i in range(5):
            run(f'repeat:{tag}:{i}', args)

def cells(kind, extra_measured, extra_modeled):
    for m in MODES:
        for op in OPS:
            base = ['bench', '--fs', 'ext4', '-j', m, '--op', op, '-n', N]
            for i in range(3):
                run(f'{kind}:measured:{m}:{op}:{i}', base + extra_measured)
                run(f'{kind}:modeled:{m}:{op}:{i}', base + extra_modeled)

def host():
    cells('host', [], ['--device', 'zero-latency', '--out', f'{OUT}/traces'])

def disk():
    os.makedirs(DISK, exist_ok=True)
    prof = f'{OUT}/calibrated.json'
    if not os.path.exists(prof):
        l = load()
        c = subprocess.run([J, 'device', 'calibrate', DISK, '-o', prof, '--json'],
                           capture_output=True, text=True, check=True)
        with open(f'{OUT}/calibrate.json', 'w') as f:
            f.write(c.stdout)
        print(f'calibrated at load {l}', file=sys.stderr)
    cells('disk', ['--image-dir', DISK, '--loop-direct-io'],
          ['--device', prof, '--out', f'{OUT}/traces'])

if WHAT in ('repeat', 'all'):
    repeat()
if WHAT in ('host', 'all'):
    host()
if WHAT in ('disk', 'all'):
    disk()
