"""Shared helpers: open a connection under stock `unix` or under waldio, record
acknowledgements to an fsynced side file, verify a database in a fresh process."""
import json
import os
import sqlite3
import subprocess
import sys

EXT = os.environ.get('JOJ_EXT', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../target/ext/release/libjoj'))
PY = '/usr/bin/python3'
HERE = os.path.dirname(os.path.abspath(__file__))
_loader = None


def load():
    global _loader
    if _loader is None:
        _loader = sqlite3.connect(':memory:')
        _loader.enable_load_extension(True)
        _loader.load_extension(EXT)
    return _loader


def connect(vfs, path, extra='', timeout=30.0, wal=True):
    if vfs == 'waldio':
        load()
        c = sqlite3.connect(f'file:{path}?vfs=waldio{extra}', uri=True,
                            isolation_level=None, timeout=timeout)
    elif vfs == 'stock':
        c = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    else:
        raise SystemExit('vfs must be stock or waldio')
    if wal:
        c.execute('PRAGMA journal_mode=WAL')
    return c


def waldio_last_error():
    try:
        return json.loads(load().execute('SELECT waldio_state()').fetchone()[0]).get('last_error')
    except Exception as e:  # noqa
        return f'(waldio_state failed: {e})'


class Acks:
    """Append `id` lines to a side file, fsynced after each commit returns."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def ack(self, i):
        os.write(self.fd, f'{i}\n'.encode())
        os.fsync(self.fd)


def read_acks(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {int(x) for x in f.read().split() if x.strip()}


def fresh(db):
    for suf in ('', '-wal', '-shm', '-waldio', '-journal'):
        try:
            os.unlink(db + suf)
        except FileNotFoundError:
            pass


VERIFY = r'''
import sys, json
sys.path.insert(0, %r)
import common
vfs, db = sys.argv[1], sys.argv[2]
out = {}
try:
    c = common.connect(vfs, db, wal=False)
    out['integrity'] = [r[0] for r in c.execute('PRAGMA integrity_check').fetchall()]
    out['ids'] = [r[0] for r in c.execute('SELECT id FROM t').fetchall()]
    c.close()
except Exception as e:
    out['error'] = f'{type(e).__name__}: {e}'
print(json.dumps(out))
'''


def verify(vfs, db, acks_path, label=''):
    """Check in a fresh process: integrity_check, and every acknowledged id present."""
    r = subprocess.run([PY, '-c', VERIFY % HERE, vfs, db], capture_output=True, text=True,
                       timeout=120)
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:
        out = {'error': f'verify crashed rc={r.returncode} stderr={r.stderr[-500:]}'}
    acked = read_acks(acks_path)
    res = {'label': label, 'acked': len(acked)}
    if 'error' in out:
        res['verify_error'] = out['error']
        res['lost'] = None
    else:
        ids = set(out['ids'])
        lost = sorted(acked - ids)
        res['integrity'] = out['integrity'][:3]
        res['rows'] = len(ids)
        res['lost'] = len(lost)
        if lost:
            res['lost_sample'] = lost[:10]
    if r.stderr.strip():
        res['verify_stderr'] = r.stderr.strip()[-400:]
    return res


def ok(res):
    return res.get('lost') == 0 and res.get('integrity') == ['ok']
