"""SQLite's contract under several processes and connections, one scenario at a time, through a
VFS of the extension or stock `unix`: the Rust tests run every scenario on `unix` and on each
of joj's VFSs and compare what this prints (one JSON object per scenario).

usage: contract.py SCENARIO LIBJOJ VFS DIR
       contract.py worker LIBJOJ         (a process the scenarios drive over stdin/stdout)

A scenario drives worker processes in lock step: each step is one call in one process, and the
next starts only after it answered, so the outcome does not depend on timing. A worker answers
every call with {"ok": true, "rows": [...]} or {"ok": false, "error": "..."}.
"""
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys


# ---------------------------------------------------------------- the worker process

def load(lib):
    loader = sqlite3.connect(":memory:")
    loader.enable_load_extension(True)
    loader.load_extension(lib)
    return loader


def worker(lib):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    loader = load(lib)
    conns = {}
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        try:
            if op == "open":
                conns[req["c"]] = sqlite3.connect(
                    req["uri"], uri=True, isolation_level=None,
                    timeout=req.get("timeout", 0), check_same_thread=False)
                out = []
            elif op == "exec":
                cur = conns[req["c"]].execute(req["sql"], req.get("args", []))
                out = [list(r) for r in cur.fetchall()]
            elif op == "loader":
                out = [list(r) for r in loader.execute(req["sql"]).fetchall()]
            elif op == "close":
                conns.pop(req["c"]).close()
                out = []
            elif op == "fsize":
                limit = req["bytes"]
                if limit is None:
                    limit = resource.RLIM_INFINITY
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
                out = []
            elif op == "shutdown":
                # What an application does around sqlite3_shutdown(): every connection closed,
                # SQLite shut down and initialised again, the extension loaded again.
                for c in list(conns.values()):
                    c.close()
                conns.clear()
                loader.close()
                import ctypes
                so = ctypes.CDLL("libsqlite3.so.0")
                rc = so.sqlite3_shutdown()
                rc2 = so.sqlite3_initialize()
                loader = load(lib)
                out = [[rc, rc2]]
            elif op == "exit":
                print(json.dumps({"ok": True, "rows": []}), flush=True)
                return
            else:
                raise ValueError(op)
            res = {"ok": True, "rows": out}
        except Exception as e:  # every SQLite error is an answer, not a crash
            res = {"ok": False, "error": str(e)}
        print(json.dumps(res, default=lambda b: b.hex() if isinstance(b, bytes) else str(b)),
              flush=True)


# ---------------------------------------------------------------- driving workers

