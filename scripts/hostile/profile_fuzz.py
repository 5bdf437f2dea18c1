#!/usr/bin/python3
"""Mutate every value of a device profile and run it through joj's profile readers.

usage: profile_fuzz.py JOJ WORKDIR TRACE PROFILE.json [PROFILE.json ...]

Each variant is given to `joj device run --requests 300 --raw-gib 1 --precondition 50%` and to
`joj replay TRACE --honor-timestamps` (20 s each, 4 GiB address space); printed are variants
that exit other than 0/1/2, panic, take > 8 s or > 1 GB, or print a terminal escape.
"""
import concurrent.futures as cf
import copy
import json
import os
import resource
import subprocess
import sys
import time

VALUES = [
    18446744073709551615, 9223372036854775808, 4294967296, 4294967295, 2147483648,
    -1, 0, 1, 3, 0.5, 1e308, -1e308, 5e-324, 1e-300,
    "x", "", None, True, {}, [],
]


def paths(v, p=()):
    yield p
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, p + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:1]):
            yield from paths(x, p + (i,))


def put(doc, p, val):
    d = copy.deepcopy(doc)
    cur = d
    for k in p[:-1]:
        cur = cur[k]
    cur[p[-1]] = val
    return d


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run1(args):
    t = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "timeout", "20"] + args,
                       capture_output=True, text=True, preexec_fn=limit)
    dt = time.time() - t
    lines = r.stderr.strip().splitlines()
    kb = int(lines[-1]) if lines and lines[-1].isdigit() else -1
    return r.returncode, dt, kb, "\n".join(lines[:-1]), r.stdout


def run(joj, work, trace, name, doc):
    src = os.path.join(work, name + ".json")
    with open(src, "w") as f:
        json.dump(doc, f)
    res = []
    for args in (
        [joj, "device", "run", "--device", src, "--requests", "300", "--raw-gib", "1",
         "--precondition", "50%", "--json"],
        [joj, "replay", trace, "--device", src, "--honor-timestamps", "--json"],
    ):
        res.append((args[1], run1(args)))
    return res, src


def main():
    joj, work, trace = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    jobs = []
    for path in sys.argv[4:]:
        doc = json.load(open(path))
        base = os.path.basename(path)[:-5]
        for p in paths(doc):
            if not p:
                continue
            for j, val in enumerate(VALUES):
                jobs.append((base, p, j, put(doc, p, val)))
    print(len(jobs), "variants", flush=True)
    with cf.ThreadPoolExecutor(2) as ex:
        futs = {ex.submit(run, joj, work, trace, f"p{n}", d): (b, p, j) for n, (b, p, j, d) in enumerate(jobs)}
        for fu in cf.as_completed(futs):
            b, p, j = futs[fu]
            res, src = fu.result()
            keep = False
            for cmd, (rc, dt, kb, err, out) in res:
                why = []
                if rc not in (0, 1, 2):
                    why.append(f"rc={rc}")
                if "panicked" in err:
                    why.append("panic")
                if dt > 8:
                    why.append(f"{dt:.1f}s")
                if kb > 1_000_000:
                    why.append(f"{kb}KB")
                if "\x1b" in err or "\x1b" in out:
                    why.append("escape")
                if why:
                    keep = True
                    print(b, "/".join(map(str, p)), "=", repr(VALUES[j]), cmd, why, "|",
                          err[-300:].replace("\n", " "), "|", src, flush=True)
            if not keep:
                os.unlink(src)
    print("done")


main()
