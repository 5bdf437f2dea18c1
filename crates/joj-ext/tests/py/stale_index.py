"""A killed waldio writer's database (commits in DB-waldio, none in DB), a stock WAL header
without frames at DB-wal, and a stock connection (no extension) that opens the database, is
refused and stays open: before refusing, it rebuilt the shared wal-index in DB-shm from its own
empty -wal. Then a waldio connection reads and inserts; the stock connection closes first, so
that the waldio connection is the last, whose close checkpoints the log. Prints JSON: what the
stock connection and the waldio connection saw.

usage: stale_index.py LIBJOJ DB same|noshm|other
  same   the stock connection in this process (the waldio connection's)
  noshm  the same, with DB-shm removed before the stock connection opens
  other  the stock connection in another process
"""
import json
import os
import sqlite3
import subprocess
import sys


def stock_count(conn):
    try:
        return conn.execute("SELECT count(*) FROM t").fetchone()[0]
    except sqlite3.Error as e:
        return f"error: {e}"


if sys.argv[1] == "--stock-holder":
    conn = sqlite3.connect(sys.argv[2], isolation_level=None)
    print(json.dumps(stock_count(conn)), flush=True)
    sys.stdin.readline()
    conn.close()
    sys.exit(0)

lib, db, variant = sys.argv[1:4]
with open(db + "-wal", "wb") as f:
    f.write((0x377F0682).to_bytes(4, "big") + (3007000).to_bytes(4, "big") + bytes(24))
if variant == "noshm":
    os.unlink(db + "-shm")
holder = stock = None
if variant == "other":
    holder = subprocess.Popen([sys.executable, __file__, "--stock-holder", db],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stock_saw = json.loads(holder.stdout.readline())
else:
    stock = sqlite3.connect(db, isolation_level=None)
    stock_saw = stock_count(stock)

loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(lib)
conn = sqlite3.connect(f"file:{db}?vfs=waldio", uri=True, isolation_level=None, timeout=10)
try:
    waldio_saw = conn.execute("SELECT count(*) FROM t").fetchone()[0]
    conn.execute("INSERT INTO t VALUES(1000000, NULL)")
except sqlite3.Error as e:
    waldio_saw = f"error: {e}"
if stock is not None:
    stock.close()
if holder is not None:
    holder.stdin.write("end\n")
    holder.stdin.flush()
    holder.wait()
conn.close()
print(json.dumps({"stock": stock_saw, "waldio": waldio_saw}))