class Proc:
    def __init__(self, lib, cwd):
        self.p = subprocess.Popen([sys.executable, __file__, "worker", lib], cwd=cwd,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def call(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker died on {req}")
        return json.loads(line)

    def open(self, c, uri, timeout=0):
        return self.call(op="open", c=c, uri=uri, timeout=timeout)

    def sql(self, c, sql, args=()):
        return self.call(op="exec", c=c, sql=sql, args=list(args))

    def close(self, c):
        return self.call(op="close", c=c)

    def end(self):
        self.call(op="exit")
        self.p.wait(timeout=30)


def brief(r):
    """What the comparison keeps of an answer: success and rows, or the error's text."""
    return r["rows"] if r["ok"] else "error: " + r["error"]


def uri(name, vfs, extra=""):
    q = [] if vfs == "default" else [f"vfs={vfs}"]
    if extra:
        q.append(extra)
    return f"file:{name}" + ("?" + "&".join(q) if q else "")


def final_rows(lib, vfs, db, table="t"):
    p = Proc(lib, os.getcwd())
    p.open("f", uri(db, vfs))
    out = {
        "rows": brief(p.sql("f", f"SELECT who, count(*) FROM {table} GROUP BY who ORDER BY who")),
        "integrity": brief(p.sql("f", "PRAGMA integrity_check")),
    }
    p.end()
    return out


# ---------------------------------------------------------------- the scenarios

def rollback_lock_survives_a_second_connection(lib, vfs):
    """Issue 31.1: A holds RESERVED in rollback mode and opens a second connection; B in
    another process must still get "database is locked", and A's commit must stand."""
    a, b = Proc(lib, "."), Proc(lib, ".")
    a.open("a1", uri("t.db", vfs))
    a.sql("a1", "PRAGMA journal_mode=DELETE")
    a.sql("a1", "CREATE TABLE t(who, v)")
    a.sql("a1", "BEGIN IMMEDIATE")
    for i in range(200):
        a.sql("a1", "INSERT INTO t VALUES('A', ?)", [i])
    a.open("a2", uri("t.db", vfs))
    a.sql("a2", "SELECT 1")  # the second connection reads the schema (needs no lock change)
    b.open("b", uri("t.db", "unix"))
    b_begin = brief(b.sql("b", "BEGIN IMMEDIATE"))
    if b_begin == []:
        for i in range(200):
            b.sql("b", "INSERT INTO t VALUES('B', ?)", [i])
        b_commit = brief(b.sql("b", "COMMIT"))
    else:
        b_commit = "not reached"
    a_commit = brief(a.sql("a1", "COMMIT"))
    a.end()
    b.end()
    return {"b_begin": b_begin, "b_commit": b_commit, "a_commit": a_commit,
            **final_rows(lib, vfs, "t.db")}


def wal_shared_lock_survives_a_second_connection(lib, vfs):
    """Issue 31.1 in WAL mode: B holds the database open (a SHARED lock on it) and opens a
    second connection; A must not get the exclusive lock for locking_mode=exclusive + a write,
    nor leave WAL mode."""
    a, b = Proc(lib, "."), Proc(lib, ".")
    b.open("b1", uri("w.db", vfs))
    b.sql("b1", "PRAGMA journal_mode=WAL")
    b.sql("b1", "CREATE TABLE t(who, v)")
    b.sql("b1", "INSERT INTO t VALUES('B', 1)")
    b.open("b2", uri("w.db", vfs))
    b.sql("b2", "SELECT count(*) FROM t")
    a.open("a", uri("w.db", vfs))
    a.sql("a", "PRAGMA locking_mode=EXCLUSIVE")
    exclusive_write = brief(a.sql("a", "INSERT INTO t VALUES('A', 1)"))
    a.close("a")
    a.open("a", uri("w.db", vfs))
    leave_wal = brief(a.sql("a", "PRAGMA journal_mode=DELETE"))
    a.end()
    b.end()
    return {"exclusive_write": exclusive_write, "leave_wal": leave_wal}


def open_while_another_holds_exclusive(lib, vfs):
    """Issue 31.2: a connection may be opened while another holds BEGIN EXCLUSIVE (rollback
    mode), with a busy timeout; the open does not wait and does not fail."""
    a, b = Proc(lib, "."), Proc(lib, ".")
    a.open("a", uri("x.db", vfs))
    a.sql("a", "PRAGMA journal_mode=DELETE")
    a.sql("a", "CREATE TABLE t(who, v)")
    a.sql("a", "INSERT INTO t VALUES('A', 1)")
    a.sql("a", "BEGIN EXCLUSIVE")
    a.sql("a", "INSERT INTO t VALUES('A', 2)")
    opened = brief(b.open("b", uri("x.db", vfs), timeout=0.2))
    read = brief(b.sql("b", "SELECT count(*) FROM t")) if opened == [] else "not reached"
    a.sql("a", "COMMIT")
    after = brief(b.sql("b", "SELECT count(*) FROM t")) if opened == [] else "not reached"
    a.end()
    b.end()
    return {"opened": opened, "read_while_locked": read, "read_after": after}


def open_a_damaged_database(lib, vfs):
    """Issue 31.2: a database with garbage at offset 100 opens (to be examined or recovered)."""
    p = Proc(lib, ".")
    p.open("s", uri("bad.db", "unix"))
    p.sql("s", "CREATE TABLE t(x)")
    p.sql("s", "INSERT INTO t VALUES(1)")
    p.close("s")
    with open("bad.db", "r+b") as f:
        f.seek(100)
        f.write(b"\xde\xad\xbe\xef")
    opened = brief(p.open("d", uri("bad.db", vfs)))
    page_size = brief(p.sql("d", "PRAGMA page_size")) if opened == [] else "not reached"
    p.end()
    return {"opened": opened, "page_size": page_size}


def open_leaves_a_hot_journal_alone(lib, vfs):
    """Issue 31.2: opening a connection touches no file: a hot journal is still there after the
    open; the first read rolls it back, as stock SQLite does, and sees every committed row."""
    w = Proc(lib, ".")
    w.open("w", uri("hot.db", "unix"))
    w.sql("w", "PRAGMA journal_mode=DELETE")
    w.sql("w", "PRAGMA cache_size=2")
    w.sql("w", "CREATE TABLE t(who, v)")
    for i in range(64):
        w.sql("w", "INSERT INTO t VALUES('C', zeroblob(500))")
    w.sql("w", "BEGIN")
    w.sql("w", "UPDATE t SET v = zeroblob(900)")  # spills: the database file is changed
    journal_before = os.path.exists("hot.db-journal")
    w.p.kill()  # dies with the transaction open: a hot journal
    w.p.wait()
    r = Proc(lib, ".")
    r.open("r", uri("hot.db", vfs))
    after_open = os.path.exists("hot.db-journal")
    rows = brief(r.sql("r", "SELECT who, count(*), max(length(v)) FROM t GROUP BY who"))
    r.end()
    return {"journal_before": journal_before, "journal_after_open": after_open, "rows": rows,
            **final_rows(lib, vfs, "hot.db")}


def open_creates_no_shm(lib, vfs):
    """Issue 31.2: an open creates no -shm, so locking_mode=exclusive can still choose heap
    memory for the wal-index; PRAGMA encoding with a bad value is an error right after open."""
    p = Proc(lib, ".")
    p.open("a", uri("s.db", vfs))
    p.sql("a", "PRAGMA journal_mode=WAL")
    p.sql("a", "CREATE TABLE t(who, v)")
    p.sql("a", "INSERT INTO t VALUES('S', 1)")
    p.close("a")
    shm_after_close = os.path.exists("s.db-shm")
    p.open("b", uri("s.db", vfs))
    shm_after_open = os.path.exists("s.db-shm")
    p.sql("b", "PRAGMA locking_mode=EXCLUSIVE")
    rows = brief(p.sql("b", "SELECT count(*) FROM t"))
    shm_in_exclusive = os.path.exists("s.db-shm")
    p.close("b")
    p.open("e", uri("e.db", vfs))
    encoding = brief(p.sql("e", "PRAGMA encoding='bogus'"))
    p.end()
    return {"shm_after_close": shm_after_close, "shm_after_open": shm_after_open,
            "rows": rows, "shm_in_exclusive": shm_in_exclusive, "bad_encoding": encoding}


def three_process_readers(lib, vfs):
    """Issue 31.3: P3 opened the WAL while it was logically empty; P1 then starts a new WAL;
    P3's next read of a frame must see it (not a short read)."""
    p1, p2, p3 = Proc(lib, "."), Proc(lib, "."), Proc(lib, ".")
    p1.open("c", uri("r.db", vfs))
    p1.sql("c", "PRAGMA page_size=4096")
    p1.sql("c", "PRAGMA journal_mode=WAL")
    p1.sql("c", "CREATE TABLE t1(x)")
    for _ in range(3):
        p1.sql("c", "INSERT INTO t1 VALUES(zeroblob(1200))")
    p1.sql("c", "PRAGMA wal_checkpoint(TRUNCATE)")
    p2.open("c", uri("r.db", vfs))
    p2.sql("c", "BEGIN")
    a = brief(p2.sql("c", "SELECT count(*) FROM t1"))
    p3.open("c", uri("r.db", vfs))
    b = brief(p3.sql("c", "SELECT count(*) FROM t1"))
    p1.sql("c", "INSERT INTO t1 VALUES(zeroblob(1200))")
    p3.sql("c", "BEGIN")
    c = brief(p3.sql("c", "SELECT count(*), sum(length(x)) FROM t1"))
    p3.sql("c", "COMMIT")
    p2.sql("c", "COMMIT")
    for p in (p1, p2, p3):
        p.end()
    return {"p2": a, "p3_before": b, "p3_after": c}


def rolled_back_spill_is_not_written_later(lib, vfs):
    """A transaction that spilled frames into the WAL and rolled back leaves nothing that a
    later write of this process puts over another process's committed frames."""
    p1, p2 = Proc(lib, "."), Proc(lib, ".")
    p1.open("c", uri("sp.db", vfs))
    p1.sql("c", "PRAGMA journal_mode=WAL")
    p1.sql("c", "CREATE TABLE t(who, v)")
    p1.sql("c", "INSERT INTO t VALUES('base', zeroblob(100))")
    p1.sql("c", "PRAGMA cache_size=2")
    p1.sql("c", "BEGIN")
    for i in range(40):
        p1.sql("c", "INSERT INTO t VALUES('spill', zeroblob(3000))")
    p1.sql("c", "ROLLBACK")
    p2.open("c", uri("sp.db", vfs))
    for i in range(30):
        p2.sql("c", "INSERT INTO t VALUES('P2', zeroblob(2000))")
    p1.sql("c", "INSERT INTO t VALUES('P1', 1)")
    seen_by_p1 = brief(p1.sql("c", "SELECT who, count(*) FROM t GROUP BY who ORDER BY who"))
    p1.end()
    p2.end()
    return {"seen_by_p1": seen_by_p1, **final_rows(lib, vfs, "sp.db")}


def shutdown_and_reload(lib, vfs):
    """Issue 31.4: sqlite3_shutdown(), sqlite3_initialize(), the extension loaded again: a new
    WAL database works."""
    p = Proc(lib, ".")
    p.open("a", uri("before.db", vfs))
    p.sql("a", "CREATE TABLE t(who, v)")
    p.close("a")
    codes = brief(p.call(op="shutdown"))
    p.open("b", uri("after.db", vfs))
    mode = brief(p.sql("b", "PRAGMA journal_mode=WAL"))
    p.sql("b", "CREATE TABLE t(who, v)")
    ins = brief(p.sql("b", "INSERT INTO t VALUES('after', 1)"))
    p.end()
    return {"codes": codes, "mode": mode, "insert": ins, **final_rows(lib, vfs, "after.db")}


def attached_database_in_wal_mode(lib, vfs):
    """Issue 31.4: a database created through ATTACH on the VFS can go to WAL mode and be
    written."""
    p = Proc(lib, ".")
    p.open("m", uri("main.db", vfs))
    p.sql("m", "CREATE TABLE t(who, v)")
    att = brief(p.sql("m", f"ATTACH '{uri('aux.db', vfs)}' AS two"))
    mode = brief(p.sql("m", "PRAGMA two.journal_mode=WAL"))
    p.sql("m", "CREATE TABLE two.t(who, v)")
    ins = brief(p.sql("m", "INSERT INTO two.t VALUES('aux', 1)"))
    p.end()
    return {"attach": att, "mode": mode, "insert": ins, **final_rows(lib, vfs, "aux.db")}


def load_twice_inside_a_statement(lib, vfs):
    """Issue 31.4: loading the extension again from SQL (a statement running) is no error."""
    p = Proc(lib, ".")
    again = brief(p.call(op="loader", sql=f"SELECT load_extension('{lib}') IS NULL"))
    p.open("a", uri("l.db", vfs))
    version = brief(p.sql("a", "SELECT length(joj_version()) > 0"))
    p.end()
    return {"again": again, "version": version}


def passing_io_error(lib, vfs):
    """Issue 31.5: an insert that fails for a file-size limit, then succeeds once the limit is
    lifted, in rollback and in WAL mode."""
    out = {}
    for mode in ("DELETE", "WAL"):
        p = Proc(lib, ".")
        db = f"io-{mode.lower()}.db"
        p.open("a", uri(db, vfs))
        p.sql("a", f"PRAGMA journal_mode={mode}")
        p.sql("a", "CREATE TABLE t(who, v)")
        p.sql("a", "INSERT INTO t VALUES('first', 1)")
        size = os.path.getsize(db)
        p.call(op="fsize", bytes=size + 8192)
        big = brief(p.sql("a", "INSERT INTO t VALUES('big', zeroblob(1000000))"))
        p.call(op="fsize", bytes=None)
        after = brief(p.sql("a", "INSERT INTO t VALUES('after', 1)"))
        read = brief(p.sql("a", "SELECT who FROM t ORDER BY rowid"))
        p.end()
        out[mode] = {"big": "failed" if isinstance(big, str) else big, "after": after,
                     "read": read}
    return out


def mmap_on_a_temp_database(lib, vfs):
    """Issue 31.5: memory-mapped I/O passes through for temporary databases."""
    p = Proc(lib, ".")
    p.open("t", uri("", vfs))
    # A temporary database is held in memory until it outgrows its cache; then it has a file.
    p.sql("t", "PRAGMA cache_size=5")
    p.sql("t", "CREATE TABLE t(x)")
    for _ in range(200):
        p.sql("t", "INSERT INTO t VALUES(zeroblob(3000))")
    mm = brief(p.sql("t", "PRAGMA mmap_size=512000"))
    p.end()
    return {"mmap": mm}


def open_while_the_file_is_replaced(lib, vfs):
    """An open succeeds while another process replaces the database by rename (a common way
    to ship new data) or unlinks it: stock always opens. (joj's VFS checked the descriptor it
    wraps against the path, which a replacement in between made differ: SQLITE_CANTOPEN.)"""
    loader = load(lib)
    src = os.path.abspath("src.db")
    db = os.path.abspath("db")
    c = sqlite3.connect(src)
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    out = {}
    for mode, extra in [("rename", "mode=ro"), ("unlink", "")]:
        churn = subprocess.Popen([sys.executable, "-c", f"""
import os, shutil
for i in range(1000000):
    if {mode!r} == "rename":
        shutil.copy({src!r}, "tmp%d" % (i % 2)); os.rename("tmp%d" % (i % 2), {db!r})
    else:
        try: os.unlink({db!r})
        except FileNotFoundError: pass
"""])
        if mode == "rename":
            while not os.path.exists(db):
                pass
        failed = {}
        for _ in range(1500):
            try:
                c = sqlite3.connect(uri(db, vfs, extra), uri=True)
                c.execute("SELECT count(*) FROM sqlite_master").fetchone()
                c.close()
            except sqlite3.Error as e:
                failed[str(e)] = failed.get(str(e), 0) + 1
        churn.kill()
        churn.wait()
        out[mode] = failed
    loader.close()
    return out


SCENARIOS = {f.__name__: f for f in [
    rollback_lock_survives_a_second_connection,
    wal_shared_lock_survives_a_second_connection,
    open_while_another_holds_exclusive,
    open_a_damaged_database,
    open_leaves_a_hot_journal_alone,
    open_creates_no_shm,
    three_process_readers,
    rolled_back_spill_is_not_written_later,
    shutdown_and_reload,
    attached_database_in_wal_mode,
    load_twice_inside_a_statement,
    passing_io_error,
    mmap_on_a_temp_database,
    open_while_the_file_is_replaced,
]}


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(sys.argv[2])
    else:
        name, lib, vfs, where = sys.argv[1:5]
        os.chdir(where)
        print(json.dumps(SCENARIOS[name](lib, vfs), sort_keys=True))
