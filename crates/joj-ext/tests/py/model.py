"""Model test: the same random SQL on a database on SQLite's default VFS (the model) and on one
through waldio gives the same results — random transactions (committed or rolled back),
checkpoints of every kind, and reopenings, all decided by one seed.

usage: model.py LIBJOJ DIR SEED STEPS      exits 1 on the first difference, printing it
"""
import os
import random
import sqlite3
import sys

lib, directory, seed, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(lib)
model_path = os.path.join(directory, "model.db")
waldio_path = os.path.join(directory, "waldio.db")


def open_model():
    c = sqlite3.connect(model_path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    return c


def open_waldio():
    c = sqlite3.connect(f"file:{waldio_path}?vfs=waldio", uri=True, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    return c


conns = [open_model(), open_waldio()]
for c in conns:
    c.execute("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
    c.execute("CREATE INDEX kv_n ON kv(n)")


def both(sql, args=()):
    out = []
    for c in conns:
        try:
            out.append(("ok", c.execute(sql, args).fetchall()))
        except sqlite3.Error as e:
            out.append(("error", type(e).__name__))
    if out[0] != out[1]:
        print(f"step {step}: {sql} {args}\n  model:  {out[0]}\n  waldio: {out[1]}")
        sys.exit(1)
    return out[0]


def statement():
    k = rng.randrange(2000)
    kind = rng.randrange(10)
    if kind < 4:
        return "INSERT OR REPLACE INTO kv VALUES(?, ?, ?)", (k, "x" * rng.randrange(1, 3000), rng.randrange(100))
    if kind < 6:
        return "UPDATE kv SET v = v || ?, n = n + 1 WHERE k BETWEEN ? AND ?", ("y" * rng.randrange(1, 500), k, k + rng.randrange(50))
    if kind < 8:
        return "DELETE FROM kv WHERE k BETWEEN ? AND ?", (k, k + rng.randrange(20))
    return "SELECT count(*), sum(length(v)), sum(n) FROM kv WHERE n < ?", (rng.randrange(100),)


for step in range(steps):
    action = rng.randrange(20)
    if action < 14:
        both("BEGIN")
        for _ in range(rng.randrange(1, 8)):
            both(*statement())
        both("COMMIT" if rng.randrange(5) else "ROLLBACK")
    elif action < 16:
        mode = rng.choice(["PASSIVE", "FULL", "RESTART", "TRUNCATE"])
        for c in conns:
            c.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
    elif action < 18:
        for c in conns:
            c.close()
        conns = [open_model(), open_waldio()]
    else:
        both("SELECT k, length(v), n FROM kv ORDER BY k")
both("SELECT k, v, n FROM kv ORDER BY k")
both("PRAGMA integrity_check")
print(f"{steps} steps, same results")
