#!/usr/bin/python3
"""Mutate every field of a short joj-trace file and give each variant to joj's trace readers.

usage: trace_fuzz.py JOJ WORKDIR TRACE.jsonl [RECORDS]

The first RECORDS (default 40) records of TRACE are kept (the header's count adjusted). For
the header's fields and those of records 0, 1 and 4, each variant replaces one value with a
hostile one; it is given to `trace show`, `trace plot`, `replay` (back to back, with
--honor-timestamps, --emmc-journal, --partitions) and `report` of nothing but... (not here).
Printed: exits other than 0/1/2, panics, > 8 s, > 1 GB, a terminal escape on stdout/stderr.
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
    18446744073709551615, 18446744073709551616, 9223372036854775808, 4611686018427387904,
    4294967296, 4294967295, -1, 0, 1, 0.5, 1e308, "x", "\u001b[2Jevil\u202e", "", None, True,
    {}, [], "read", "write", "flush", "discard", "9:9",
]


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run1(args):
    t = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "timeout", "20"] + args,
                       capture_output=True, text=True, errors="replace", preexec_fn=limit)
    dt = time.time() - t
    lines = r.stderr.strip().splitlines()
    kb = int(lines[-1]) if lines and lines[-1].isdigit() else -1
    return r.returncode, dt, kb, "\n".join(lines[:-1]), r.stdout


def run(joj, work, name, header, recs):
    src = os.path.join(work, name + ".jsonl")
    with open(src, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    svg = os.path.join(work, name + ".svg")
    res = []
    for label, args in (
        ("show", [joj, "trace", "show", src]),
        ("plot", [joj, "trace", "plot", src, "-o", svg, "--force"]),
        ("replay", [joj, "replay", src, "--json"]),
        ("replay-ts", [joj, "replay", src, "--honor-timestamps", "--json"]),
        ("replay-ej", [joj, "replay", src, "--emmc-journal", "--json"]),
        ("replay-part", [joj, "replay", src, "--partitions", "--json"]),
    ):
        res.append((label, run1(args)))
    if os.path.exists(svg):
        os.unlink(svg)
    return res, src


def main():
    joj, work, trace = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    os.makedirs(work, exist_ok=True)
    lines = open(trace).read().splitlines()
    header = json.loads(lines[0])
    recs = [json.loads(l) for l in lines[1:n + 1]]
    header["records"] = len(recs)
    # a second device, so that --partitions has two.
    header["devices"].append({"dev": "7:1", "role": "journal", "name": "/dev/loop1"})
    for r in recs[1::3]:
        r["dev"] = "7:1"
    jobs = []
    for k in header:
        for j, v in enumerate(VALUES):
            h = copy.deepcopy(header)
            h[k] = v
            jobs.append((f"header.{k}", j, h, recs))
    for d in range(2):
        for k in header["devices"][d]:
            for j, v in enumerate(VALUES):
                h = copy.deepcopy(header)
                h["devices"][d][k] = v
                jobs.append((f"header.devices[{d}].{k}", j, h, recs))
    for i in (0, 1, 4):
        for k in recs[i]:
            for j, v in enumerate(VALUES):
                rs = copy.deepcopy(recs)
                rs[i][k] = v
                jobs.append((f"rec{i}.{k}", j, header, rs))
    print(len(jobs), "variants", flush=True)
    with cf.ThreadPoolExecutor(2) as ex:
        futs = {ex.submit(run, joj, work, f"t{m}", h, rs): (what, j) for m, (what, j, h, rs) in enumerate(jobs)}
        for fu in cf.as_completed(futs):
            what, j = futs[fu]
            res, src = fu.result()
            keep = False
            for label, (rc, dt, kb, err, out) in res:
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
                    print(what, "=", repr(VALUES[j]), label, why, "|", err[-300:].replace("\n", " "), "|", src, flush=True)
            if not keep:
                os.unlink(src)
    print("done")


main()
