#!/usr/bin/env python3
# One run of issue 33's checks of modeled time (docs/results/, "Modeled time"), as the
# workflow's timecheck_run rule makes it: waits up to WAIT_S seconds for /proc/loadavg's 1-minute
# figure to fall below 1.2, runs `JOJ ARGS… --json`, and writes the run's record (its tag, the
# load it ran at, its figures, and on a disk what the disk wrote of its own) as one JSON
# document; timecheck_table.py reads these records.
# Usage: timecheck_run.py TAG OUT.json WAIT_S JOJ ARGS…
import json, subprocess, sys, time

tag, out, wait_s, joj, args = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]


def load():
    return float(open('/proc/loadavg').read().split()[0])


t0 = time.time()
while load() >= 1.2 and time.time() - t0 < wait_s:
    time.sleep(2)
l = load()
run = subprocess.run([joj, *args, '--json'], capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(f'timecheck_run: {tag} failed ({run.returncode}): {run.stderr[-2000:]}')
r = json.loads(run.stdout)
rec = {'tag': tag, 'args': args, 'load': l, 'ops_per_sec': r['ops_per_sec'],
       'modeled': r.get('modeled'), 'device': r.get('device'), 'host': r.get('host'),
       'block_per_txn': r.get('block_per_txn'), 'backing': r.get('backing')}
with open(out, 'w') as f:
    json.dump(rec, f)
    f.write('\n')
