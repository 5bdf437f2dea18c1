"""Nanoseconds per call of single system calls, as a traced program makes them: one JSON line
appended to OUT (run.sh). `getppid` and `stat` are calls joj does not trace; `fcntl` is traced
on entry for the descriptor-copying commands only (F_GETFL is filtered out in the kernel);
`pwrite` on entry and exit; `open_close` by the BPF observer and the tracepoints;
`write_fdatasync` a 4 KiB overwrite and its sync; `journal_cycle` what a DELETE-mode commit
does to its journal: create, write 4 KiB, sync, close, unlink."""
import fcntl, json, os, sys, time

out = sys.argv[1]
res = {}
blk = b"y" * 4096


def timed(name, n, f):
    a = time.perf_counter_ns()
    f(n)
    res[name] = (time.perf_counter_ns() - a) / n


fd = os.open("m.dat", os.O_RDWR | os.O_CREAT, 0o644)


def getppid(n):
    for _ in range(n):
        os.getppid()


def stat(n):
    for _ in range(n):
        os.stat("m.dat")


def fcntl_getfl(n):
    for _ in range(n):
        fcntl.fcntl(fd, fcntl.F_GETFL)


def pwrite(n):
    for _ in range(n):
        os.pwrite(fd, b"x" * 100, 0)


def open_close(n):
    for _ in range(n):
        os.close(os.open("m.dat", os.O_RDONLY))


def write_fdatasync(n):
    for i in range(n):
        os.pwrite(fd, blk, 4096 * (i % 64))
        os.fdatasync(fd)


def journal_cycle(n):
    for _ in range(n):
        j = os.open("m.dat-journal", os.O_RDWR | os.O_CREAT, 0o644)
        os.pwrite(j, blk, 0)
        os.fdatasync(j)
        os.close(j)
        os.unlink("m.dat-journal")


timed("getppid", 200000, getppid)
timed("stat", 100000, stat)
timed("fcntl_getfl", 200000, fcntl_getfl)
timed("pwrite", 100000, pwrite)
timed("open_close", 50000, open_close)
timed("write_fdatasync", 2000, write_fdatasync)
timed("journal_cycle", 2000, journal_cycle)
with open(out, "a") as f:
    f.write(json.dumps(res) + "\n")
