"""1,000 single-row transactions in journal mode MODE, timed per commit; one JSON line of
figures is appended to OUT (run.sh): wall time, the medians and sums of the transactions'
bodies (BEGIN, INSERT) and commits, and the process's CPU time and context switches."""
import json, resource, sqlite3, sys, time

mode, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
db = sqlite3.connect("app.db", isolation_level=None)
db.execute(f"PRAGMA journal_mode={mode}")
db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)")
body, commit = [], []
for i in range(1000):
    a = time.perf_counter()
    db.execute("BEGIN")
    db.execute("INSERT INTO t(v) VALUES (?)", (f"row {i}",))
    b = time.perf_counter()
    db.execute("COMMIT")
    c = time.perf_counter()
    body.append(b - a)
    commit.append(c - b)
t1 = time.perf_counter()
r = resource.getrusage(resource.RUSAGE_SELF)
body.sort()
commit.sort()
with open(out, "a") as f:
    f.write(json.dumps({
        "total_ms": (t1 - t0) * 1e3,
        "body_p50_us": body[500] * 1e6,
        "commit_p50_us": commit[500] * 1e6,
        "body_sum_ms": sum(body) * 1e3,
        "commit_sum_ms": sum(commit) * 1e3,
        "cpu_ms": (r.ru_utime + r.ru_stime) * 1e3,
        "sys_ms": r.ru_stime * 1e3,
        "nvcsw": r.ru_nvcsw,
        "nivcsw": r.ru_nivcsw,
    }) + "\n")
