#!/usr/bin/python3
"""Many processes committing at once on one database, with random checkpoints, exclusive
locking-mode episodes, spills that roll back, mmap, reopens, journal-mode toggles and kill -9.
Every commit a worker was told succeeded is appended to its ack file; at the end every acked
row must be in the database, and integrity_check must be ok.

usage: stress.py LIBJOJ DIR VFS NPROC SECONDS SEED [ops]
  ops: comma list of enabled extras: ckpt,excl,spill,mmap,reopen,jm,kill,sync,big,ro
"""
import os
import random
import signal
import sqlite3
import sys
import time


def acked_rows(d):
    """Every row a worker was told committed: the whole lines of the ack files in `d`."""
    acked = set()
    for f in os.listdir(d):
        if f.startswith("ack."):
            for line in open(os.path.join(d, f)):
                if line.endswith("\n"):
                    acked.update(int(x) for x in line.split())
    return acked


def load(lib):
    loader = sqlite3.connect(":memory:")
    loader.enable_load_extension(True)
    loader.load_extension(lib)
    return loader


def connect(db, vfs, extra=""):
    c = sqlite3.connect(f"file:{db}?vfs={vfs}{os.environ.get('URIX', '')}{extra}", uri=True, isolation_level=None, timeout=10)
    c.execute("PRAGMA busy_timeout=10000")
    return c


def worker(lib, db, vfs, wid, seconds, seed, ops):
    keep = load(lib)
    rnd = random.Random(seed * 1000 + wid)
    import threading
    tag = f"{wid}.{os.getpid()}.{threading.get_ident()}"
    ack = open(os.path.join(os.path.dirname(db), f"ack.{tag}"), "a", buffering=1)
    log = open(os.path.join(os.path.dirname(db), f"log.{tag}"), "a", buffering=1)
    c = connect(db, vfs)
    seq = 0
    end = time.time() + seconds
    base = wid * 10**12 + random.SystemRandom().randrange(10**6) * 10**6
    while time.time() < end:
        r = rnd.random()
        try:
            if r < 0.45:
                n = rnd.randint(1, 30)
                ids = [base + seq + i for i in range(n)]
                seq += n
                size = rnd.choice([10, 100, 1000, 3000]) if "big" not in ops else rnd.choice([100, 3000, 20000])
                c.execute("BEGIN IMMEDIATE")
                c.executemany("INSERT INTO t VALUES(?, ?, randomblob(?))", [(i, wid, size) for i in ids])
                c.execute("COMMIT")
                ack.write(" ".join(map(str, ids)) + "\n")
            elif r < 0.55 and "spill" in ops:
                c.execute("PRAGMA cache_size=2")
                c.execute("BEGIN IMMEDIATE")
                c.executemany("INSERT INTO t VALUES(?, -1, randomblob(2000))", [(-(base + seq + i),) for i in range(rnd.randint(5, 200))])
                seq += 200
                if rnd.random() < 0.5:
                    c.execute("ROLLBACK")
                else:
                    c.execute("DELETE FROM t WHERE w = -1")
                    c.execute("COMMIT")
                c.execute("PRAGMA cache_size=-2000")
            elif r < 0.62 and "ckpt" in ops:
                mode = rnd.choice(["PASSIVE", "FULL", "RESTART", "TRUNCATE"])
                c.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
            elif r < 0.66 and "excl" in ops:
                c.execute("PRAGMA locking_mode=EXCLUSIVE")
                n = rnd.randint(1, 30)
                ids = [base + seq + i for i in range(n)]
                seq += n
                c.execute("BEGIN IMMEDIATE")
                c.executemany("INSERT INTO t VALUES(?, ?, randomblob(500))", [(i, wid) for i in ids])
                c.execute("COMMIT")
                ack.write(" ".join(map(str, ids)) + "\n")
                if rnd.random() < 0.5:
                    c.execute("PRAGMA cache_size=2")
                    c.execute("BEGIN IMMEDIATE")
                    c.executemany("INSERT INTO t VALUES(?, -2, randomblob(2000))", [(-(base + seq + i),) for i in range(100)])
                    seq += 100
                    c.execute("ROLLBACK")
                    c.execute("PRAGMA cache_size=-2000")
                c.execute("PRAGMA locking_mode=NORMAL")
                c.execute("SELECT count(*) FROM t").fetchall()
            elif r < 0.70 and "mmap" in ops:
                c.execute(f"PRAGMA mmap_size={rnd.choice([0, 1 << 20, 1 << 26])}").fetchall()
                c.execute("SELECT count(*), sum(length(b)) FROM t").fetchall()
            elif r < 0.74 and "reopen" in ops:
                c.close()
                c = connect(db, vfs)
            elif r < 0.76 and "jm" in ops:
                m = rnd.choice(["DELETE", "WAL", "TRUNCATE", "WAL", "PERSIST"])
                got = c.execute(f"PRAGMA journal_mode={m}").fetchall()
                log.write(f"jm {m} -> {got}\n")
            elif r < 0.80 and "sync" in ops:
                c.execute(f"PRAGMA synchronous={rnd.choice(['OFF', 'NORMAL', 'FULL', 'EXTRA'])}")
            elif r < 0.83 and "ro" in ops:
                ro = connect(db, vfs, "&mode=ro")
                ro.execute("SELECT count(*), sum(length(b)) FROM t").fetchall()
                ro.close()
            elif r < 0.90 and "verify" in ops:
                acked = acked_rows(os.path.dirname(db))
                have = set(x[0] for x in c.execute("SELECT id FROM t WHERE id > 0"))
                miss = acked - have
                if miss:
                    log.write(f"VIOLATION missing {len(miss)} acked rows, e.g. {sorted(miss)[:5]}\n")
            else:
                c.execute("SELECT count(*), max(id) FROM t").fetchall()
        except sqlite3.Error as e:
            log.write(f"err {type(e).__name__}: {e}\n")
            try:
                c.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            try:
                c.execute("PRAGMA locking_mode=NORMAL")
            except sqlite3.Error:
                pass
    c.close()


