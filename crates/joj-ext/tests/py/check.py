"""Open a database through waldio and print, as JSON, its row count, largest row number and
PRAGMA integrity_check.

usage: check.py LIBJOJ DB
"""
import json
import sqlite3
import sys

lib, db = sys.argv[1:3]
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(lib)
conn = sqlite3.connect(f"file:{db}?vfs=waldio", uri=True, isolation_level=None)
count, top = conn.execute("SELECT count(*), coalesce(max(i), 0) FROM t").fetchone()
integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
print(json.dumps({"count": count, "max": top, "integrity": integrity}))
