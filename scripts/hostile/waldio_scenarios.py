#!/usr/bin/python3
"""Small differential scenarios: each runs on stock `unix` and on `waldio` (databases made with
waldio's reserve on both), and prints what each step answered; a difference is a finding.

usage: scenarios.py LIBJOJ DIR [name...]
"""
import multiprocessing as mp
import os
import shutil
import sqlite3
import sys

LIB = None


def load():
    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension(LIB)
    return c


def conn(db, vfs, extra="", timeout=0.0):
    c = sqlite3.connect(f"file:{db}?vfs={vfs}{extra}", uri=True, isolation_level=None, timeout=timeout)
    return c


def q(c, sql, *a):
    try:
        return ("ok", c.execute(sql, a).fetchall())
    except sqlite3.Error as e:
        return ("err", str(e))


def make(db, vfs, rows=50, wal=True):
    c = conn(db, vfs)
    # waldio's reserve on both, so layouts are equal
    q(c, "PRAGMA journal_mode=DELETE")
    c.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v BLOB)")
    c.close()
    if vfs == "unix":
        # give the stock database the same 24-byte reserve via VACUUM through sqlite3's fcntl is not
        # reachable from Python; use the waldio-made file layout instead: convert
        pass
    c = conn(db, vfs)
    if wal:
        q(c, "PRAGMA journal_mode=WAL")
    c.executemany("INSERT INTO t VALUES(?, randomblob(300))", [(i,) for i in range(1, rows + 1)])
    return c


def child(lib, fn, args):
    global LIB
    LIB = lib
    load()
    fn(*args)


def in_proc(fn, *args):
    # spawn, not fork: a forked child would inherit the parent's open connections, and with them
    # the unix VFS's in-memory lock counts (SQLite: never carry a connection across fork)
    p = mp.get_context("spawn").Process(target=child, args=(LIB, fn, args))
    p.start()
    return p


def h_writer(db, vfs):
    c = conn(db, vfs, timeout=5)
    for i in range(100, 200):
        c.execute("INSERT INTO t VALUES(?, randomblob(300))", (i,))
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for i in range(200, 250):
        c.execute("INSERT INTO t VALUES(?, randomblob(300))", (i,))
    c.close()

def h_other_pipe(db, vfs, pipe):
    o = conn(db, vfs, timeout=0)
    for cmd in iter(pipe.recv, None):
        pipe.send(q(o, cmd))
    o.close()

def h_other_pipe2(db, vfs, pipe):
    o = conn(db, vfs, timeout=10)
    for cmd in iter(pipe.recv, None):
        pipe.send(q(o, cmd))
    o.close()

def h_other_kill(db, vfs):
    o = conn(db, vfs, timeout=10)
    for i in range(5):
        o.execute(f"INSERT INTO t VALUES({40000 + i}, randomblob(3000))")
    os.kill(os.getpid(), 9)

def h_other_excl(db, vfs):
    o = conn(db, vfs, timeout=5)
    o.execute("PRAGMA cache_size=5")
    for i in range(5):
        o.execute("BEGIN")
        o.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(j,) for j in range(1000 + i * 30, 1030 + i * 30)])
        o.execute("COMMIT")
    o.close()


# ---- scenarios -------------------------------------------------------------------------------

def s_ro_next_to_writer(db, vfs):
    """A mode=ro reader in this process while a writer in another commits and checkpoints."""
    w = make(db, vfs)
    out = []
    ro = conn(db, vfs, "&mode=ro")
    out.append(q(ro, "SELECT count(*) FROM t"))
    p = in_proc(h_writer, db, vfs)
    p.join()
    out.append(q(ro, "SELECT count(*) FROM t"))
    out.append(q(ro, "PRAGMA wal_checkpoint(TRUNCATE)"))
    out.append(q(ro, "INSERT INTO t VALUES(9999, 1)"))
    w.close()
    out.append(q(ro, "SELECT count(*) FROM t"))
    ro.close()
    c = conn(db, vfs)
    out.append(q(c, "SELECT count(*) FROM t"))
    out.append(q(c, "PRAGMA integrity_check"))
    return out