def run_threads(lib, db, vfs, w, seconds, seed, ops):
    if "threads" not in ops:
        return worker(lib, db, vfs, w, seconds, seed, ops)
    import threading
    ts = [threading.Thread(target=worker, args=(lib, db, vfs, w * 10 + k, seconds, seed, ops)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main():
    lib, d, vfs, nproc, seconds, seed = sys.argv[1:7]
    ops = set(sys.argv[7].split(",")) if len(sys.argv) > 7 else set()
    nproc, seconds, seed = int(nproc), float(seconds), int(seed)
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "s.db")
    keep = load(lib)
    c = connect(db, vfs)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, w INT, b BLOB)")
    c.close()
    rnd = random.Random(seed)
    kids = {}
    for w in range(nproc):
        pid = os.fork()
        if pid == 0:
            try:
                run_threads(lib, db, vfs, w, seconds, seed, ops)
            finally:
                os._exit(0)
        kids[pid] = w
    end = time.time() + seconds
    kills = 0
    while time.time() < end:
        time.sleep(rnd.uniform(0.05, 0.5))
        if "kill" in ops and kids:
            pid = rnd.choice(list(kids))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            kills += 1
            w = kids.pop(pid)
            left = end - time.time()
            if left > 0.2:
                npid = os.fork()
                if npid == 0:
                    try:
                        run_threads(lib, db, vfs, w, left, seed + kills, ops)
                    finally:
                        os._exit(0)
                kids[npid] = w
    for pid in list(kids):
        os.waitpid(pid, 0)
    # Verify.
    acked = acked_rows(d)
    c = connect(db, vfs)
    have = set(r[0] for r in c.execute("SELECT id FROM t WHERE id > 0"))
    neg = c.execute("SELECT count(*) FROM t WHERE id < 0").fetchone()[0]
    integ = c.execute("PRAGMA integrity_check").fetchall()
    jm = c.execute("PRAGMA journal_mode").fetchone()[0]
    c.close()
    errs = {}
    for f in os.listdir(d):
        if f.startswith("log."):
            for line in open(os.path.join(d, f)):
                k = line.strip()[:80]
                errs[k] = errs.get(k, 0) + 1
    lost = acked - have
    print(f"vfs={vfs} acked={len(acked)} have={len(have)} lost={len(lost)} extra={len(have - acked)} neg={neg} kills={kills} jm={jm} integrity={integ[:3]}")
    for k, v in sorted(errs.items(), key=lambda x: -x[1])[:8]:
        print(f"   {v:5d} {k}")
    if lost:
        print("LOST sample:", sorted(lost)[:10])
    return 1 if lost or integ != [("ok",)] else 0


if __name__ == "__main__":
    sys.exit(main())
