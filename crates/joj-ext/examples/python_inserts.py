"""1000 WAL inserts from Python, one transaction each, through the joj extension's VFS named on
the command line: `joj` (SQLite's own WAL layout, counted) or `waldio`. To see the journaling of
journal of each (the command runs in a directory of a scratch ext4 joj makes):

  joj trace --fs ext4 -- /usr/bin/python3 "$PWD/crates/joj-ext/examples/python_inserts.py" \
      joj "$PWD/target/ext/release/libjoj"
  joj trace --fs ext4 -- /usr/bin/python3 "$PWD/crates/joj-ext/examples/python_inserts.py" \
      waldio "$PWD/target/ext/release/libjoj"
"""
import sqlite3
import sys

vfs, lib = sys.argv[1], sys.argv[2]
loader = sqlite3.connect(":memory:")
loader.enable_load_extension(True)
loader.load_extension(lib)
c = sqlite3.connect(f"file:x.db?vfs={vfs}", uri=True, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA synchronous=FULL")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
for i in range(1000):
    c.execute("INSERT INTO t(v) VALUES (randomblob(100))")
print(c.execute("SELECT joj_counters()").fetchone()[0] if vfs == "joj" else
      c.execute("SELECT waldio_state()").fetchone()[0])