def s_immutable(db, vfs):
    """immutable=1 reader of a database whose commits are still in the WAL (writer still open)."""
    w = make(db, vfs)
    q(w, "PRAGMA wal_autocheckpoint=0")
    w.executemany("INSERT INTO t VALUES(?, 2)", [(i,) for i in range(1000, 1100)])
    out = []
    im = conn(db, vfs, "&immutable=1")
    out.append(q(im, "SELECT count(*) FROM t"))
    out.append(q(im, "PRAGMA journal_mode"))
    im.close()
    w.close()
    im = conn(db, vfs, "&immutable=1")
    out.append(q(im, "SELECT count(*) FROM t"))
    im.close()
    return out


def s_readonly_file(db, vfs):
    """The database files made read-only (chmod 0444) with commits in the WAL; a reader opens."""
    w = make(db, vfs)
    q(w, "PRAGMA wal_autocheckpoint=0")
    w.executemany("INSERT INTO t VALUES(?, 2)", [(i,) for i in range(1000, 1100)])
    out = []
    r = conn(db, vfs, "&mode=ro")
    out.append(q(r, "SELECT count(*) FROM t"))
    r.close()
    w.close()
    return out


def s_pagesize_vacuum(db, vfs):
    """WAL -> DELETE, page_size 8192, VACUUM, -> WAL, write, reopen; another process reading."""
    c = make(db, vfs)
    out = [q(c, "PRAGMA journal_mode=DELETE"), q(c, "PRAGMA page_size=8192"), q(c, "VACUUM"),
           q(c, "PRAGMA page_size"), q(c, "PRAGMA journal_mode=WAL")]
    c.executemany("INSERT INTO t VALUES(?, randomblob(5000))", [(i,) for i in range(500, 700)])
    out.append(q(c, "PRAGMA wal_checkpoint(TRUNCATE)"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(5000))", [(i,) for i in range(700, 750)])
    out.append(q(c, "PRAGMA journal_mode=DELETE"))
    out.append(q(c, "PRAGMA page_size=4096"))
    out.append(q(c, "VACUUM"))
    out.append(q(c, "PRAGMA journal_mode=WAL"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(5000))", [(i,) for i in range(750, 800)])
    c.close()
    c = conn(db, vfs)
    out += [q(c, "SELECT count(*), sum(length(v)) FROM t"), q(c, "PRAGMA page_size"), q(c, "PRAGMA integrity_check")]
    return out


def s_jm_switch_with_others(db, vfs):
    """WAL -> DELETE -> WAL while another process holds the database open (idle / in a read)."""
    c = make(db, vfs)
    out = []
    a, b = mp.Pipe()
    p = in_proc(h_other_pipe, db, vfs, b)
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    out.append(q(c, "PRAGMA journal_mode=DELETE"))
    a.send("INSERT INTO t VALUES(3000, 1)"); out.append(a.recv())
    out.append(q(c, "PRAGMA journal_mode=DELETE"))
    a.send("BEGIN"); out.append(a.recv())
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    out.append(q(c, "INSERT INTO t VALUES(3001, 1)"))
    a.send("COMMIT"); out.append(a.recv())
    a.send(None); p.join()
    out.append(q(c, "PRAGMA journal_mode=DELETE"))
    out.append(q(c, "INSERT INTO t VALUES(3002, 1)"))
    a, b = mp.Pipe()
    p = in_proc(h_other_pipe, db, vfs, b)
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    a.send("INSERT INTO t VALUES(3003, 1)"); out.append(a.recv())
    out.append(q(c, "PRAGMA journal_mode=WAL"))
    a.send("INSERT INTO t VALUES(3004, 1)"); out.append(a.recv())
    out.append(q(c, "PRAGMA journal_mode"))
    out.append(q(c, "INSERT INTO t VALUES(3005, 1)"))
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    a.send("PRAGMA journal_mode"); out.append(a.recv())
    a.send(None); p.join()
    c.close()
    c = conn(db, vfs)
    out += [q(c, "SELECT count(*) FROM t"), q(c, "PRAGMA integrity_check")]
    return out


def s_huge_rollback(db, vfs):
    """A transaction of 40 MB (past waldio's 16 MiB pending limit) rolled back while another
    process commits and reads; then a restart of the log; then reopen."""
    c = make(db, vfs)
    out = []
    a, b = mp.Pipe()
    p = in_proc(h_other_pipe2, db, vfs, b)
    q(c, "PRAGMA cache_size=10")
    out.append(q(c, "PRAGMA wal_checkpoint(TRUNCATE)"))
    out.append(q(c, "BEGIN IMMEDIATE"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(10000, 23000)])
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    out.append(q(c, "ROLLBACK"))
    for i in range(5):
        a.send(f"INSERT INTO t VALUES({40000 + i}, randomblob(3000))"); out.append(a.recv())
    a.send("SELECT count(*) FROM t"); out.append(a.recv())
    out.append(q(c, "SELECT count(*) FROM t"))
    out.append(q(c, "PRAGMA wal_checkpoint(PASSIVE)"))
    a.send(f"INSERT INTO t VALUES(50000, randomblob(3000))"); out.append(a.recv())
    a.send(None); p.join()
    c.close()
    c = conn(db, vfs)
    out += [q(c, "SELECT count(*) FROM t"), q(c, "PRAGMA integrity_check")]
    return out


def s_huge_rollback_kill(db, vfs):
    """As above, but the other process's commits are followed by kill -9 of everyone."""
    c = make(db, vfs)
    out = []
    q(c, "PRAGMA cache_size=10")
    q(c, "PRAGMA wal_checkpoint(TRUNCATE)")
    q(c, "BEGIN IMMEDIATE")
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(10000, 23000)])
    q(c, "ROLLBACK")
    p = in_proc(h_other_kill, db, vfs); p.join()
    out.append(q(c, "SELECT count(*) FROM t"))
    # this process "dies" too: copy the files as they are now, open the copy
    d2 = db + ".copy"
    os.makedirs(d2, exist_ok=True)
    for suf in ["", "-wal", "-shm", "-waldio"]:
        if os.path.exists(db + suf):
            shutil.copy(db + suf, os.path.join(d2, "x.db" + suf))
    c2 = conn(os.path.join(d2, "x.db"), vfs)
    out += [q(c2, "SELECT count(*) FROM t"), q(c2, "PRAGMA integrity_check")]
    c2.close()
    c.close()
    return out


