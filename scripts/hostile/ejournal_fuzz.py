#!/usr/bin/python3
"""Random classified traces for the optimized journal and the other replays.

usage: ejournal_fuzz.py JOJ WORKDIR COUNT [SEED]

Each trace is 20-400 records of one or two devices: writes of the classes data, fs_journal,
metadata, journal-region-like sectors, with random fua/preflush/sync flags, flushes,
discards, reads, issue times that go back now and then, completions before issues, sectors
near the device's end (emmc5: 15679632 sectors) and zero-length requests. Each is replayed
with --emmc-journal (plain, --honor-timestamps, --journal-region-mib 1, --partitions),
plain, and with --completion poll; `trace show` and `trace plot` read it too. Printed:
exits other than 0/1/2, panics, > 8 s, > 1 GB.
"""
import json
import os
import random
import resource
import subprocess
import sys
import time

END = 15679632  # emmc5's sectors, about (8027971584 / 512)
CLASSES = ["data", "fs_journal", "fs_journal", "metadata", "metadata", "unknown"]


def rec(rnd, t, dev):
    op = rnd.choices(["write", "read", "flush", "discard"], [70, 10, 12, 8])[0]
    far = [END - 8, END - 1, END, rnd.randrange(0, END)] if rnd.random() < 0.03 else []
    sector = rnd.choice([0, 8, 64, 5000, 5008, 5016, 1, 7, rnd.randrange(0, 20000) * 8,
                         rnd.randrange(0, 200000)] + far)
    sectors = rnd.choice([1, 8, 8, 8, 8, 8, 16, 24, 256, 2048, 131072] + [0, 131073] * (rnd.random() < 0.05))
    if op == "flush":
        sectors = 0
    r = {
        "time_ns": t,
        "dev": dev,
        "op": op,
        "preflush": rnd.random() < 0.15,
        "fua": rnd.random() < 0.15,
        "sync": rnd.random() < 0.6,
        "meta": rnd.random() < 0.2,
        "sector": sector,
        "sectors": sectors,
        "comm": rnd.choice(["jbd2/loop0-8", "python3", "kworker"]),
        "class": rnd.choice(CLASSES) if op == "write" else ("flush" if op == "flush" else rnd.choice(CLASSES)),
    }
    if r["class"] == "data" and rnd.random() < 0.7:
        r["file"] = rnd.choice(["wal", "database", "rollback_journal", "other"])
    if rnd.random() < 0.8:
        r["complete_ns"] = max(0, t + rnd.choice([0, 10, 1000, 10**5, 10**6, 10**9] + [-1000] * (rnd.random() < 0.05)))
    return r


def make(rnd, path):
    n = rnd.randint(20, 400)
    devs = ["7:0"] if rnd.random() < 0.6 else ["7:0", "7:1"]
    t = 0
    recs = []
    for _ in range(n):
        t = max(0, t + rnd.choice([0, 1, 100, 10000, 10000, 10**6, -500]))
        recs.append(rec(rnd, t, rnd.choice(devs)))
    header = {"format": "joj-trace", "version": 1, "records": n, "clock": "relative",
              "devices": [{"dev": d, "role": ["main", "journal"][i], "name": f"/dev/loop{i}"}
                          for i, d in enumerate(devs)],
              "source": "tracefs", "meta": {}}
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return devs


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run1(args):
    t = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "timeout", "20"] + args,
                       capture_output=True, text=True, errors="replace", preexec_fn=limit)
    dt = time.time() - t
    lines = r.stderr.strip().splitlines()
    kb = int(lines[-1]) if lines and lines[-1].isdigit() else -1
    return r.returncode, dt, kb, " ".join(lines[:-1])


def main():
    joj, work, count = sys.argv[1:4]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    os.makedirs(work, exist_ok=True)
    from collections import Counter
    seen = Counter()
    for i in range(int(count)):
        rnd = random.Random(seed * 1000003 + i)
        path = os.path.join(work, f"e{seed}-{i}.jsonl")
        devs = make(rnd, path)
        dev = ["--dev", "7:0"] if len(devs) > 1 else []
        svg = path + ".svg"
        keep = False
        for label, args in (
            ("ej", [joj, "replay", path, "--emmc-journal", "--json"] + dev),
            ("ej-ts", [joj, "replay", path, "--emmc-journal", "--honor-timestamps", "--json"] + dev),
            ("ej-1mib", [joj, "replay", path, "--emmc-journal", "--journal-region-mib", "1", "--json"] + dev),
            ("ej-part", [joj, "replay", path, "--emmc-journal", "--partitions", "--json"]),
            ("plain", [joj, "replay", path, "--json"] + dev),
            ("poll", [joj, "replay", path, "--completion", "poll", "--json"] + dev),
            ("part", [joj, "replay", path, "--partitions", "--json"]),
            ("show", [joj, "trace", "show", path]),
            ("plot", [joj, "trace", "plot", path, "-o", svg, "--force"]),
        ):
            rc, dt, kb, err = run1(args)
            seen[(label, rc, err[:60])] += 1
            why = []
            if rc not in (0, 1, 2):
                why.append(f"rc={rc}")
            if "panicked" in err:
                why.append("panic")
            if dt > 8:
                why.append(f"{dt:.1f}s")
            if kb > 1_000_000:
                why.append(f"{kb}KB")
            if why:
                keep = True
                print(path, label, why, err[-400:], flush=True)
        if os.path.exists(svg):
            os.unlink(svg)
        if not keep:
            os.unlink(path)
    for k, v in seen.most_common(40):
        print(v, k)
    print("done")


main()
