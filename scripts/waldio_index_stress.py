#!/usr/bin/python3
"""Six waldio processes inserting and reading one database at once, one of them often running
wal_checkpoint(TRUNCATE), so that new logs start often (a new log's first commit is where a
wal-index and its log differ for a moment). Every acknowledged insert must be there at the end.

waldio_index_stress.py [LIB [DIR]]  -- as waldio_index_reads.py. Prints the acknowledged
inserts, those missing (0 expected), statements that failed, and integrity_check; exit 1 if
one is missing or the check fails. docs/formats/waldio.md cites it.
"""
import multiprocessing as mp, os, random, sqlite3, sys, tempfile

lib = sys.argv[1] if len(sys.argv) > 1 else "target/ext/release/libjoj"
d = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="waldio-stress-")
db = os.path.join(d, "s.db")


def conn():
    m = sqlite3.connect(":memory:")
    m.enable_load_extension(True)
    m.load_extension(lib)
    return sqlite3.connect(f"file:{db}?vfs=waldio", uri=True, isolation_level=None, timeout=30)


def work(i, n, q):
    c = conn()
    rnd = random.Random(i)
    acked, errs = [], 0
    for k in range(n):
        try:
            r = rnd.random()
            if r < 0.5:
                c.execute("INSERT INTO t VALUES(?, ?)", (i * 1000000 + k, "x" * rnd.randrange(10, 3000)))
                acked.append(i * 1000000 + k)
            elif r < 0.9 and not (i == 0 and r > 0.6):
                c.execute("SELECT count(*), max(id) FROM t").fetchone()
            elif i == 0:
                c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as e:
            errs += 1
            print("err", i, e, flush=True)
    c.close()
    q.put((acked, errs))


if __name__ == "__main__":
    c = conn()
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
    c.close()
    q = mp.Queue()
    ps = [mp.Process(target=work, args=(i, 800, q)) for i in range(6)]
    for p in ps:
        p.start()
    res = [q.get() for _ in ps]
    for p in ps:
        p.join()
    acked = set(x for a, _ in res for x in a)
    errs = sum(e for _, e in res)
    c = conn()
    have = set(r[0] for r in c.execute("SELECT id FROM t"))
    check = c.execute("PRAGMA integrity_check").fetchone()[0]
    print("acked", len(acked), "missing", len(acked - have), "errors", errs, check)
    sys.exit(0 if not acked - have and check == "ok" else 1)
