#!/usr/bin/python3
"""Mutate every value of saved result documents and give each variant to `joj report`.

usage: report_fuzz.py JOJ WORKDIR DOC.json [DOC.json ...]

For every node of each document, a variant replaces it with a hostile value (huge, negative,
fractional numbers, markup and terminal escapes, deep nesting, wrong types). Each variant is
reported alone (`joj report V.json -o V.html --force`, 20 s, 2 GiB address space); printed are
variants that exit other than 0/1, panic, take > 5 s or > 300 MB, put raw markup into the page,
or show NaN/inf where the original page did not.
"""
import concurrent.futures as cf
import copy
import json
import os
import re
import resource
import subprocess
import sys
import time

MARK = "<xss-mark onerror=alert(1)>\u001b[2J\u202e"
DEEP = json.loads("[" * 120 + "]" * 120)
VALUES = [
    18446744073709551615,
    18446744073709551616,
    9223372036854775808,
    -9223372036854775808,
    -1,
    0,
    0.5,
    1e308,
    -1e308,
    5e-324,
    MARK,
    "",
    None,
    True,
    {},
    [],
    DEEP,
]


def paths(v, p=()):
    yield p
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, p + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:3]):
            yield from paths(x, p + (i,))


def put(doc, p, val):
    d = copy.deepcopy(doc)
    if not p:
        return val
    cur = d
    for k in p[:-1]:
        cur = cur[k]
    cur[p[-1]] = val
    return d


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(joj, work, name, doc):
    src = os.path.join(work, name + ".json")
    out = os.path.join(work, name + ".html")
    with open(src, "w") as f:
        json.dump(doc, f)
    t = time.time()
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "timeout", "20", joj, "report", src, "-o", out, "--force"],
        capture_output=True, text=True, preexec_fn=limit,
    )
    dt = time.time() - t
    lines = r.stderr.strip().splitlines()
    kb = int(lines[-1]) if lines and lines[-1].isdigit() else -1
    html = open(out, errors="replace").read() if os.path.exists(out) else ""
    return r.returncode, dt, kb, "\n".join(lines[:-1]), html, src


def main():
    joj, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    jobs = []
    for docpath in sys.argv[3:]:
        doc = json.load(open(docpath))
        base = os.path.basename(docpath)[:-5]
        rc, _, _, _, basehtml, _ = run(joj, work, base + "-orig", doc)
        naninf = len(re.findall(r"\bNaN\b|\binf\b", basehtml))
        for i, p in enumerate(paths(doc)):
            for j, val in enumerate(VALUES):
                jobs.append((base, naninf, p, j, put(doc, p, val)))
    print(len(jobs), "variants", flush=True)
    bad = 0
    with cf.ThreadPoolExecutor(2) as ex:
        futs = {ex.submit(run, joj, work, f"v{n}", d): (b, ni, p, j) for n, (b, ni, p, j, d) in enumerate(jobs)}
        for fu in cf.as_completed(futs):
            b, ni, p, j = futs[fu]
            rc, dt, kb, err, html, src = fu.result()
            why = []
            if rc not in (0, 1):
                why.append(f"rc={rc}")
            if "panicked" in err:
                why.append("panic")
            if dt > 5:
                why.append(f"{dt:.1f}s")
            if kb > 300_000:
                why.append(f"{kb}KB")
            if "<xss-mark" in html:
                why.append("raw markup")
            if "\u001b" in err:
                why.append("escape char")
            if len(re.findall(r"\bNaN\b|\binf\b", html)) > ni:
                why.append("NaN/inf shown")
            if why:
                bad += 1
                print(b, "/".join(map(str, p)), "value#", j, why, "|", err[:300].replace("\n", " "), "|", src, flush=True)
            else:
                os.unlink(src)
                if os.path.exists(src[:-5] + ".html"):
                    os.unlink(src[:-5] + ".html")
    print("bad", bad)


main()