def s_error_retry(db, vfs):
    """A statement fails mid-transaction (constraint), the transaction goes on and commits;
    a spilled transaction hits SQLITE_FULL via max_page_count and is retried smaller."""
    c = make(db, vfs)
    out = []
    q(c, "PRAGMA cache_size=5")
    out.append(q(c, "BEGIN"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(100, 400)])
    out.append(q(c, "INSERT INTO t VALUES(100, 1)"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(400, 500)])
    out.append(q(c, "COMMIT"))
    pc = c.execute("PRAGMA page_count").fetchone()[0]
    out.append(q(c, f"PRAGMA max_page_count={pc + 50}"))
    out.append(q(c, "BEGIN"))
    try:
        c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(1000, 1300)])
        out.append(("ok", "inserted"))
    except sqlite3.Error as e:
        out.append(("err", str(e)))
    out.append(q(c, "COMMIT"))
    out.append(q(c, "ROLLBACK"))
    out.append(q(c, "BEGIN"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(1000, 1030)])
    out.append(q(c, "COMMIT"))
    out.append(q(c, f"PRAGMA max_page_count=1000000"))
    c.close()
    c = conn(db, vfs)
    out += [q(c, "SELECT count(*) FROM t"), q(c, "PRAGMA integrity_check")]
    return out


