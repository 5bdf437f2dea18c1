#!/usr/bin/env python3
# The ATC'13 Table 2 matrix of docs/results/atc13.md from the runs of the workflow's atc13_cell
# rules (once scripts/atc13matrix.sh).
# Usage: atc13matrix_table.py DIR   (JOJ = the joj binary, default ./target/release/joj)
# Measured: the host's own rate on this machine's loop devices (transactions over the run's
#   measured host time; a run made before modeled runs: its transactions/s).
# Modeled: the run's `modeled` section — host time measured in the run on the profile's host
#   (sdcard-2013's: the Galaxy S3) plus the device model: the data device through sdcard-2013, on
#   ext4-extjournal the journal device through galaxy-s5. P: the run's host time plus the replay
#   with --completion poll (its cell also gives --completion interrupt, one 10 µs wakeup per
#   command). joj refuses --completion with two-device replays, so rows with both E and P are
#   modeled without P (said in the cell). Runs made before modeled runs existed: the replay's
#   device time alone, as before.
import glob, json, os, subprocess, sys
J = os.environ.get('JOJ', './target/release/joj')
D = sys.argv[1]
SD, EMMC = 'sdcard-2013', 'galaxy-s5'
PAPER = {  # Table 2: (insert/s, update/s) on ext4, xfs
    'Baseline': {'ext4': (39, 102), 'xfs': (60, 149)},
    'F': {'ext4': (46, 156), 'xfs': (60, 251)},
    'E': {'ext4': (51, 143), 'xfs': (82, 179)},
    'P': {'ext4': (39, 109), 'xfs': (61, 153)},
    'W': {'ext4': (76, 100), 'xfs': (75, 153)},
    'F+E+P': {'ext4': (60, 245), 'xfs': (84, 265)},
    'F+E+P+W': {'ext4': (92, 113), 'xfs': (86, 188)},
}
# row -> (sync call, journal mode, external journal, polling)
ROWS = {
    'Baseline': ('fsync', 'truncate', False, False),
    'F': ('fdatasync', 'truncate', False, False),
    'E': ('fsync', 'truncate', True, False),
    'P': ('fsync', 'truncate', False, True),
    'W': ('fsync', 'wal', False, False),
    'F+E+P': ('fdatasync', 'truncate', True, True),
    'F+E+P+W': ('fdatasync', 'wal', True, True),
}

def run_dir(fs, call, jm, op):
    return f'{D}/{fs}-{call}-{jm}-{op}'

def run_json(d):
    r = json.load(open(f'{d}/run.json'))
    return r.get('result', r)

def measured(d):
    # A modeled run is paced (its wall time is the model's): the host's own rate here is
    # transactions over its measured host time; an older run's is its transactions/s.
    r = run_json(d)
    h = r.get('host')
    if r.get('modeled') and h and h['host_s'] > 0:
        return r['transactions'] / h['host_s']
    return r['ops_per_sec']

def replay(d, args):
    tr = glob.glob(f'{d}/*.trace.jsonl')[0]
    out = subprocess.run(['nice', '-n', '19', J, 'replay', tr, *args, '--json'],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)

def modeled_one(d, completion=None):
    # Host (measured in the run, on the profile's host) + device (+ the completion model).
    r = run_json(d)
    m = r.get('modeled')
    if m and not completion:
        return m['modeled_ops_per_sec']
    j = replay(d, ['--device', SD] + (['--completion', completion] if completion else []))
    dev = j['device']
    c = dev.get('completion') or {}
    if m:
        return r['transactions'] / (m['host_s'] + c.get('modeled_s', dev['modeled_s']))
    return c.get('modeled_ops_per_sec', dev['modeled_ops_per_sec'])

def modeled_two(d):
    m = run_json(d).get('modeled')
    if m:
        return m['modeled_ops_per_sec']
    j = replay(d, ['--device-for', 'main=' + SD, '--device-for', 'journal=' + EMMC])
    return j['host']['modeled_ops_per_sec']

def cell(fs, row, op):
    """(measured, measured note, modeled, modeled note)"""
    call, jm, ext, poll = ROWS[row]
    if ext and fs == 'xfs':
        if row == 'E':
            return None, 'no E: joj has no external-journal xfs', None, 'no E (xfs)'
        # F+E+P(+W) on xfs: E cannot be made, the cell is F+P(+W)
        d = run_dir('xfs', call, jm, op)
        return measured(d), 'F' + ('+W' if jm == 'wal' else '') + ' (no E on xfs, P not measurable)', \
            modeled_one(d, 'poll'), 'F+P' + ('+W' if jm == 'wal' else '') + \
            f' (no E on xfs); interrupt {modeled_one(d, "interrupt"):.1f}'
    if ext:
        d = run_dir('ext4-extjournal', call, jm, op)
        mnote = 'no P: --completion refused on two-device replays' if poll else ''
        return measured(d), 'P not measurable here' if poll else '', modeled_two(d), mnote
    d = run_dir(fs, call, jm, op)
    if poll:
        return None, 'not measurable: no poll queue here (polling.md)', modeled_one(d, 'poll'), \
            f'poll; interrupt {modeled_one(d, "interrupt"):.1f}'
    return measured(d), '', modeled_one(d), ''

def fmt(v, base, note):
    if v is None:
        return f'– ({note})'
    s = f'{v:.1f} ({v / base:.2f})'
    return s + (f' [{note}]' if note else '')

print(f'Measured: transactions/s of the run on loop devices. Modeled: its trace through {SD} '
      f'(journal device through {EMMC} on ext4-extjournal). (×Baseline) in parentheses.')
print()
print('| fs | op | row | measured TPS (×B) | modeled TPS (×B) | paper TPS (×B) |')
print('|---|---|---|---|---|---|')
for fs in ['ext4', 'xfs']:
    for k, op in enumerate(['insert', 'update']):
        cells = {row: cell(fs, row, op) for row in ROWS}
        bm, _, bmod, _ = cells['Baseline']
        pb = PAPER['Baseline'][fs][k]
        for row in ROWS:
            m, mn, md, mdn = cells[row]
            p = PAPER[row][fs][k]
            print(f'| {fs} | {op} | {row} | {fmt(m, bm, mn)} | {fmt(md, bmod, mdn)} | {p} ({p / pb:.2f}) |')
        sys.stdout.flush()
