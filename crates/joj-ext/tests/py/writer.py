"""Insert rows 1, 2, 3, ... into a waldio database, one transaction each, printing each row's
number once its commit returned (an acknowledged commit). Runs until killed.

usage: writer.py LIBJOJ DB PARAMS    (PARAMS: waldio URI parameters, e.g. waldio_sync=full)
"""
import sqlite3
import sys

lib, db, params = sys.argv[1:4]
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(lib)
conn = sqlite3.connect(f"file:{db}?vfs=waldio&{params}", uri=True,
                       isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE IF NOT EXISTS t(i INTEGER PRIMARY KEY, pad BLOB)")
i = conn.execute("SELECT coalesce(max(i), 0) FROM t").fetchone()[0]
print("ready", flush=True)
while True:
    i += 1
    conn.execute("INSERT INTO t VALUES(?, randomblob(200))", (i,))
    print(i, flush=True)