def s_attach_cross(db, vfs):
    """A stock main connection ATTACHes the database through the VFS and writes both; then the
    other way round."""
    c = make(db, vfs)
    c.close()
    other = db + ".other.db"
    s = conn(other, "unix")
    s.execute("CREATE TABLE o(x)")
    out = [q(s, f"ATTACH 'file:{db}?vfs={vfs}' AS w"), q(s, "BEGIN"), q(s, "INSERT INTO o VALUES(1)"),
           q(s, "INSERT INTO w.t VALUES(7777, 1)"), q(s, "COMMIT"), q(s, "SELECT count(*) FROM w.t"),
           q(s, "PRAGMA w.journal_mode"), q(s, "DETACH w")]
    s.close()
    w = conn(db, vfs)
    out += [q(w, f"ATTACH 'file:{other}?vfs=unix' AS s"), q(w, "BEGIN"), q(w, "INSERT INTO s.o VALUES(2)"),
            q(w, "INSERT INTO t VALUES(7778, 1)"), q(w, "COMMIT"), q(w, "SELECT count(*) FROM t"),
            q(w, "SELECT count(*) FROM s.o")]
    w.close()
    w = conn(db, vfs)
    out += [q(w, "SELECT count(*) FROM t"), q(w, "PRAGMA integrity_check")]
    return out


def s_exclusive_then_others(db, vfs):
    """locking_mode=EXCLUSIVE entered after WAL mode; writes (spill, rollback, commit), a
    TRUNCATE checkpoint inside exclusive mode, back to NORMAL; another process writes; then
    exclusive again with a checkpoint."""
    c = make(db, vfs)
    out = []
    q(c, "PRAGMA cache_size=5")
    out.append(q(c, "PRAGMA locking_mode=EXCLUSIVE"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(100, 150)])
    out.append(q(c, "BEGIN"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(150, 300)])
    out.append(q(c, "ROLLBACK"))
    out.append(q(c, "PRAGMA wal_checkpoint(TRUNCATE)"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(300, 320)])
    out.append(q(c, "PRAGMA locking_mode=NORMAL"))
    out.append(q(c, "SELECT count(*) FROM t"))
    p = in_proc(h_other_excl, db, vfs); p.join()
    out.append(q(c, "SELECT count(*) FROM t"))
    out.append(q(c, "PRAGMA locking_mode=EXCLUSIVE"))
    out.append(q(c, "BEGIN"))
    c.executemany("INSERT INTO t VALUES(?, randomblob(3000))", [(i,) for i in range(2000, 2100)])
    out.append(q(c, "ROLLBACK"))
    out.append(q(c, "PRAGMA wal_checkpoint(RESTART)"))
    out.append(q(c, "SELECT count(*) FROM t"))
    c.close()
    c = conn(db, vfs)
    out += [q(c, "SELECT count(*) FROM t"), q(c, "PRAGMA integrity_check")]
    return out


SCENARIOS = {k[2:]: v for k, v in list(globals().items()) if k.startswith("s_")}


def main():
    global LIB
    LIB = sys.argv[1]
    d = sys.argv[2]
    names = sys.argv[3:] or list(SCENARIOS)
    keep = load()
    bad = 0
    for name in names:
        res = {}
        for vfs in ("unix", "waldio"):
            sub = os.path.join(d, name, vfs)
            shutil.rmtree(sub, ignore_errors=True)
            os.makedirs(sub)
            try:
                res[vfs] = SCENARIOS[name](os.path.join(sub, "x.db"), vfs)
            except Exception as e:  # noqa
                res[vfs] = [("exception", repr(e))]
        same = res["unix"] == res["waldio"]
        print(f"{'SAME' if same else 'DIFF'} {name}")
        if not same:
            bad += 1
            for i, (a, b) in enumerate(zip(res["unix"], res["waldio"])):
                mark = "  " if a == b else "!!"
                print(f"  {mark} {i}: unix={a}  waldio={b}")
            if len(res["unix"]) != len(res["waldio"]):
                print("  lengths", len(res["unix"]), len(res["waldio"]))
    return bad


if __name__ == "__main__":
        sys.exit(main())
