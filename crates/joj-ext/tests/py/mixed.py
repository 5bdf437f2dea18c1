"""Two processes on one database at once: S through stock SQLite's unix VFS, W through waldio
(or through unix too: the control). The database has waldio's reserve and is in WAL mode, as
after waldio's hand-back (`PRAGMA journal_mode=DELETE` through waldio) and a stock program
setting WAL mode again. S commits one update of t1, W three of t2 (neither touches page 1).
Then the database is read back with waldio and with stock SQLite, whichever opens it, and
every commit each process was told succeeded must be there. Prints JSON.

usage: mixed.py LIBJOJ DIR waldio|unix
"""
import json
import multiprocessing as mp
import os
import sqlite3
import sys


def load(lib):
    loader = sqlite3.connect(":memory:")
    loader.enable_load_extension(True)
    loader.load_extension(lib)


def connect(db, vfs):
    return sqlite3.connect(f"file:{db}?vfs={vfs}", uri=True, isolation_level=None, timeout=5)


def worker(lib, db, vfs, pipe):
    """Run each SQL statement received; answer ("ok", rows) or ("err", message)."""
    load(lib)
    conn = connect(db, vfs)
    for sql in iter(pipe.recv, None):
        try:
            pipe.send(("ok", conn.execute(sql).fetchall()))
        except sqlite3.Error as e:
            pipe.send(("err", str(e)))
    conn.close()
    pipe.send(("ok", []))


def start(lib, db, vfs):
    mine, theirs = mp.Pipe()
    p = mp.Process(target=worker, args=(lib, db, vfs, theirs))
    p.start()
    return p, mine


def ask(pipe, sql):
    pipe.send(sql)
    return pipe.recv()


def read_back(lib, db):
    """The two sums through waldio, else through stock SQLite, with what refused."""
    said = []
    for vfs in ("waldio", "unix"):
        try:
            c = connect(db, vfs)
            sums = c.execute("SELECT (SELECT sum(v) FROM t1), (SELECT sum(v) FROM t2)").fetchone()
            ok = c.execute("PRAGMA integrity_check").fetchone()[0]
            c.close()
            return {"read_with": vfs, "t1": sums[0], "t2": sums[1], "integrity": ok, "refused": said}
        except sqlite3.Error as e:
            said.append(f"{vfs}: {e}")
    return {"read_with": None, "refused": said}


def make_database(db):
    """t1 and t2, ten rows of 0 each, with waldio's reserve, in WAL mode set by stock SQLite."""
    c = connect(db, "waldio")
    c.execute("PRAGMA journal_mode=WAL")
    for t in ("t1", "t2"):
        c.execute(f"CREATE TABLE {t}(id INTEGER PRIMARY KEY, v INT)")
        c.executemany(f"INSERT INTO {t} VALUES(?, 0)", [(i,) for i in range(10)])
    c.execute("PRAGMA journal_mode=DELETE")
    c.close()
    c = connect(db, "unix")
    c.execute("PRAGMA journal_mode=WAL")
    c.close()


def main():
    lib, d, w_vfs = sys.argv[1:4]
    db = os.path.join(d, "m.db")
    load(lib)
    make_database(db)
    (ps, s), (pw, w) = start(lib, db, "unix"), start(lib, db, w_vfs)
    ask(s, "SELECT sum(v) FROM t1")
    ask(w, "SELECT sum(v) FROM t2")
    acked_s = sum(ask(s, "UPDATE t1 SET v = v + 1")[0] == "ok" for _ in range(1))
    acked_w = sum(ask(w, "UPDATE t2 SET v = v + 1")[0] == "ok" for _ in range(3))
    state = ask(w, "SELECT waldio_state()")
    last_error = json.loads(state[1][0][0]).get("last_error") if state[0] == "ok" else None
    for pipe, p in ((w, pw), (s, ps)):
        pipe.send(None)
        pipe.recv()
        p.join()
    out = read_back(lib, db)
    out.update({"acked_stock": acked_s, "acked_other": acked_w, "last_error": last_error})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
