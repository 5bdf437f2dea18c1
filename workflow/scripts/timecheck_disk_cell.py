#!/usr/bin/env python3
# One cell of issue 33's disk check (docs/results/measurement-stack.md, "This machine's disk"),
# as the workflow's timecheck_disk_cell rule makes it: `joj device calibrate` of a loop device
# attached with direct I/O to a written file in DISK_DIR, right before the cell's runs, then
# RUNS rounds of one measured run (`joj bench` on ext4 over such a loop device) and one modeled
# run (the same bench on the profile just calibrated), alternating. This disk's latency moves by
# a tenth and more within minutes (a 4 KiB write 47 µs at one calibration, 54 µs at the next),
# so one profile for a check that lasts a quarter of an hour is compared with runs made at
# another speed; the calibration and the runs it models belong together, as the measured and
# modeled runs of every other check alternate. Each run waits for the load, and is recorded,
# as timecheck_run.py does it.
# Usage: timecheck_disk_cell.py OUTDIR WAIT_S JOJ DISK_DIR MODE OP N RUNS [--cpus-awake]
# Writes OUTDIR/runs/disk.{measured,modeled}.MODE.OP.I.json (I from 0), the profile
# OUTDIR/calibrated/MODE.OP.json and the calibration's measurements OUTDIR/calibrate/MODE.OP.json.
import os, re, signal, subprocess, sys, time

MODES = {'delete', 'truncate', 'persist', 'wal', 'waldio', 'off', 'memory'}
OPS = {'insert', 'update', 'delete'}


def usage(why):
    sys.exit(f'timecheck_disk_cell: {why}\nusage: timecheck_disk_cell.py OUTDIR WAIT_S JOJ '
             'DISK_DIR MODE OP N RUNS [--cpus-awake]')


args = sys.argv[1:]
awake = args[-1:] == ['--cpus-awake']
if awake:
    args = args[:-1]
if len(args) != 8:
    usage(f'{len(args)} arguments where 8 are needed')
outdir, wait_s, joj, disk_dir, mode, op, n, runs = args
if not re.fullmatch(r'\d+(\.\d+)?', wait_s) or float(wait_s) > 3600:
    usage(f'WAIT_S is seconds, at most 3600, not {wait_s!r}')
if mode not in MODES or op not in OPS:
    usage(f'MODE is one of {sorted(MODES)} and OP one of {sorted(OPS)}, not {mode!r} {op!r}')
if not re.fullmatch(r'\d{1,7}', n) or not 1 <= int(n) <= 1_000_000:
    usage(f'N is 1 to 1,000,000 transactions, not {n!r}')
if not re.fullmatch(r'\d{1,2}', runs) or not 1 <= int(runs) <= 20:
    usage(f'RUNS is 1 to 20, not {runs!r}')
if not os.path.isabs(disk_dir) or '\n' in disk_dir:
    usage(f'DISK_DIR is an absolute path, not {disk_dir!r}')
if not outdir or '\n' in outdir:
    usage(f'OUTDIR is a folder, not {outdir!r}')
if not (os.path.isfile(joj) and os.access(joj, os.X_OK)):
    usage(f'JOJ is the joj binary, an executable file, not {joj!r}')
# A SIGTERM (snakemake stopping the job) unwinds like an error, so the loop device and the
# image are released by calibrate()'s finally.
signal.signal(signal.SIGTERM, lambda sig, _: sys.exit(128 + sig))
flag = ['--cpus-awake'] if awake else []
here = os.path.dirname(os.path.abspath(__file__))
cell = f'{mode}.{op}'
profile = f'{outdir}/calibrated/{cell}.json'
for d in ('runs', 'calibrated', 'calibrate', 'traces'):
    os.makedirs(f'{outdir}/{d}', exist_ok=True)


def quiet():
    """Wait, as timecheck_run.py does, up to WAIT_S for a 1-minute load under 1.2."""
    t0 = time.time()
    while float(open('/proc/loadavg').read().split()[0]) >= 1.2 and time.time() - t0 < float(wait_s):
        time.sleep(2)


def calibrate():
    """The profile of a direct-I/O loop device over a written file in DISK_DIR, as `joj bench
    --image-dir DISK_DIR --loop-direct-io` attaches one; the file and loop are removed after."""
    os.makedirs(disk_dir, exist_ok=True)
    img = f'{disk_dir}/joj-calibrate-{os.getpid()}.img'
    loop = None
    try:
        subprocess.run(['dd', 'if=/dev/zero', f'of={img}', 'bs=1M', 'count=512', 'oflag=direct',
                        'status=none'], check=True)
        loop = subprocess.run(['losetup', '-f', '--show', '--direct-io=on', img], check=True,
                              capture_output=True, text=True).stdout.strip()
        quiet()
        with open(f'{outdir}/calibrate/{cell}.json', 'w') as out:
            r = subprocess.run([joj, 'device', 'calibrate', loop, '--destroy-data', '-o', profile,
                                '--force', '--json', *flag], stdout=out, stderr=subprocess.PIPE,
                               text=True)
        if r.returncode != 0:
            sys.exit(f'timecheck_disk_cell: the calibration of {loop} failed ({r.returncode}): '
                     f'{r.stderr[-2000:]}')
    finally:
        if loop and subprocess.run(['losetup', '-d', loop]).returncode != 0:
            # The image stays, so that what holds the disk space is found: `losetup -j IMG`.
            sys.exit(f'timecheck_disk_cell: could not detach {loop} from {img}; fix: losetup -d {loop}; rm {img}')
        if os.path.exists(img):
            os.remove(img)


calibrate()
bench = ['bench', '--fs', 'ext4', '-j', mode, '--op', op, '-n', n, *flag]
for i in range(int(runs)):
    for kind, extra in [('measured', ['--image-dir', disk_dir, '--loop-direct-io']),
                        ('modeled', ['--device', profile, '--out', f'{outdir}/traces/disk.modeled.{cell}.{i}'])]:
        tag = f'disk:{kind}:{mode}:{op}:{i}'
        r = subprocess.run([sys.executable, f'{here}/timecheck_run.py', tag,
                            f'{outdir}/runs/disk.{kind}.{cell}.{i}.json', wait_s, joj, *bench, *extra])
        if r.returncode != 0:
            sys.exit(r.returncode)
