#!/usr/bin/python3
"""A hostile joj-trace file for `joj trace plot` (robustness H109).

plot_regrid.py N OUT  -- N records, spread round-robin over the nine lanes of the trace picture
(seven write classes, reads, discards). Per lane, each record's time or first sector lies one
bin below the first bin of that lane's density grid (GRID_COLUMNS x GRID_ROWS, joj_trace
plot::bins), as a model of `Cuts::with` here predicts, so that the grid's start moves down by
one bin on (almost) every record while its width stays put. Times go down as well as up: the
format does not require them in order.
"""
import sys

N, OUT = int(sys.argv[1]), sys.argv[2]
NX, NY = 1024, 512
TOP = (1 << 64) - 1 - 64  # the highest key: room for a request's sectors above it


def shr(k, s):
    return k >> s if s < 64 else 0


class Cuts:
    """A copy of joj_trace::plot::bins::Cuts (start, shift over n bins, keys lo..hi)."""

    def __init__(self, key, n):
        self.start, self.shift, self.n, self.lo, self.hi = key, 0, n, key, key

    def fits(self, shift, start, hi):
        return shr(hi, shift) - shr(start, shift) < self.n

    def add(self, key):
        """Returns 'same', 'moved' (start down, width kept) or 'widened'."""
        lo, hi = min(self.lo, key), max(self.hi, key)
        if lo >= self.start and self.fits(self.shift, self.start, hi):
            self.lo, self.hi = lo, hi
            return "same"
        shift = self.shift
        while not self.fits(shift, lo, hi):
            shift += 1
        start = (shr(lo, shift) << shift) if shift < 64 else 0
        what = "moved" if shift == self.shift else "widened"
        self.start, self.shift, self.lo, self.hi = start, shift, lo, hi
        return what

    def below(self):
        """The key one bin below the first bin, or None when there is none."""
        w = 1 << self.shift
        return self.start - w if self.start >= w else None


# (op, class, file) of each lane: the seven write series, then reads and discards.
LANES = [
    ("write", "fs_journal", None),
    ("write", "data", "wal"),
    ("write", "data", "rollback_journal"),
    ("write", "data", "database"),
    ("write", "data", "other"),
    ("write", "metadata", None),
    ("write", "unknown", None),
    ("read", "data", "database"),
    ("discard", "unknown", None),
]

state = [None] * len(LANES)  # per lane: (x cuts, y cuts, last x, last y, records)
moved = widened = 0
with open(OUT, "w", buffering=1 << 20) as f:
    f.write('{"format":"joj-trace","version":1,"records":%d,"clock":"relative","devices":'
            '[{"dev":"7:0","role":"main","name":"/dev/loop0"}],"source":"tracefs"}\n' % N)
    for i in range(N):
        lane = i % len(LANES)
        op, cls, file = LANES[lane]
        s = state[lane]
        if s is None:
            t, sec = TOP, TOP
            state[lane] = s = [Cuts(t, NX), Cuts(sec, NY), t, sec, 0]
        else:
            cx, cy, t, sec, k = s
            # Move the axis with more bins of room left below it, y one record in three.
            bx, by = cx.below(), cy.below()
            if by is not None and (k % 3 == 2 or bx is None):
                sec = by
            elif bx is not None:
                t = bx
            r = (cx.add(t), cy.add(sec))
            moved += "moved" in r and "widened" not in r
            widened += "widened" in r
            s[2], s[3] = t, sec
        s[4] += 1
        fl = f',"file":"{file}"' if file else ""
        f.write(f'{{"time_ns":{t},"dev":"7:0","op":"{op}","preflush":false,"fua":false,'
                f'"sync":true,"meta":false,"sector":{sec},"sectors":1,"comm":"x",'
                f'"class":"{cls}"{fl}}}\n')
print(f"{N} records: {moved} move a grid's start down a bin, {widened} widen it",
      file=sys.stderr)
