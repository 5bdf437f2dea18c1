"""One process, two connections on one database at once: S through stock SQLite's unix VFS, W
through waldio — mixed.py's case inside one process, where the two share the unix VFS's count
of the process's locks and the `-shm` wal-index. S reads first (it has the database open in WAL
mode), then W; S commits one update of t1, W three of t2, S one more; S closes, then W. Then
the database is read back with waldio and with stock SQLite, whichever opens it. Prints JSON as
mixed.py does.

usage: mixed_one_process.py LIBJOJ DIR
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mixed import connect, load, make_database, read_back  # noqa: E402


def run(conn, sql):
    try:
        return ("ok", conn.execute(sql).fetchall())
    except sqlite3.Error as e:
        return ("err", str(e))


def main():
    lib, d = sys.argv[1:3]
    db = os.path.join(d, "m.db")
    load(lib)
    make_database(db)
    s, w = connect(db, "unix"), connect(db, "waldio")
    run(s, "SELECT sum(v) FROM t1")
    run(w, "SELECT sum(v) FROM t2")
    acked_s = run(s, "UPDATE t1 SET v = v + 1")[0] == "ok"
    acked_w = sum(run(w, "UPDATE t2 SET v = v + 1")[0] == "ok" for _ in range(3))
    acked_s += run(s, "UPDATE t1 SET v = v + 1")[0] == "ok"
    state = run(w, "SELECT waldio_state()")
    last_error = json.loads(state[1][0][0]).get("last_error") if state[0] == "ok" else None
    s.close()
    w.close()
    out = read_back(lib, db)
    out.update({"acked_stock": acked_s, "acked_other": acked_w, "last_error": last_error})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
