#!/usr/bin/python3
"""What waldio's wal-index check reads in a plain single-process run.

waldio_index_reads.py [LIB [DIR]]  -- LIB: the joj extension (default
target/ext/release/libjoj); DIR: a scratch directory (default: a new temporary one).
3,000 inserts (SQLite's auto-checkpoints restart the log), wal_checkpoint(TRUNCATE), 100 more,
close; prints waldio's counters. docs/formats/waldio.md, "A wal-index a SQLite without waldio
built", cites it for the reads the check costs. Needs a Python whose sqlite3 loads extensions
(Debian's /usr/bin/python3).
"""
import json, sqlite3, sys, tempfile

lib = sys.argv[1] if len(sys.argv) > 1 else "target/ext/release/libjoj"
d = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="waldio-reads-")
m = sqlite3.connect(":memory:")
m.enable_load_extension(True)
m.load_extension(lib)
c = sqlite3.connect(f"file:{d}/r.db?vfs=waldio", uri=True, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
for i in range(3000):
    c.execute("INSERT INTO t VALUES(?, randomblob(300))", (i,))
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
for i in range(3000, 3100):
    c.execute("INSERT INTO t VALUES(?, randomblob(300))", (i,))
c.close()
s = json.loads(m.execute("SELECT waldio_state()").fetchone()[0])["counters"]
keys = ("commits", "direct_writes", "direct_read_bytes", "read_calls", "wal_syncs", "header_writes")
print({k: s[k] for k in keys}, "foreign_wal_indexes:", s.get("foreign_wal_indexes"))
