"""Minimal repro: waldio group sync; the parent forks with acknowledged commits still in its
group buffer; the child never touches the database and just exits normally (Python's
finalisation deallocates the inherited connection object = sqlite3_close_v2 in the child).

  1. parent: waldio connection, group sync (1000 ms, 1 MiB), 50 rows, then 10 more rows
     (acknowledged, still in the group buffer)
  2. fork; child sleeps 1 s, then sys.exit(0)        [argv[2] == 'os_exit': os._exit(0)]
  3. parent: PRAGMA wal_checkpoint(TRUNCATE), then 200 more commits, waits for the child
  4. a third process tries to open the database with the same group-sync options
     (waldio must refuse: the parent still has the WAL with group sync)
  5. parent closes; a fresh process runs integrity_check and counts rows (expected 260)

usage: repro_gs_child_exit.py stock|waldio [sys_exit|os_exit]
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

VFS = sys.argv[1]
EXIT = sys.argv[2] if len(sys.argv) > 2 else 'sys_exit'
EXTRA = '&waldio_group_ms=1000&waldio_group_kib=1024' if VFS == 'waldio' else ''
D = f'/tmp/joj-waldio-fork/repro-gsexit-{VFS}-{os.getpid()}'
os.makedirs(D, exist_ok=True)
DB = f'{D}/db'

THIRD = '''
import sys; sys.path.insert(0, %r); import common
try:
    c = common.connect(sys.argv[1], sys.argv[2], sys.argv[3], timeout=0)
    c.execute("SELECT count(*) FROM t").fetchone()
    print("third process: opened the database with group sync while the parent has it open")
except Exception as e:
    print("third process:", type(e).__name__, e)
''' % common.HERE

common.fresh(DB)
p = common.connect(VFS, DB, EXTRA)
p.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)')
for i in range(1, 51):
    p.execute('INSERT INTO t VALUES(?, randomblob(1500))', (i,))
for i in range(51, 61):
    p.execute('INSERT INTO t VALUES(?, randomblob(1500))', (i,))
pid = os.fork()
if pid == 0:
    time.sleep(1.0)
    if EXIT == 'os_exit':
        os._exit(0)
    sys.exit(0)
p.execute('PRAGMA wal_checkpoint(TRUNCATE)')
for i in range(1000, 1200):
    p.execute('INSERT INTO t VALUES(?, randomblob(1500))', (i,))
os.waitpid(pid, 0)
print('parent: 260 commits acknowledged; child exited via', EXIT)
print(subprocess.run([common.PY, '-c', THIRD, VFS, DB, EXTRA], capture_output=True,
                     text=True).stdout.strip())
print('parent: integrity_check before close:', p.execute('PRAGMA integrity_check').fetchall()[:2])
p.close()
VER = '''
import sys; sys.path.insert(0, %r); import common
c = common.connect(sys.argv[1], sys.argv[2], sys.argv[3])
try:
    print("fresh process: count =", c.execute("SELECT count(*) FROM t").fetchone()[0], "(expected 260)")
    r = c.execute("PRAGMA integrity_check").fetchall()
    print("fresh process: integrity_check:", len(r), "lines; first:", r[:3])
except Exception as e:
    print("fresh process:", type(e).__name__, e)
''' % common.HERE
print(subprocess.run([common.PY, '-c', VER, VFS, DB, EXTRA], capture_output=True,
                     text=True).stdout.strip())
